import BarcodeScanning
import DocumentOutcomes
import Foundation
import ImageDecoding
import Testing
import VerifyModel

@testable import Pipeline

/// The decode stage on the sample images (Samples/generate.py makes them).
@Suite("Decode stage")
struct DecodeStageTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Samples/batch").standardized

    static func job(_ images: [ImageRole: ImageSource]) -> DocumentJob {
        var job = DocumentJob(sequence: 1, source: "test", type: .governmentId, identity: .known("t-1"))
        job.images = images
        return job
    }

    let stage = DecodeStage(
        scanner: BarcodeScanner.Configuration(symbologies: [.qrCode, .pdf417], decoder: .init(maxPixels: 100_000_000)),
        allowedPaths: FileConfinement(directories: []), workers: 1)

    @Test("every image is decoded once, its bytes kept as they came, its size recorded for Protect")
    func decodes() throws {
        let front = try [UInt8](Data(contentsOf: Self.samples.appendingPathComponent("01-complete/front.jpg")))
        let back = Self.samples.appendingPathComponent("01-complete/back.png").path
        let decoded = try stage(Self.job([.front: .inline(front), .back: .file(back)]))
        #expect(decoded.images[.front]?.bytes == front)
        #expect(decoded.images[.back]?.bytes == (try [UInt8](Data(contentsOf: URL(fileURLWithPath: back)))))
        #expect(decoded.capture.imageSizes.count == 2)
        #expect(decoded.images.values.allSatisfy { !$0.firstPass.pixels.isEmpty })
    }

    @Test("a corrupt image fails the document with documentCaptureError, naming which image")
    func corrupt() throws {
        let corrupt = try [UInt8](Data(contentsOf: Self.samples.appendingPathComponent("05-corrupt-image/front.jpg")))
        do {
            _ = try stage(Self.job([.front: .inline(corrupt)]))
            Issue.record("a corrupt image was decoded")
        } catch let error as DocumentFailure {
            #expect(error.code == .document(.documentCaptureError))
            #expect(error.message.hasPrefix("front image"), "\(error.message)")
        }
    }
}
