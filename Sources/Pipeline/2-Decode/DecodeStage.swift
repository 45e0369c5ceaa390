import BarcodeScanning
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
}

/// Reads each image and decodes it at the scanner's first-pass size: a corrupt image fails here.
struct DecodeStage: Sendable {
    let scanner: BarcodeScanner.Configuration

    func callAsFunction(_ job: DocumentJob) throws(DocumentFailure) -> DecodedDocument {
        let decoder = ImageDecoder(configuration: scanner.decoder)
        var document = DecodedDocument(job: job, images: [:], capture: CaptureInfo())
        for (role, source) in job.images.sorted(by: { $0.key < $1.key }) {
            let bytes: [UInt8]
            switch source {
            case .inline(let data):
                bytes = data
            case .file(let path):
                do {
                    bytes = try ImageFile.read(path)
                } catch {
                    throw DocumentFailure(error, context: "\(role.rawValue) image \(path)")
                }
            }
            let image: GrayImage
            do {
                image = try decoder.decode(bytes, targetPixels: scanner.firstPassPixels)
            } catch {
                throw DocumentFailure(error, context: "\(role.rawValue) image")
            }
            document.images[role] = DecodedImage(bytes: bytes, firstPass: image)
            document.capture.imageSizes.append("\(image.sourceWidth)x\(image.sourceHeight)")
            if document.capture.camera == nil { document.capture.camera = CameraInfo(jpeg: bytes) }
        }
        return document
    }
}
