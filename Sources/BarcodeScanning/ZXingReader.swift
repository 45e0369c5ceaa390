import CZXingShim
import ImageDecoding

/// zxing-cpp 3.1 through the C shim: the first reader of every image (PDF417, which ZBar cannot read, and QR).
/// zxing-cpp's reader keeps no state, so this is safe from any thread.
enum ZXingReader {
    struct Failure: Error {
        var message: String
    }

    /// zxing-cpp's reader options, by name. `thorough` is zxing-cpp's own default.
    struct Effort: Sendable {
        var tryHarder = true
        var tryRotate = true
        var tryInvert = true
        var tryDownscale = true

        static let thorough = Effort()
    }

    /// A symbol zxing-cpp located: decoded (`barcode`), or found but not decodable.
    struct Symbol {
        var format: BarcodeFormat
        var barcode: Barcode?
        /// The symbol's bounding box in the image's pixels: minimum x and y, maximum x and y.
        var bounds: (minX: Int, minY: Int, maxX: Int, maxY: Int)
    }

    static func read(_ image: GrayImage, formats: Set<BarcodeFormat>, effort: Effort) throws -> [Symbol] {
        let mask = formats.reduce(Int32(0)) { $0 | (bit($1) ?? 0) }
        guard mask != 0, image.width > 0, image.height > 0 else { return [] }
        var options = vp_zx_options(
            formats: mask, try_harder: effort.tryHarder ? 1 : 0, try_rotate: effort.tryRotate ? 1 : 0,
            try_invert: effort.tryInvert ? 1 : 0, try_downscale: effort.tryDownscale ? 1 : 0,
            return_errors: 1)
        var results = vp_zx_results()
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { text in
                vp_zx_read(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), &options,
                    &results, text.baseAddress, text.count)
            }
        }
        defer { vp_zx_results_free(&results) }
        guard status == 0 else {
            throw Failure(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return (0..<results.count).compactMap { index -> Symbol? in
            let item = results.items[index]
            guard let format = BarcodeFormat.allCases.first(where: { bit($0) == item.format }) else { return nil }
            let corners = withUnsafeBytes(of: item.corners) { Array($0.bindMemory(to: Int32.self)) }.map { Int($0) }
            let xs = stride(from: 0, to: 8, by: 2).map { corners[$0] }, ys = stride(from: 1, to: 8, by: 2).map { corners[$0] }
            var barcode: Barcode?
            if item.valid != 0 {
                let bytes = UnsafeBufferPointer(start: item.bytes, count: item.length)
                let text = UnsafeRawBufferPointer(start: item.text, count: item.text_length)
                // A QR code without ECI does not say its charset: zxing-cpp 3.1 takes GB2312 bytes for Shift-JIS.
                // PayloadText tells them apart (QR Kanji and Hanzi mode bytes come as Shift-JIS and GB2312).
                barcode =
                    format == .qrCode && item.has_eci == 0
                    ? Barcode(format: format, bytes: bytes)
                    : Barcode(format: format, bytes: bytes, decodedText: String(decoding: text, as: UTF8.self))
            }
            return Symbol(
                format: format, barcode: barcode,
                bounds: (xs.min() ?? 0, ys.min() ?? 0, xs.max() ?? 0, ys.max() ?? 0))
        }
    }

    private static func bit(_ format: BarcodeFormat) -> Int32? {
        switch format {
        case .qrCode: Int32(VP_ZX_QR_CODE)
        case .pdf417: Int32(VP_ZX_PDF417)
        case .code128: Int32(VP_ZX_CODE_128)
        case .code39: Int32(VP_ZX_CODE_39)
        case .ean13: Int32(VP_ZX_EAN_13)
        case .dataMatrix: Int32(VP_ZX_DATA_MATRIX)
        case .mrz: nil
        }
    }
}
