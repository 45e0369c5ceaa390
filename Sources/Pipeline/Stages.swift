import BarcodeScanning
import Crypto
import Foundation
import ImageDecoding
import Logging
import Protect
import Submission
import TransactionStore
import VerifyModel

/// The work each stage does to one item. Stages share nothing but the item they pass on.
struct Stages: Sendable {
    let configuration: PipelineConfiguration
    let store: any TransactionStore
    let submitter: any DocumentSubmitter
    let resolver: QRResolver
    let touched: TouchedTransactions
    let signals: SignalsCollector
    let risk: RiskEvaluations?
    let now: @Sendable () -> Date
    let omitImages: Bool
    let logger: Logger

    var scannerConfiguration: BarcodeScanner.Configuration {
        BarcodeScanner.Configuration(symbologies: configuration.symbologies,
                                     decoder: ImageDecoder.Configuration(maxPixels: configuration.maxPixels))
    }

    // MARK: decode

    /// Reads each image and decodes it at the scanner's first-pass size: a corrupt image fails here.
    func decode(_ item: WorkItem) -> WorkItem {
        var item = item
        let decoder = ImageDecoder(configuration: .init(maxPixels: configuration.maxPixels))
        for role in item.job.images.keys.sorted() {
            let bytes: [UInt8]
            switch item.job.images[role]! {
            case .inline(let data):
                bytes = data
            case .file(let path):
                do {
                    bytes = try ImageFile.read(path)
                } catch {
                    item.failure = DocumentFailure(.documentCaptureError, "\(role.rawValue) image \(path): \(error)")
                    return item
                }
            }
            do {
                let image = try decoder.decode(bytes, targetPixels: scannerConfiguration.firstPassPixels)
                item.firstPass[role] = image
                item.capture.imageSizes.append("\(image.sourceWidth)x\(image.sourceHeight)")
                if item.capture.camera == nil { item.capture.camera = CameraInfo(jpeg: bytes) }
            } catch {
                item.failure = DocumentFailure(.documentCaptureError, "\(role.rawValue) image: \(error.message)")
                return item
            }
            item.bytes[role] = bytes
        }
        return item
    }

    // MARK: scan

