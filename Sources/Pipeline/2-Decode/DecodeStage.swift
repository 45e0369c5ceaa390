import BarcodeScanning
import DocumentOutcomes
import Foundation
import ImageDecoding
import Protect
import VerifyModel

/// One image read and decoded: its bytes (submitted as they are) and a grayscale first pass for the scanner.
struct DecodedImage: Sendable {
    var bytes: [UInt8]
    var firstPass: GrayImage
}

/// The decode stage's value: every image of the document decoded once.
struct DecodedDocument: StageValue {
    var job: DocumentJob
    var images: [ImageRole: DecodedImage]
    /// The capturing camera and image sizes, for the Protect device attributes.
    var capture: CaptureInfo

    var transactionId: String? { job.transactionId }
    var byteCount: Int {
        images.values.reduce(job.mrz?.utf8.count ?? 0) { $0 + $1.bytes.count + $1.firstPass.pixels.count }
    }
    var failedInput: FailedInput? { FailedInput(job, images: images.mapValues(\.bytes)) }
}

/// Reads each image and decodes it at the scanner's first-pass size: a corrupt image fails here.
struct DecodeStage: Sendable {
    let scanner: BarcodeScanner.Configuration
    /// Where paths named by stream lines may be read (`--allow-path`, `ingest.allowedPaths`).
    let allowedPaths: FileConfinement
    let workers: Int

    func callAsFunction(_ job: DocumentJob) throws -> DecodedDocument {
        let decoder = ImageDecoder(configuration: scanner.decoder)
        var document = DecodedDocument(job: job, images: [:], capture: CaptureInfo())
        for (role, source) in job.images.sorted(by: { $0.key < $1.key }) {
            let bytes: [UInt8], image: GrayImage
            switch source {
            case .inline(let data):
                bytes = data
            case .file(let path):
                do {
                    bytes = try ImageFile.read(path, resolved: true)
                } catch {
                    throw DocumentFailure(error, context: "\(role.rawValue) image \(URL(fileURLWithPath: path).lastPathComponent)")
                }
            case .named(let path, let key):
                // Missing, unreadable, outside, not a file and not an image all end here alike.
                guard !allowedPaths.roots.isEmpty else {
                    throw DocumentFailure(
                        .documentCaptureError,
                        "'\(key)' names a file, and no directory is allowed: "
                            + "give --allow-path DIR or ingest.allowedPaths, or send the image inline")
                }
                let unusable = DocumentFailure(.documentCaptureError, "'\(key)' does not name a readable image inside the allowed directories")
                guard let resolved = allowedPaths.resolve(path), let read = try? ImageFile.read(resolved, resolved: true),
                    let decoded = try? decoder.decode(read, targetPixels: scanner.firstPassPixels)
                else {
                    throw unusable
                }
                document.add(role, bytes: read, image: decoded)
                continue
            }
            do {
                image = try decoder.decode(bytes, targetPixels: scanner.firstPassPixels)
            } catch {
                throw DocumentFailure(error, context: "\(role.rawValue) image")
            }
            document.add(role, bytes: bytes, image: image)
        }
        return document
    }
}

extension DecodedDocument {
    mutating func add(_ role: ImageRole, bytes: [UInt8], image: GrayImage) {
        images[role] = DecodedImage(bytes: bytes, firstPass: image)
        capture.imageSizes.append("\(image.sourceWidth)x\(image.sourceHeight)")
        if capture.camera == nil { capture.camera = CameraInfo(jpeg: bytes) }
    }
}

extension DecodeStage: PipelineStage {
    var name: String { "decode" }

    func process(_ document: InFlight<DocumentJob>) throws -> StageResult<DecodedDocument> { .next(try self(document.value)) }
}
