import CZXingShim
import ImageDecoding

/// zxing-cpp through the C shim: PDF417 (which ZBar cannot read) and a second opinion when ZBar finds nothing.
/// zxing-cpp's reader keeps no state, so this is safe from any thread.
enum ZXingReader {
    struct Failure: Error {
        var message: String
    }

    /// zxing-cpp's reader options, by name.
    struct Effort: Sendable {
        var tryHarder = false
        var tryRotate = false
        var tryInvert = false
        var tryDownscale = true
    }

    static func read(_ image: GrayImage, formats: Set<BarcodeFormat>, effort: Effort) throws(Failure) -> [Barcode] {
        let mask = formats.reduce(Int32(0)) { $0 | bit($1) }
        guard mask != 0, image.width > 0, image.height > 0 else { return [] }
        var options = vp_zx_options(formats: mask, try_harder: effort.tryHarder ? 1 : 0, try_rotate: effort.tryRotate ? 1 : 0,
                                    try_invert: effort.tryInvert ? 1 : 0, try_downscale: effort.tryDownscale ? 1 : 0,
                                    return_errors: 0)
        var results = vp_zx_results()
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { text in
                vp_zx_read(pixels.baseAddress, Int32(image.width), Int32(image.height), &options,
                           &results, text.baseAddress, text.count)
            }
        }
        defer { vp_zx_results_free(&results) }
        guard status == 0 else {
            throw Failure(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return (0..<results.count).compactMap { index -> Barcode? in
            let item = results.items[index]
            guard item.valid != 0, let format = BarcodeFormat.allCases.first(where: { bit($0) == item.format }) else { return nil }
            let bytes = UnsafeBufferPointer(start: item.bytes, count: item.length)
            let text = UnsafeRawBufferPointer(start: item.text, count: item.text_length)
            return Barcode(format: format, bytes: bytes, decodedText: String(decoding: text, as: UTF8.self))
        }
    }

    private static func bit(_ format: BarcodeFormat) -> Int32 {
        switch format {
        case .qrCode: Int32(VP_ZX_QR_CODE)
        case .pdf417: Int32(VP_ZX_PDF417)
        case .code128: Int32(VP_ZX_CODE_128)
        case .code39: Int32(VP_ZX_CODE_39)
        case .ean13: Int32(VP_ZX_EAN_13)
        case .dataMatrix: Int32(VP_ZX_DATA_MATRIX)
        }
    }
}
