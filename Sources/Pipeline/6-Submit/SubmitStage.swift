import DocumentOutcomes
import Foundation
import Protect
import Submission
import TransactionStore
import VerifyModel

/// This run's claims on submissions: who it is to other processes on the store, and how long a claim lasts.
struct SubmissionClaims: Sendable {
    let owner = "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
    let lease: Duration
    /// How often a claim another process holds is looked at again: it ends when that process finishes the document.
    let recheck = Duration.milliseconds(200)

    func expiry(from time: Date) -> Date {
        let (seconds, attoseconds) = lease.components
        return time.addingTimeInterval(TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
    }
}

/// Claims a recorded document's submission, sends it with its transaction's Protect payload and records how it
/// ended: accepted -> PROCESSED, failed for good -> back to its policy status, in one store write that ends the claim.
struct SubmitStage: Sendable {
    let store: TransactionStore
    let submitter: any DocumentSubmitter
    let signals: SignalsCollector
    let risk: RiskEvaluations?
    let responses: ResponseBuilder
    let claims: SubmissionClaims
    let workers: Int
    let now: @Sendable () -> Date

    /// Throws `CancellationError` when the run is cancelled mid-submission: nothing is recorded, the claim is given up,
    /// and a later run (on this store or any other) sends the document again under the same idempotency key.
    func callAsFunction(_ document: DocumentToSubmit, input: DocumentInput) async throws -> DocumentOutcome {
        let assembled = document.document, documentId = assembled.documentId
        switch try await claim(documentId) {
        case .send:
            break
        case .accepted:
            // Another process sent it while this one waited.
            var outcome = try await outcome(of: document, input: input)
            outcome.alreadySubmitted = true
            return outcome
        case .failedElsewhere:
            // The process this one waited for sent it and failed for good: sending it again would send it once
            // more per waiting process. Its failure is this run's answer too.
            await release(documentId)
            let reason = try await store.submission(documentId: documentId)?.error ?? "no reason recorded"
            var outcome = try await outcome(of: document, input: input)
            outcome.failure = DocumentFailure(.submissionError, "sent by another process at the same time, which failed: \(reason)")
            return outcome
        }
        do {
            return try await send(document, input: input)
        } catch {
            // Nothing was recorded (cancelled, or the store refused the write): the next run need not wait for the lease.
            await release(documentId)
            throw error
        }
    }

    enum Turn {
        /// Claimed: this process sends it.
        case send
        /// Accepted already, by an earlier run or another process.
        case accepted
        /// Another process held it while this one waited, and recorded a failure.
        case failedElsewhere
    }

    /// Claims the submission, waiting while another process holds it: that one finishes it (accepted, or failed:
    /// its attempt count moved) or lets it go (cancelled, or its claim expired because it died) and this one sends.
    private func claim(_ documentId: String) async throws -> Turn {
        var attemptsWhenHeld: Int?
        while true {
            let time = now()
            switch try await store.claimSubmission(documentId: documentId, owner: claims.owner, until: claims.expiry(from: time), at: time) {
            case .accepted:
                return .accepted
            case .claimed(let attempts):
                if let before = attemptsWhenHeld, attempts > before { return .failedElsewhere }
                return .send
            case .held(let until, let attempts):
                attemptsWhenHeld = attemptsWhenHeld ?? attempts
                let wait = min(claims.recheck, .milliseconds(Int64(max(until.timeIntervalSince(time), 0) * 1000) + 1))
                try await Task.sleep(for: wait)
            }
        }
    }

    /// The document's result line from its transaction as stored now.
    private func outcome(of document: DocumentToSubmit, input: DocumentInput) async throws -> DocumentOutcome {
        guard let current = try await store.transaction(id: document.transaction.id) else {
            throw StoreError.unknownTransaction(document.transaction.id)
        }
        let assembled = document.document
        return responses.outcome(
            input, type: assembled.job.type, documentId: assembled.documentId, fields: assembled.fields, current,
            warnings: assembled.warnings)
    }

