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
