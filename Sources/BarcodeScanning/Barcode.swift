/// Symbologies the scanner knows, spelled as in SPEC §6 results.
public enum BarcodeFormat: String, Codable, Sendable, CaseIterable {
    case qrCode = "QR_CODE"
    case pdf417 = "PDF417"
    case code128 = "CODE_128"
    case code39 = "CODE_39"
    case ean13 = "EAN_13"
    case dataMatrix = "DATA_MATRIX"

    /// Whether ZBar can read it; PDF417 and Data Matrix need zxing-cpp.
    var isReadableByZBar: Bool {
        switch self {
        case .qrCode, .code128, .code39, .ean13: true
        case .pdf417, .dataMatrix: false
        }
    }
}

/// One decoded symbol.
public struct Barcode: Codable, Hashable, Sendable {
    public var format: BarcodeFormat
    public var text: String

    public init(format: BarcodeFormat, text: String) {
        self.format = format
        self.text = text
    }

    /// Payloads are raw bytes: UTF-8 when they are valid UTF-8, else ISO-8859-1 (the symbologies' default).
    init(format: BarcodeFormat, bytes: some Collection<UInt8>) {
        let text = String(validating: bytes, as: UTF8.self)
            ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        self.init(format: format, text: text)
    }
}