    /// Reads the back's PDF417 and finds the transaction's QR. `scanner` belongs to the calling worker.
    func scan(_ item: WorkItem, with scanner: BarcodeScanner) async -> WorkItem {
        var item = item
        // When the back may also carry the transaction's QR, one pass looks for both.
        var candidateBack: String?
        if case .qrImage(_, let candidates) = item.job.identity, case .file(let path) = item.job.images[.back],
           candidates.contains(path) {
            candidateBack = path
        }
        if let bytes = item.bytes[.back], configuration.symbologies.contains(.pdf417) {
            let wanted: Set<BarcodeFormat> = candidateBack != nil ? [.pdf417, .qrCode] : [.pdf417]
            do {
                item.barcodes[.back] = try scanner.scan(bytes, firstPass: item.firstPass[.back], expecting: .formats(wanted))
            } catch {
                item.failure = DocumentFailure(.documentCaptureError, "back image: \(error.message)")
                return item
            }
        }
        item.firstPass = [:] // not needed past this stage
        switch item.job.identity {
        case .qr(let qr):
            item.qr = qr
        case .known(let id):
            item.transactionId = id
        case .qrImage(let group, let candidates):
            let answer: QRResolver.Answer
            if let known = await resolver.claim(group) {
                answer = known
            } else {
                var scanned: [String: [Barcode]] = [:]
                if let path = candidateBack, let codes = item.barcodes[.back] { scanned[path] = codes }
                answer = findQR(in: candidates, alreadyScanned: scanned, with: scanner)
                await resolver.fulfill(group, with: answer)
            }
            switch answer {
            case .success(let qr): item.qr = qr
            case .failure(let failure): item.failure = failure
            }
        }
        if let qr = item.qr { item.transactionId = qr.transactionId }
        return item
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
                guard let bytes = try? ImageFile.read(path) else {
                    firstError = firstError ?? DocumentFailure(.documentCaptureError, "\(name): cannot read the file")
                    continue
                }
                do {
                    codes = try scanner.scan(bytes, expecting: .formats([.qrCode]))
                } catch {
                    firstError = firstError ?? DocumentFailure(.documentCaptureError, "\(name): \(error.message)")
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

    // MARK: parse

    /// Builds the document's fields from its sources, refusing conflicts, and derives its stable id.
    func parse(_ item: WorkItem) -> WorkItem {
        var item = item
        // An explicit skip carries no document: only the track stage acts on it.
        guard let type = item.job.type, let transactionId = item.transactionId, !item.job.skip else { return item }
        do {
            item.fields = try DocumentAssembly(configuration: configuration, today: now()).fields(for: item, type: type)
        } catch {
            item.failure = error
            return item
        }
        var hash = SHA256()
        hash.update(data: Data(type.rawValue.utf8))
        for role in item.bytes.keys.sorted() {
            hash.update(data: Data(role.rawValue.utf8))
            hash.update(data: Data(SHA256.hash(data: item.bytes[role]!)))
        }
        for key in item.fields.keys where key != .frontImage && key != .backImage && key != .selfie {
            hash.update(data: Data("\(key.rawValue)=\(item.fields[key]!)\n".utf8))
        }
        let contentHash = hash.finalize().map { String(format: "%02x", $0) }.joined()
        item.contentHash = "sha256:" + contentHash
        item.bytes = [:] // the document holds them as base64 from here on
        let id = SHA256.hash(data: Data("\(transactionId)\n\(contentHash)".utf8)).map { String(format: "%02x", $0) }.joined()
        item.documentId = "doc-" + id.prefix(32)
        return item
    }

    // MARK: track

    /// Opens the transaction, records the document (idempotently) and moves its type to COLLECTED.
    func track(_ item: WorkItem) async -> WorkItem {
        var item = item
        guard let type = item.job.type else { return item }
        let time = now()
        guard let transactionId = item.transactionId else { return item }
        do throws(StoreError) {
            // Transactions named by QR text were opened at ingest; a QR read from an image opens its own here,
            // once per run. Anything else must exist already: collect and apply refuse an unknown transaction.
            if let qr = item.qr, !item.transactionOpened, await !touched.contains(transactionId) {
                _ = try await store.openTransaction(item.job.newTransaction(qr, configuration: configuration, now: time))
            }
            await touched.add(transactionId)

            if item.job.skip {
                let (updated, _) = try await store.apply(.skip, to: type, of: transactionId, reason: "skipped by \(item.job.source)", at: time)
                await signals.statusChanged(updated)
                item.outcome = outcome(item, updated, skipped: true)
                return item
            }
            guard let documentId = item.documentId, let contentHash = item.contentHash else { return item }
            var stored = item.fields
            for key in [DocumentKey.frontImage, .backImage, .selfie] { stored[key] = nil }
            let record = DocumentRecord(id: documentId, transactionId: transactionId, type: type, fields: stored,
                                        source: item.job.source, contentHash: contentHash, createdAt: time)
            switch try await store.collect(record, at: time) {
            case .collected(let updated, _):
                item.needsSubmission = true
                await signals.documentArrived(updated, capture: item.capture, at: time)
                await evaluateRisk(updated)
            case .alreadyRecorded(let current):
                if try await store.submission(documentId: documentId)?.outcome == .accepted {
                    var result = outcome(item, current)
                    result.alreadySubmitted = true
                    item.outcome = result
                } else {
                    // Recorded by an earlier run that stopped before the submission, or whose submission failed.
                    if current.state.documents[type] == .required || current.state.documents[type] == .optional {
                        _ = try await store.apply(.collect, to: type, of: transactionId, reason: "document \(documentId) collected again", at: time)
                    }
                    item.needsSubmission = true
                }
            }
        } catch {
            item.failure = DocumentFailure(error.documentError)
        }
        return item
    }

    // MARK: submit

    func submit(_ item: WorkItem) async -> WorkItem {
        var item = item
        guard item.needsSubmission, let documentId = item.documentId, let type = item.job.type,
              let transactionId = item.transactionId else { return item }
        do throws(StoreError) {
            guard let transaction = try await store.transaction(id: transactionId) else {
                throw StoreError.unknownTransaction(transactionId)
            }
            let payload = await signals.payload(for: transaction, capture: item.capture, at: now())
            if payload != nil { await evaluateRisk(transaction) }
            let result = await submitter.submit(SubmissionRequest(documentId: documentId, transaction: transaction,
                                                                  documentType: type, document: item.fields, signals: payload))
            await signals.retried(transactionId, times: result.attempts - 1)
            let error: DocumentSubmissionError? = if case .failed(let error, _) = result { error } else { nil }
            let (updated, _, _) = try await store.finishSubmission(documentId: documentId, accepted: error == nil,
                                                                   error: error?.description, at: now())
            await signals.statusChanged(updated)
            item.outcome = outcome(item, updated)
            if let error { item.failure = DocumentFailure(error) }
        } catch {
            item.failure = DocumentFailure(error.documentError)
        }
        return item
    }

    /// One risk evaluation per transaction, once its payload exists (with `protect.customHost`).
    private func evaluateRisk(_ transaction: StoredTransaction) async {
        guard let risk, let current = try? await store.transaction(id: transaction.id), let payload = current.signals,
              current.riskEvaluation == nil else { return }
        await risk.evaluateOnce(transaction.id, signals: payload)
    }

    private func outcome(_ item: WorkItem, _ transaction: StoredTransaction, skipped: Bool = false) -> DocumentOutcome {
        var document = item.fields
        if omitImages || skipped {
            for key in [DocumentKey.frontImage, .backImage, .selfie] { document[key] = nil }
        }
        let response = DocumentSubmissionResponse(
            transactionId: transaction.id, documentType: item.job.type!, documentStatus: transaction.state.documents,
            documentSubmissionStatus: transaction.state.submissionStatus, document: skipped ? DocumentFields() : document,
            createdAt: transaction.createdAt, updatedAt: transaction.updatedAt, expiresAt: transaction.expiresAt)
        return DocumentOutcome(sequence: item.job.sequence, inputId: item.job.inputId, source: item.job.source,
                               documentId: item.documentId, transactionId: transaction.id, documentType: item.job.type,
                               response: response, skipped: skipped)
    }
}

/// Asks for at most one risk evaluation per transaction, even when its documents race.
actor RiskEvaluations {
    let evaluator: RiskEvaluator
    let store: any TransactionStore
    private var asked: Set<String> = []

    init(evaluator: RiskEvaluator, store: any TransactionStore) {
        self.evaluator = evaluator
        self.store = store
    }

    func evaluateOnce(_ transactionId: String, signals: String) async {
        guard asked.insert(transactionId).inserted else { return }
        let answer = await evaluator.evaluate(transactionId: transactionId, signals: signals)
        try? await store.setRiskEvaluation(answer, of: transactionId)
    }
}

/// The transactions a run touched: at the end of a batch the missing optional documents of those whose
/// input has not ended already (with their folder) become SKIPPED.
actor TouchedTransactions {
    private(set) var ids: [String] = []
    private var seen: Set<String> = []
    private var endedIds: Set<String> = []

    var notEnded: [String] { ids.filter { !endedIds.contains($0) } }

    func ended(_ ids: [String]) {
        endedIds.formUnion(ids)
    }

    func add(_ id: String) {
        if seen.insert(id).inserted { ids.append(id) }
    }

    func contains(_ id: String) -> Bool {
        seen.contains(id)
    }
}
