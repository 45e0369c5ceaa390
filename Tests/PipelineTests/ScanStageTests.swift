import BarcodeScanning
import Foundation
import ImageDecoding
import Protect
import Testing
import VerifyModel

@testable import Pipeline

@Suite("Scan stage: one pass over a folder's QR image")
struct ScanStageTests {
    static let configuration = BarcodeScanner.Configuration(symbologies: [.qrCode, .pdf417], decoder: .init(maxPixels: 100_000_000))

    /// The sample licence back carrying the transaction's QR and the PDF417, decoded as the decode stage does, named
    /// by a path that does not exist: a document that tried to read that image itself would fail.
    static func licenceBack(group: String, path: String) throws -> DecodedDocument {
        let bytes = try [UInt8](Data(contentsOf: DecodeStageTests.samples.appendingPathComponent("03-qr-on-back/back.png")))
        let firstPass = try ImageDecoder(configuration: configuration.decoder).decode(bytes, targetPixels: configuration.firstPassPixels)
        var job = DocumentJob(sequence: 1, source: group, type: .governmentId, identity: .qrImage(group: group, candidates: [path]))
        job.images = [.back: .file(path)]
        return DecodedDocument(job: job, images: [.back: DecodedImage(bytes: bytes, firstPass: firstPass)], capture: CaptureInfo())
    }

    static func selfie(group: String, path: String) -> DecodedDocument {
        DecodedDocument(
            job: DocumentJob(sequence: 2, source: group, type: .selfie, identity: .qrImage(group: group, candidates: [path])),
            images: [:], capture: CaptureInfo())
    }

    @Test("the licence's pass over its back answers the folder: its selfie takes the transaction without reading any image")
    func sharedPass() async throws {
        let path = "/nonexistent-\(UUID())/back.png"
        let resolver = QRResolver(), scanners = ScannerPool(count: 1, configuration: Self.configuration)
        let stage = ScanStage(symbologies: [.qrCode, .pdf417], resolver: resolver, scanners: scanners)
        let licence = try await stage(try Self.licenceBack(group: "03", path: path))
        #expect(licence.transaction.id == "txn-batch-003")
        #expect(licence.backBarcodes?.contains { $0.format == .pdf417 } == true)
        #expect(resolver.answersHeld == 1)
        let selfie = try await stage(Self.selfie(group: "03", path: path))
        #expect(selfie.transaction.id == "txn-batch-003")
    }

    @Test("a licence whose folder's QR another document has read already takes that answer")
    func answeredBefore() async throws {
        let path = "/nonexistent-\(UUID())/back.png"
        let resolver = QRResolver()
        let qr = try VerificationQR(parsing: "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=txn-other&code=C1")
        _ = try await resolver.claim("03")
        resolver.fulfill("03", with: .success(qr))
        let scanners = ScannerPool(count: 1, configuration: Self.configuration)
        let stage = ScanStage(symbologies: [.qrCode, .pdf417], resolver: resolver, scanners: scanners)
        let licence = try await stage(try Self.licenceBack(group: "03", path: path))
        #expect(licence.transaction.id == "txn-other")
        #expect(licence.backBarcodes?.contains { $0.format == .pdf417 } == true)
    }

    @Test(
        "a selfie that asks first reads the back once: the licence takes that reading, PDF417 included, for the same bytes only",
        arguments: [true, false])
    func selfieFirst(sameBytes: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scan-stage-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("back.png").path
        try FileManager.default.copyItem(
            at: DecodeStageTests.samples.appendingPathComponent("03-qr-on-back/back.png"), to: URL(fileURLWithPath: path))
        let resolver = QRResolver(), scanners = ScannerPool(count: 1, configuration: Self.configuration)
        let stage = ScanStage(symbologies: [.qrCode, .pdf417], resolver: resolver, scanners: scanners)
        let selfie = try await stage(Self.selfie(group: "03", path: path))
        #expect(selfie.transaction.id == "txn-batch-003")
        // The licence's decode is replaced by a blank page: had it scanned, it would have found no PDF417. With other
        // bytes than the selfie read (the file replaced in between), it must scan them.
        var licence = try Self.licenceBack(group: "03", path: path)
        let blank = try GrayImage(width: 64, height: 64, pixels: [UInt8](repeating: 255, count: 64 * 64))
        let bytes = sameBytes ? licence.images[.back]!.bytes : [0xFF, 0xD8, 0xFF]
        licence.images[.back] = DecodedImage(bytes: bytes, firstPass: blank)
        let scanned = try await stage(licence)
        #expect(scanned.transaction.id == "txn-batch-003")
        let hasLicenceData = scanned.backBarcodes?.contains { $0.format == .pdf417 && $0.text.hasPrefix("@") } == true
        #expect(hasLicenceData == sameBytes)
        #expect(resolver.takeBarcodes(readFrom: path, bytes: bytes, in: "03") == nil, "given once")
    }

    @Test(
        "a document waiting for its folder's QR holds no scanner: with one scanner, another folder's licence is scanned meanwhile",
        .timeLimit(.minutes(5)))
    func waitingHoldsNoScanner() async throws {
        let resolver = QRResolver(), scanners = ScannerPool(count: 1, configuration: Self.configuration)
        let stage = ScanStage(symbologies: [.qrCode, .pdf417], resolver: resolver, scanners: scanners)
        #expect(try await resolver.claim("waiting") == nil, "this test reads the folder's QR: the selfie must wait")
        let selfie = Task { try await stage(Self.selfie(group: "waiting", path: "/nonexistent-\(UUID())/back.png")) }
        await eventually { resolver.waiting(for: "waiting") == 1 }
        // Had the waiting selfie kept the only scanner, this would never finish (the time limit fails the test).
        let licence = try await stage(try Self.licenceBack(group: "03", path: "/nonexistent-\(UUID())/back.png"))
        #expect(licence.transaction.id == "txn-batch-003")
        #expect(licence.backBarcodes?.contains { $0.format == .pdf417 } == true)
        let qr = try VerificationQR(parsing: "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=txn-waited&code=C1")
        resolver.fulfill("waiting", with: .success(qr))
        #expect(try await selfie.value.transaction.id == "txn-waited")
    }
}
