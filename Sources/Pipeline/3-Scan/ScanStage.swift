import BarcodeScanning
import DocumentOutcomes
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
    var failedInput: FailedInput? { FailedInput(job, transaction: transaction, images: images) }
}

/// Reads the back's PDF417, the MRZ of a government id given without MRZ text, and finds the document's transaction. Each worker owns its scanner: ZBar's are not
/// thread-safe.
struct ScanStage: Sendable {
    let symbologies: Set<BarcodeFormat>
    let resolver: QRResolver
    /// The scanners bound the stage's CPU work; the stage holds more documents than that (`documentsInStage`).
    let scanners: ScannerPool

    /// Documents the stage takes in at once for `scanners` scanners: a folder's documents wait for the one reading its
    /// QR (a licence back and a selfie: one waits), so the stage holds enough for every scanner to have a document
    /// to scan while others wait.
    static func documentsInStage(scanners: Int) -> Int { 4 * max(1, scanners) }

    /// Throws `CancellationError` when the run is cancelled while waiting for another document's read of the QR or for a
    /// scanner: the document is dropped unrecorded, like any other cut short by cancellation. A scanner is held only
    /// while scanning, never while waiting for another document's answer.
    func callAsFunction(_ document: DecodedDocument) async throws -> ScannedDocument {
        var job = document.job
        // When the back may also carry the transaction's QR, this document reads the folder's QR with the same pass
        // that reads the back's PDF417. It claims the folder's answer before scanning, so that the folder's other
        // documents wait for that pass instead of scanning the same image again (on several cores they reach this
        // stage at the same time); when another document answered first, the back is scanned for PDF417 alone.
        var candidateBack: String?
        var answer: QRResolver.Answer?
        if case .qrImage(let group, let candidates) = job.identity, case .file(let path) = job.images[.back], candidates.contains(path),
            document.images[.back] != nil, symbologies.contains(.pdf417)
        {
            answer = try await claim(group)
            if answer == nil { candidateBack = path }
        }
        // A document with nothing of its own to scan (a selfie) does not wait for a scanner.
        // Fields an operator entered on review stand for what the images hold: they are carried, not read again.
        let scansOwnImages =
            job.reviewed != true
            && (document.images[.back] != nil || (job.type == .governmentId && job.mrz == nil && document.images[.front] != nil))
        let (backBarcodes, read, reading) =
            scansOwnImages
            ? try await scanners.lend { scanner in try scanOwnImages(document, candidateBack: candidateBack, with: scanner) }
            : (nil, nil, nil)
        if let read { answer = read }
        if let reading {
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
            if answer == nil { answer = try await claim(group) }
            if answer == nil {
                answer = try await scanners.lend { scanner in
                    let found = findQR(in: candidates, alreadyScanned: [:], with: scanner, keepingFor: group)
                    resolver.fulfill(group, with: found)
                    return found
                }
            }
            switch answer! {
            case .success(let qr): transaction = .read(qr)
            case .failure(let failure): throw failure
            }
        }
        return ScannedDocument(
            job: job, transaction: transaction, images: document.images.mapValues(\.bytes),
            backBarcodes: backBarcodes, capture: document.capture)
    }

    /// The folder's answer, or nil when this document asks first and must read the QR (see `QRResolver.claim`).
    private func claim(_ group: String) async throws -> QRResolver.Answer? {
        try await resolver.claim(group)
    }

