/// Symbologies the scanner knows, spelled as in SPEC §6 results.
public enum BarcodeFormat: String, Codable, Sendable, CaseIterable {
    case qrCode = "QR_CODE"
    case pdf417 = "PDF417"
    case code128 = "CODE_128"
    case code39 = "CODE_39"
    case ean13 = "EAN_13"
    case dataMatrix = "DATA_MATRIX"
    /// The machine-readable zone of a passport or ID card, read by OCR (`MRZImageReader`): its lines, joined by
    /// newlines. Looked for only when asked: barcode-only scans stay fast.
    case mrz = "MRZ"

    /// Whether ZBar can read it; PDF417 and Data Matrix need zxing-cpp.
    var isReadableByZBar: Bool {
        switch self {
        case .qrCode, .code128, .code39, .ean13: true
        case .pdf417, .dataMatrix, .mrz: false
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

    /// Raw payload bytes whose charset the decoder did not report (ZBar's): see `PayloadText`.
    init(format: BarcodeFormat, bytes: some Collection<UInt8>) {
        self.init(format: format, text: PayloadText.text(bytes))
    }

    /// zxing-cpp's reading, which follows the symbol's ECI designators and modes (QR Kanji, Hanzi). ASCII payloads
    /// keep their bytes exactly (verification URLs, AAMVA records with their control characters).
    init(format: BarcodeFormat, bytes: some Collection<UInt8>, decodedText: String) {
        self.init(format: format, text: bytes.allSatisfy { $0 < 0x80 } ? String(decoding: Array(bytes), as: UTF8.self) : decodedText)
    }
}
