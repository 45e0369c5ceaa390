import Foundation
import VerifyModel

/// What is submitted for one document (CONTRACT §7's request body, plus what authenticates it), built from the
/// data model alone: the submitter knows nothing of the store.
package struct SubmissionRequest: Sendable {
    package var documentId: String
    /// The same for the same document whichever store sends it, and holding nothing of its content or of any secret
    /// (`RecordedDocument.idempotencyKey`): retries, re-runs and runs on other stores are one submission to the API.
    package var idempotencyKey: String
    package var transactionId: String
    /// The transaction's verification code: the Basic credentials when no bearer token is configured.
    package var verificationCode: String
    package var documentType: DocumentType
    package var document: DocumentFields
    /// The transaction's statuses as they stand when the document is sent.
    package var state: TransactionState
    /// The transaction's Protect payload, sent unchanged with each of its documents.
    package var signals: String?

    package init(
        documentId: String, idempotencyKey: String, transactionId: String, verificationCode: String, documentType: DocumentType,
        document: DocumentFields, state: TransactionState, signals: String?
    ) {
        self.documentId = documentId
        self.idempotencyKey = idempotencyKey
        self.transactionId = transactionId
        self.verificationCode = verificationCode
        self.documentType = documentType
        self.document = document
        self.state = state
        self.signals = signals
    }
}

/// How a submission ended, and after how many attempts.
package enum SubmissionResult: Sendable, Equatable {
    /// Accepted now, or already accepted before (HTTP 409).
    case accepted(attempts: Int)
    /// Failed for good: the document goes back to its policy status with this error.
    case failed(DocumentSubmissionError, attempts: Int)

    package var attempts: Int {
        switch self {
        case .accepted(let attempts), .failed(_, let attempts): attempts
        }
    }
}

/// Sends documents somewhere. The pipeline records the result in the store.
package protocol DocumentSubmitter: Sendable {
    /// Throws only when the calling task is cancelled before the submission ended: its outcome is then unknown
    /// and must not be recorded (a later run sends it again under the same idempotency key).
    func submit(_ request: SubmissionRequest) async throws -> SubmissionResult
}

/// The embedded default: the store's record of the submission is the submission.
package struct LocalSubmitter: DocumentSubmitter {
    package init() {}

    package func submit(_ request: SubmissionRequest) async throws -> SubmissionResult {
        try Task.checkCancellation(as: CancellationError.self)
        return .accepted(attempts: 1)
    }
}

extension Task where Success == Never, Failure == Never {
    /// `checkCancellation()` with a typed error.
    static func checkCancellation(as _: CancellationError.Type) throws {
        if Task.isCancelled { throw CancellationError() }
    }
}
