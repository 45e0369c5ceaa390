import DocumentOutcomes
import Foundation
import Logging
import Protect
import TransactionStore
import VerifyModel

/// A recorded document that still has to be submitted, with its transaction as the store had it then.
struct DocumentToSubmit: StageValue {
    var document: AssembledDocument
    var transaction: StoredTransaction
    /// Its submission's key (`RecordedDocument.idempotencyKey`).
    var idempotencyKey: String

    var transactionId: String? { transaction.id }
    var byteCount: Int { document.fields.values.values.reduce(0) { $0 + $1.utf8.count } }
    var failedInput: FailedInput? {
        FailedInput(
            document.job, transaction: .named(transaction.id), images: FailedInput.images(in: document.fields), documentId: document.documentId)
    }
}

/// The track stage's value: a document to submit, or one already finished (an earlier run's accepted
/// submission, an explicit skip).
enum TrackedDocument: StageValue {
    case submit(DocumentToSubmit)
    case finished(DocumentOutcome)

    var transactionId: String? {
        switch self {
        case .submit(let document): document.transaction.id
        case .finished(let outcome): outcome.transactionId
        }
    }

    var byteCount: Int {
        guard case .submit(let document) = self else { return 0 }
        return document.byteCount
    }

    var failedInput: FailedInput? {
        guard case .submit(let document) = self else { return nil }
        return document.failedInput
    }
}

/// Opens a transaction read from a QR image, records the document (idempotently) and moves its type to
/// COLLECTED.
struct TrackStage: Sendable {
    let configuration: PipelineConfiguration
    let store: TransactionStore
    let touched: TouchedTransactions
    let signals: SignalsCollector
    let risk: RiskEvaluations?
    let responses: ResponseBuilder
    let workers: Int
    let now: @Sendable () -> Date

    func callAsFunction(_ parsed: ParsedDocument, input: DocumentInput) async throws -> TrackedDocument {
        let time = now()
        switch parsed {
        case .skip(let job, let reference):
            try await open(reference, job: job, at: time)
            let (updated, _) = try await store.apply(.skip, to: job.type, of: reference.id, reason: "skipped by \(job.source)", at: time)
            await signals.statusChanged(updated)
            return .finished(responses.outcome(input, type: job.type, documentId: nil, fields: DocumentFields(), updated, skipped: true))
        case .document(let document):
            try await open(document.transaction, job: document.job, at: time)
            return try await record(document, input: input, at: time)
        }
    }

    /// Transactions named by QR text were opened at ingest; one read from an image is opened here (the store
    /// checks its verification code against the one it was opened with). Anything else must exist already:
    /// collect and apply refuse an unknown transaction.
    private func open(_ reference: TransactionReference, job: DocumentJob, at time: Date) async throws {
        if case .read(let qr) = reference {
            try await job.openTransaction(qr, on: store, configuration: configuration, now: time)
        }
        await touched.add(reference.id)
    }

    private func record(_ assembled: AssembledDocument, input: DocumentInput, at time: Date) async throws -> TrackedDocument {
        let type = assembled.job.type, transactionId = assembled.transaction.id
        var stored = assembled.fields
        for key in DocumentKey.images { stored[key] = nil }
        let record = DocumentRecord(
            id: assembled.documentId, transactionId: transactionId, type: type, fields: stored,
            source: assembled.job.source, contentHash: assembled.contentHash, contentDigest: assembled.contentDigest, createdAt: time)
        switch try await store.collect(record, at: time) {
        case .collected(let updated, _, let recorded):
            await signals.documentArrived(updated, capture: assembled.capture, at: time)
            await risk?.evaluateOnce(updated.id)
            return .submit(DocumentToSubmit(document: assembled, transaction: updated, idempotencyKey: recorded.idempotencyKey))
        case .alreadyRecorded(let current, let recorded):
            // The same input run before: the document keeps the id it was recorded under.
            var document = assembled
            document.documentId = recorded.id
            if try await store.submission(documentId: recorded.id)?.outcome == .accepted {
                var outcome = responses.outcome(
                    input, type: type, documentId: recorded.id, fields: document.fields, current,
                    warnings: document.warnings)
                outcome.alreadySubmitted = true
                return .finished(outcome)
            }
            // Recorded by an earlier run that stopped before the submission, or whose submission failed.
            var transaction = current
            if current.state.documents[type] == .required || current.state.documents[type] == .optional {
                do {
                    (transaction, _) = try await store.apply(
                        .collect, to: type, of: transactionId,
                        reason: "document \(recorded.id) collected again", at: time)
                } catch let error as StoreError where error.isIllegalMove {
                    // Another document of its type, tracked at the same time, collected it since `current` was read.
                    transaction = try await store.transaction(id: transactionId) ?? current
                }
            }
            return .submit(DocumentToSubmit(document: document, transaction: transaction, idempotencyKey: recorded.idempotencyKey))
        }
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

}

extension TrackStage: PipelineStage {
    var name: String { "track" }

    func process(_ document: InFlight<ParsedDocument>) async throws -> StageResult<DocumentToSubmit> {
        switch try await self(document.value, input: document.input) {
        case .submit(let next): .next(next)
        case .finished(let outcome): .finished(FinishedDocument(outcome))
        }
    }
}
