import CZBar
import ImageDecoding

/// One ZBar image scanner. ZBar scanners are not thread-safe: each worker owns its own reader.
final class ZBarReader {
    private let scanner: OpaquePointer
    private static let y800 =
        UInt(UInt8(ascii: "Y")) | UInt(UInt8(ascii: "8")) << 8
        | UInt(UInt8(ascii: "0")) << 16 | UInt(UInt8(ascii: "0")) << 24

    /// Enables exactly `formats`: enabling every symbology produces false reads on lines of text.
    init(formats: Set<BarcodeFormat>) {
        scanner = zbar_image_scanner_create()
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for format in formats {
            guard let symbol = Self.symbolType(format) else { continue }
            zbar_image_scanner_set_config(scanner, symbol, ZBAR_CFG_ENABLE, 1)
            // Raw payload bytes, not ZBar's guess at a text encoding.
            zbar_image_scanner_set_config(scanner, symbol, ZBAR_CFG_BINARY, 1)
        }
    }

    deinit {
        zbar_image_scanner_destroy(scanner)
    }

    /// `density` 1 scans every row and column; 2 every other one, for a quicker first look.
    func read(_ image: GrayImage, density: Int32 = 1) -> [Barcode] {
        guard image.width > 0, image.height > 0 else { return [] }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, density)
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, density)
        return image.pixels.withUnsafeBufferPointer { pixels -> [Barcode] in
            // The zbar image borrows the pixels: it must not outlive this closure.
            let zimage = zbar_image_create()!
            defer { zbar_image_destroy(zimage) }
            zbar_image_set_format(zimage, Self.y800)
            zbar_image_set_size(zimage, UInt32(image.width), UInt32(image.height))
            zbar_image_set_data(zimage, pixels.baseAddress, UInt(pixels.count), nil)
            guard zbar_scan_image(scanner, zimage) > 0 else { return [] }
            var found: [Barcode] = []
            var symbol = zbar_image_first_symbol(zimage)
            while let current = symbol {
                if let format = Self.format(zbar_symbol_get_type(current)),
                    let data = zbar_symbol_get_data(current)
                {
                    let length = Int(zbar_symbol_get_data_length(current))
                    let bytes = UnsafeRawBufferPointer(start: data, count: length).bindMemory(to: UInt8.self)
                    found.append(Barcode(format: format, bytes: bytes))
                }
                symbol = zbar_symbol_next(current)
            }
            return found
        }
    }

    private static func symbolType(_ format: BarcodeFormat) -> zbar_symbol_type_t? {
        switch format {
        case .qrCode: ZBAR_QRCODE
        case .code128: ZBAR_CODE128
        case .code39: ZBAR_CODE39
        case .ean13: ZBAR_EAN13
        case .pdf417, .dataMatrix, .mrz: nil
        }
    }

    private static func format(_ type: zbar_symbol_type_t) -> BarcodeFormat? {
        switch type {
        case ZBAR_QRCODE: .qrCode
        case ZBAR_CODE128: .code128
        case ZBAR_CODE39: .code39
        case ZBAR_EAN13: .ean13
        default: nil
        }
    }
}
