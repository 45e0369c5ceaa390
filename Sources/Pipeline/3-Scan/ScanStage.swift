import BarcodeScanning
import Foundation
import ImageDecoding
import MRZReading
import Protect
import VerifyModel

/// The transaction a document belongs to, once known.
enum TransactionReference: Sendable {
    /// Named by the input; opened at ingest when the input gave its QR as text, else created earlier.
    case named(String)
    /// Read from a QR image: the track stage opens it.
    case read(VerificationQR)

    var id: String {
        switch self {
        case .named(let id): id
        case .read(let qr): qr.transactionId
        }
    }
}

/// The scan stage's value: the document's transaction and the barcodes of its back.
struct ScannedDocument: StageValue {
    var job: DocumentJob
    var transaction: TransactionReference
    /// The images' bytes, as submitted.
    var images: [ImageRole: [UInt8]]
    /// What the back's scan found; nil when the back was not scanned (no back, or PDF417 disabled).
    var backBarcodes: [Barcode]?
    var capture: CaptureInfo

    var transactionId: String? { transaction.id }
    var byteCount: Int { images.values.reduce(job.mrz?.utf8.count ?? 0) { $0 + $1.count } }
}

/// Reads the back's PDF417, the MRZ of a government id given without MRZ text, and finds the document's transaction. Each worker owns its scanner: ZBar's are not
/// thread-safe.
struct ScanStage: Sendable {
    let symbologies: Set<BarcodeFormat>
    let resolver: QRResolver

    /// Throws `.cancelled` when the run is cancelled while waiting for another document's read of the QR: the
    /// document is dropped unrecorded, like any other cut short by cancellation.
    func callAsFunction(_ document: DecodedDocument, with scanner: BarcodeScanner) async throws(StageStop) -> ScannedDocument {
        var job = document.job
        // When the back may also carry the transaction's QR, one pass looks for both.
        var candidateBack: String?
        if case .qrImage(_, let candidates) = job.identity, case .file(let path) = job.images[.back], candidates.contains(path) {
            candidateBack = path
        }
        var backBarcodes: [Barcode]?
        if let back = document.images[.back], symbologies.contains(.pdf417) {
            let wanted: Set<BarcodeFormat> = candidateBack != nil ? [.pdf417, .qrCode] : [.pdf417]
            do {
                backBarcodes = try scanner.scan(back.bytes, firstPass: back.firstPass, expecting: .formats(wanted))
            } catch {
                throw .failed(DocumentFailure(error, context: "back image"))
            }
        }
        // The MRZ is read only where it can be the identity's source: no typed MRZ, and no licence data from the
        // back's PDF417 (a licence back's search for a band it does not carry was a fifth of a run's CPU).
        let licenceBack = backBarcodes?.contains { $0.format == .pdf417 && AAMVARecord.hasHeader($0.text) } ?? false
        if job.type == .governmentId, job.mrz == nil, !licenceBack, let reading = try readMRZ(document, with: scanner) {
            job.mrz = reading.mrz.lines.joined(separator: "\n")
            if !reading.repairs.isEmpty { job.readWarnings = reading.repairs.map { "MRZ \($0)" } }
        }
        let transaction: TransactionReference
        switch job.identity {
        case .qr(let qr):
            transaction = .named(qr.transactionId)
        case .known(let id):
            transaction = .named(id)
        case .qrImage(let group, let candidates):
            let answer: QRResolver.Answer
            do {
                if let known = try await resolver.claim(group) {
                    answer = known
                } else {
                    var scanned: [String: [Barcode]] = [:]
                    if let path = candidateBack, let codes = backBarcodes { scanned[path] = codes }
                    answer = findQR(in: candidates, alreadyScanned: scanned, with: scanner)
                    resolver.fulfill(group, with: answer)
                }
            } catch {
                throw .cancelled
            }
            switch answer {
            case .success(let qr): transaction = .read(qr)
            case .failure(let failure): throw .failed(failure)
            }
        }
        return ScannedDocument(job: job, transaction: transaction, images: document.images.mapValues(\.bytes),
                               backBarcodes: backBarcodes, capture: document.capture)
    }

    /// The MRZ printed on the front (a passport page, a TD2 card) or the back (a TD1 card): from there on its text
    /// is parsed and checked as typed MRZ text is. A band that is found but cannot be read with valid check
    /// digits fails the document; a licence without MRZ has none, and goes on without.
    private func readMRZ(_ document: DecodedDocument, with scanner: BarcodeScanner) throws(StageStop) -> MRZReading? {
        for role in [ImageRole.front, .back] {
            guard let image = document.images[role] else { continue }
            let outcome: MRZImageReader.Outcome
            do {
                outcome = try scanner.readMRZ(image.bytes)
            } catch {
                throw .failed(DocumentFailure(error, context: "\(role.rawValue) image"))
            }
            switch outcome {
            case .read(let reading):
                return reading
            case .unreadable(let error):
                throw .failed(DocumentFailure(error, context: "\(role.rawValue) image: an MRZ is printed but cannot be read"))
            case .notFound:
                continue
            }
        }
        return nil
    }

    /// The first verification QR among `candidates`, in order; `alreadyScanned` holds the codes of images this
    /// document's own scan has read (looking for the QR too), which are not read again.
    private func findQR(in candidates: [String], alreadyScanned: [String: [Barcode]],
                        with scanner: BarcodeScanner) -> QRResolver.Answer {
        var firstError: DocumentFailure?
        for path in candidates {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let codes: [Barcode]
            if let known = alreadyScanned[path] {
                codes = known
            } else {
                let bytes: [UInt8]
                do {
                    bytes = try ImageFile.read(path, resolved: true)
                } catch {
                    firstError = firstError ?? DocumentFailure(.documentCaptureError, "\(name): cannot read the file")
                    continue
                }
                do {
                    codes = try scanner.scan(bytes, expecting: .formats([.qrCode]))
                } catch {
                    firstError = firstError ?? DocumentFailure(error, context: name)
                    continue
                }
            }
            for code in codes where code.format == .qrCode {
                do {
                    return .success(try VerificationQR(parsing: code.text))
                } catch {
                    firstError = firstError ?? DocumentFailure(error, context: "the QR code in \(name)")
                }
            }
        }
        let names = candidates.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", ")
        return .failure(firstError ?? DocumentFailure(.initiateDocumentTransactionError, "no verification QR code found in \(names)"))
    }
}