    /// The scanning of the document's own images: the back's barcodes (with the folder's QR when `candidateBack` names
    /// the back: the answer is given to the folder and returned), and the MRZ where it can be the identity's source.
    private func scanOwnImages(
        _ document: DecodedDocument, candidateBack: String?, with scanner: BarcodeScanner
    ) throws -> (backBarcodes: [Barcode]?, answer: QRResolver.Answer?, mrz: MRZReading?) {
        let job = document.job
        var backBarcodes: [Barcode]?
        var backFailure: (any CodedError)?
        // A document of the folder that asked first (a selfie) read this back for the QR, PDF417 and all.
        if candidateBack == nil, case .qrImage(let group, _) = job.identity, case .file(let path) = job.images[.back],
            let back = document.images[.back]
        {
            backBarcodes = resolver.takeBarcodes(readFrom: path, bytes: back.bytes, in: group)
        }
        if backBarcodes == nil, let back = document.images[.back], symbologies.contains(.pdf417) {
            let wanted: Set<BarcodeFormat> = candidateBack != nil ? [.pdf417, .qrCode] : [.pdf417]
            do {
                backBarcodes = try scanner.scan(back.bytes, firstPass: back.firstPass, expecting: .formats(wanted))
            } catch {
                backFailure = error
            }
        }
        var answer: QRResolver.Answer?
        if let path = candidateBack, case .qrImage(let group, let candidates) = job.identity {
            // The folder's other documents see the image's failure as they would have met it reading the image.
            let read: Result<[Barcode], DocumentFailure> =
                if let backFailure {
                    .failure(DocumentFailure(backFailure, context: URL(fileURLWithPath: path).lastPathComponent))
                } else {
                    .success(backBarcodes ?? [])
                }
            let found = findQR(in: candidates, alreadyScanned: [path: read], with: scanner)
            resolver.fulfill(group, with: found)
            answer = found
        }
        if let backFailure { throw (DocumentFailure(backFailure, context: "back image")) }
        // The MRZ is read only where it can be the identity's source: no typed MRZ, and no licence data from the
        // back's PDF417 (a licence back's search for a band it does not carry was a fifth of a run's CPU).
        let licenceBack =
            backBarcodes?.contains { $0.format == .pdf417 && (AAMVARecord.hasHeader($0.text) || AAMVARecord.isMagneticStripe($0.text)) } ?? false
        var reading: MRZReading?
        if job.type == .governmentId, job.mrz == nil, !licenceBack {
            reading = try readMRZ(document, with: scanner)
        }
        return (backBarcodes, answer, reading)
    }

    /// The MRZ printed on the front (a passport page, a TD2 card) or the back (a TD1 card): from there on its text
    /// is parsed and checked as typed MRZ text is. A band that is found but cannot be read with valid check
    /// digits fails the document; a licence without MRZ has none, and goes on without.
    private func readMRZ(_ document: DecodedDocument, with scanner: BarcodeScanner) throws -> MRZReading? {
        for role in [ImageRole.front, .back] {
            guard let image = document.images[role] else { continue }
            let outcome: MRZImageReader.Outcome
            do {
                outcome = try MRZImageReader().read(
                    image.bytes, decoder: ImageDecoder(configuration: scanner.configuration.decoder), decoded: image.firstPass)
            } catch {
                throw DocumentFailure(error, context: "\(role.rawValue) image")
            }
            switch outcome {
            case .read(let reading):
                return reading
            case .unreadable(let refusal):
                throw DocumentFailure(refusal.error, context: "\(role.rawValue) image: an MRZ is printed but cannot be read")
            case .misprinted(_, let refusal):
                throw DocumentFailure(refusal.error, context: "\(role.rawValue) image: the MRZ as printed breaks a rule of ICAO 9303")
            case .notFound:
                continue
            }
        }
        return nil
    }

    /// The first verification QR among `candidates`, in order; `alreadyScanned` holds what this document's own
    /// scan read of an image (looking for the QR too), or why it could not: those are not read again. With
    /// `keepingFor`, a reading that holds a PDF417 is kept for the document whose back the image is.
    private func findQR(
        in candidates: [String], alreadyScanned: [String: Result<[Barcode], DocumentFailure>],
        with scanner: BarcodeScanner, keepingFor group: String? = nil
    ) -> QRResolver.Answer {
        var firstError: DocumentFailure?
        for path in candidates {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let codes: [Barcode]
            if let known = alreadyScanned[path] {
                switch known {
                case .success(let scanned): codes = scanned
                case .failure(let failure):
                    firstError = firstError ?? failure
                    continue
                }
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
                    if let group, symbologies.contains(.pdf417), codes.contains(where: { $0.format == .pdf417 }) {
                        resolver.keep(codes, readFrom: path, bytes: bytes, in: group)
                    }
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

extension ScanStage: PipelineStage {
    var name: String { "scan" }
    var workers: Int { Self.documentsInStage(scanners: scanners.count) }

    func process(_ document: InFlight<DecodedDocument>) async throws -> StageResult<ScannedDocument> {
        .next(try await self(document.value))
    }
}
