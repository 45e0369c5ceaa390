import Foundation
import Protect
import Submission
import TransactionStore
import VerifyModel

/// Sends a recorded document with its transaction's Protect payload and records how it ended: accepted ->
/// PROCESSED, failed for good -> back to its policy status, in one store write.
struct SubmitStage: Sendable {
    let store: any TransactionStore
    let submitter: any DocumentSubmitter
    let signals: SignalsCollector
    let risk: RiskEvaluations?
    let responses: ResponseBuilder
    let now: @Sendable () -> Date

    /// Throws `CancellationError` when the run is cancelled mid-submission: nothing is recorded, and a later
    /// run sends the document again under the same idempotency key.
    func callAsFunction(_ document: DocumentToSubmit, input: DocumentInput) async throws(StageStop) -> DocumentOutcome {
        let assembled = document.document, documentId = assembled.documentId
        let request: SubmissionRequest
        do {
            request = try await self.request(for: document)
        } catch {
            throw .failed(DocumentFailure(error))
        }
        let result: SubmissionResult
        do {
            result = try await submitter.submit(request)
        } catch {
            throw .cancelled
        }
        await signals.retried(request.transactionId, times: result.attempts - 1)
        let error: DocumentSubmissionError? = if case .failed(let error, _) = result { error } else { nil }
        do {
            let (updated, _, _) = try await store.finishSubmission(documentId: documentId, type: assembled.job.type, of: request.transactionId,
                                                                   accepted: error == nil, error: error?.description, at: now())
            await signals.statusChanged(updated)
            var outcome = responses.outcome(input, type: assembled.job.type, documentId: documentId, fields: assembled.fields, updated)
            outcome.failure = error.map { DocumentFailure($0) }
            return outcome
        } catch {
            throw .failed(DocumentFailure(error))
        }
    }

    /// The request, with the transaction's statuses as this process last saw them (its other documents' moves
    /// included) and its Protect payload (made now when metadata is lazy).
    private func request(for document: DocumentToSubmit) async throws(StoreError) -> SubmissionRequest {
        guard let transaction = try await store.latestKnown(id: document.transaction.id) else {
            throw StoreError.unknownTransaction(document.transaction.id)
        }
        let assembled = document.document
        let payload = await signals.payload(for: transaction, capture: assembled.capture, at: now())
        if payload != nil { await risk?.evaluateOnce(transaction.id) }
        return SubmissionRequest(documentId: assembled.documentId, transactionId: transaction.id,
                                 verificationCode: transaction.verificationCode, documentType: assembled.job.type,
                                 document: assembled.fields, state: transaction.state, signals: payload)
    }
}

/// Builds a document's result line from its transaction as stored.
struct ResponseBuilder: Sendable {
    /// Leave the base64 images out of the printed results.
    let omitImages: Bool

    func outcome(_ input: DocumentInput, type: DocumentType, documentId: String?, fields: DocumentFields,
                 _ transaction: StoredTransaction, skipped: Bool = false) -> DocumentOutcome {
        var document = skipped ? DocumentFields() : fields
        if omitImages {
            for key in DocumentKey.images { document[key] = nil }
        }
        let response = DocumentSubmissionResponse(
            transactionId: transaction.id, documentType: type, documentStatus: transaction.state.documents,
            documentSubmissionStatus: transaction.state.submissionStatus, document: document,
            createdAt: transaction.createdAt, updatedAt: transaction.updatedAt, expiresAt: transaction.expiresAt)
        var outcome = DocumentOutcome(input: input, documentId: documentId, transactionId: transaction.id, response: response)
        outcome.skipped = skipped
        return outcome
    }
}
