import VerifyModel

/// Symbologies the scanner knows, spelled as in CONTRACT §6 results.
package enum BarcodeFormat: String, Codable, Sendable, CaseIterable {
    case qrCode = "QR_CODE"
    case pdf417 = "PDF417"
    case code128 = "CODE_128"
    case code39 = "CODE_39"
    case ean13 = "EAN_13"
    case dataMatrix = "DATA_MATRIX"
    /// The machine-readable zone of a passport or ID card, read by OCR (MRZReading's `MRZImageReader`, which the
    /// scanner does not call: the scan stage and the `scan` command do): its lines, joined by newlines.
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
package struct Barcode: Codable, Hashable, Sendable {
    package var format: BarcodeFormat
    package var text: String
    /// For an MRZ read from an image: how surely each field was read, what was mended, which state codes are
    /// not listed; so that a caller can route the document to review.
    package var mrz: MRZReport?
    /// For a PDF417 holding licence data read only after repairing it: the repairs' codes (`headerRecovered`,
    /// `separatorsRestored`), so that a caller can route the licence to review.
    package var aamvaRepairs: [AAMVARepair]?

    package init(format: BarcodeFormat, text: String) {
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

/// What `scan --json` says of an MRZ reading besides its text (contract §4): per field, the weakest character's
/// template score and lead over the runner-up; the look-alikes changed to satisfy check digits; unknown state codes;
/// the pass of the reading ladder that read it.
package struct MRZReport: Codable, Hashable, Sendable {
    package var format: String
    package var confidence: [String: MRZ.FieldConfidence]
    package var repairs: [String]
    package var unknownStates: [String]
    package var pass: String?
    /// The rule of ICAO 9303 the print itself breaks (a birth date no calendar has): the MRZ as printed, not accepted.
    package var misprint: UnreadableCode?

    package init(
        format: MRZ.Format, confidence: [String: MRZ.FieldConfidence], repairs: [String], unknownStates: [String], pass: String? = nil,
        misprint: UnreadableCode? = nil
    ) {
        self.pass = pass
        self.misprint = misprint
        self.format = format.rawValue
        self.confidence = confidence.mapValues {
            // Two decimals: enough to route on, and the same bytes on every machine.
            MRZ.FieldConfidence(score: ($0.score * 100).rounded() / 100, margin: ($0.margin * 100).rounded() / 100)
        }
        self.repairs = repairs
        self.unknownStates = unknownStates
    }
}