    /// Renews the claim every third of the lease while the document is being sent, so that a send slowed by
    /// something the lease does not count (a slow store, a busy machine) is not taken over by another process.
    /// Ends when cancelled, or when the claim was lost (then the other process's send is fenced by the idempotency key).
    private func renewClaim(_ documentId: String) async {
        while true {
            do {
                try await Task.sleep(for: claims.lease / 3)
                let time = now()
                guard
                    case .claimed = try await store.claimSubmission(
                        documentId: documentId, owner: claims.owner,
                        until: claims.expiry(from: time), at: time)
                else { return }
            } catch {
                // Cancelled with the send, or the store failed: the lease runs out on its own.
                return
            }
        }
    }

    /// Gives the claim up for a send that recorded nothing, so a re-run need not wait for it to expire. The write is the
    /// store's last act for this document and must not be cancelled with the run: it runs in a task of its own.
    private func release(_ documentId: String) async {
        let store = store, owner = claims.owner
        await Task.detached { try? await store.releaseSubmission(documentId: documentId, owner: owner) }.value
    }

    private func send(_ document: DocumentToSubmit, input: DocumentInput) async throws -> DocumentOutcome {
        let assembled = document.document, documentId = assembled.documentId
        let request = try await self.request(for: document)
        // The send, with the claim renewed beside it; nil when the run was cancelled mid-send.
        let submitter = submitter
        let sent = await withTaskGroup(of: SubmissionResult?.self) { group in
            group.addTask { try? await submitter.submit(request) }
            group.addTask {
                await renewClaim(documentId)
                return nil
            }
            var result: SubmissionResult?
            for await case let answer? in group {
                result = answer
                group.cancelAll()
            }
            return result
        }
        guard let result = sent else { throw CancellationError() }
        await signals.retried(request.transactionId, times: result.attempts - 1)
        let error: DocumentSubmissionError? = if case .failed(let error, _) = result { error } else { nil }
        let (updated, _, _) = try await store.finishSubmission(
            documentId: documentId, type: assembled.job.type, of: request.transactionId,
            accepted: error == nil, error: error?.description, at: now())
        await signals.statusChanged(updated)
        var outcome = responses.outcome(
            input, type: assembled.job.type, documentId: documentId, fields: assembled.fields, updated, warnings: assembled.warnings)
        outcome.failure = error.map { DocumentFailure($0) }
        return outcome
    }

    /// The request, with the transaction's statuses as this process last saw them (its other documents' moves
    /// included) and its Protect payload (made now when metadata is lazy).
    private func request(for document: DocumentToSubmit) async throws -> SubmissionRequest {
        guard let transaction = try await store.latestKnown(id: document.transaction.id) else {
            throw StoreError.unknownTransaction(document.transaction.id)
        }
        let assembled = document.document
        let payload = await signals.payload(for: transaction, capture: assembled.capture, at: now())
        if payload != nil { await risk?.evaluateOnce(transaction.id) }
        return SubmissionRequest(
            documentId: assembled.documentId, idempotencyKey: document.idempotencyKey, transactionId: transaction.id,
            verificationCode: transaction.verificationCode, documentType: assembled.job.type,
            document: assembled.fields, state: transaction.state, signals: payload)
    }
}

/// Builds a document's result line from its transaction as stored.
struct ResponseBuilder: Sendable {
    /// Leave the base64 images out of the printed results.
    let omitImages: Bool

    func outcome(
        _ input: DocumentInput, type: DocumentType, documentId: String?, fields: DocumentFields,
        _ transaction: StoredTransaction, skipped: Bool = false, warnings: [String] = []
    ) -> DocumentOutcome {
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
        outcome.warnings = warnings
        return outcome
    }
}

extension SubmitStage: PipelineStage {
    var name: String { "submit" }

    /// A refused submission is answered, not thrown: it leaves its inputs for review all the same.
    func process(_ document: InFlight<DocumentToSubmit>) async throws -> StageResult<Never> {
        let outcome = try await self(document.value, input: document.input)
        return .finished(FinishedDocument(outcome, failedInput: outcome.failure != nil ? document.value.failedInput : nil))
    }
}
