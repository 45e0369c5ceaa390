import Foundation
import ImageDecoding
import Testing

@testable import BarcodeScanning

enum ScanFixtures {
    static let folder = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")
    /// File name -> the codes it must read as, written by Fixtures/generate.py from its inputs.
    static let expected: [String: [Barcode]] = {
        let data = try! Data(contentsOf: folder.appendingPathComponent("manifest.json"))
        return try! JSONDecoder().decode([String: [Barcode]].self, from: data)
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }
}

@Suite("Barcode scanning ladder")
struct BarcodeScannerTests {
    @Test("reads exactly the expected codes", arguments: ScanFixtures.expected.keys.sorted())
    func readsExpectedCodes(_ name: String) throws {
        let scanner = BarcodeScanner()
        let found = try scanner.scan(try ScanFixtures.bytes(name))
        #expect(Set(found) == Set(ScanFixtures.expected[name]!))
    }

    @Test("climbs to full resolution when the reduced first pass misses fine modules")
    func fullResolutionRung() throws {
        let bytes = try ScanFixtures.bytes("qr-fine-modules.jpg")
        let configuration = BarcodeScanner.Configuration(symbologies: [.qrCode], firstPassPixels: 100_000)
        let reduced = try ImageDecoder().decode(bytes, targetPixels: configuration.firstPassPixels)
        #expect(reduced.width == 400 && reduced.height == 300)
        #expect(ZBarReader(formats: [.qrCode]).read(reduced).isEmpty, "the fixture should need the full-size pass")
        let found = try BarcodeScanner(configuration: configuration).scan(bytes)
        #expect(found == ScanFixtures.expected["qr-fine-modules.jpg"])
    }

    @Test("reads light-on-dark codes through the negative")
    func invertedRung() throws {
        let bytes = try ScanFixtures.bytes("qr-inverted.png")
        let image = try ImageDecoder().decode(bytes)
        #expect(ZBarReader(formats: [.qrCode]).read(image).isEmpty)
        #expect(try BarcodeScanner().scan(bytes) == ScanFixtures.expected["qr-inverted.png"])
    }

    @Test("PDF417 needs zxing-cpp: ZBar alone reads nothing, the scanner reads the AAMVA payload")
    func pdf417ThroughZXing() throws {
        let bytes = try ScanFixtures.bytes("pdf417.jpg")
        let image = try ImageDecoder().decode(bytes)
        #expect(ZBarReader(formats: [.qrCode, .code128]).read(image).isEmpty)
        let found = try BarcodeScanner().scan(bytes)
        #expect(found.first?.format == .pdf417)
        #expect(found.first?.text.hasPrefix("@\n\u{1E}\rANSI 636014") == true)
    }

    @Test("only enabled symbologies are reported")
    func disabledSymbologiesAreIgnored() throws {
        let onlyQR = BarcodeScanner(configuration: .init(symbologies: [.qrCode]))
        #expect(try onlyQR.scan(try ScanFixtures.bytes("pdf417.jpg")).isEmpty)
        let onlyPDF = BarcodeScanner(configuration: .init(symbologies: [.pdf417]))
        #expect(try onlyPDF.scan(try ScanFixtures.bytes("qr.png")).isEmpty)
    }

    @Test("an expectation of formats keeps climbing until each is found")
    func formatExpectation() throws {
        let scanner = BarcodeScanner(configuration: .init(symbologies: [.qrCode, .pdf417]))
        let found = try scanner.scan(try ScanFixtures.bytes("qr-two.png"), expecting: .formats([.qrCode]))
        #expect(found.count == 2)
        #expect(BarcodeScanner.Expectation.formats([.qrCode, .pdf417]).isSatisfied(by: found) == false)
    }

    @Test("undecodable bytes are a documentCaptureError, not a crash or an empty read")
    func corruptImage() throws {
        var bytes = try ScanFixtures.bytes("qr.jpg")
        bytes.removeLast(bytes.count / 2)
        let error = #expect(throws: ImageDecodingError.self) { try BarcodeScanner().scan(bytes) }
        #expect(error?.failureCode == .document(.documentCaptureError))
    }

    @Test("binary payloads that are not UTF-8 are read as ISO-8859-1")
    func latin1Payload() {
        let barcode = Barcode(format: .pdf417, bytes: [0x41, 0xE9, 0x42])
        #expect(barcode.text == "AéB")
        #expect(Barcode(format: .qrCode, bytes: Array("é".utf8)).text == "é")
    }
}

@Suite("Payload bytes to text when the decoder does not say their charset")
struct PayloadTextTests {
    /// The bytes are written out here (Python's codecs made them), the text is what a reader must show.
    @Test(
        "each charset case gives its exact text",
        arguments: [
            ([0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA, 0x83, 0x65, 0x83, 0x4C, 0x83, 0x58, 0x83, 0x67], "日本語テキスト"),  // Shift-JIS
            ([0xD6, 0xD0, 0xCE, 0xC4, 0xCE, 0xC4, 0xB1, 0xBE, 0xB2, 0xE2, 0xCA, 0xD4], "中文文本测试"),  // GB2312
            ([0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65], "café crème"),  // ISO-8859-1
            ([0x47, 0x72, 0xC3, 0xBC, 0xC3, 0x9F, 0x65], "Grüße"),  // UTF-8
            (Array("@\n\u{1e}\rANSI 636014".utf8), "@\n\u{1e}\rANSI 636014"),  // ASCII with controls
            // Half-width katakana from a Japanese phone, whose bytes also pair up as GB2312 (棉晦… before): the voiced
            // marks after the kana that take them say Japanese.
            ([0x2A, 0xC0, 0xDE, 0xCC, 0xDE, 0x51, 0x52, 0x2A], "*ﾀﾞﾌﾞQR*"),  // Shift-JIS
            ([0xB6, 0xDE, 0xB2, 0xC4, 0xDE], "ｶﾞｲﾄﾞ"),  // Shift-JIS
            // Shift-JIS's single bytes 0x5C and 0x7E are ASCII's backslash and tilde, and its double-byte reverse solidus
            // (0x815F) a backslash too, as zxing-cpp gives them (a MEBKM bookmark escapes a URL's colon so).
            ([0xC0, 0xDE, 0x5C, 0x31, 0x30, 0x30], "ﾀﾞ\\100"),  // Shift-JIS
            ([0xC0, 0xDE, 0xCC, 0xDE, 0x7E, 0x81, 0x5F], "ﾀﾞﾌﾞ~\\"),  // Shift-JIS
            (
                Array("MEBKM:TITLE:".utf8) + [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA] + Array(";URL:http\\://example.com;;".utf8),
                "MEBKM:TITLE:日本語;URL:http\\://example.com;;"
            ),  // Shift-JIS
            (Array("C:\\path".utf8), "C:\\path")  // ASCII
        ] as [([UInt8], String)])
    func charset(bytes: [UInt8], text: String) {
        #expect(PayloadText.text(bytes) == text)
    }
}
