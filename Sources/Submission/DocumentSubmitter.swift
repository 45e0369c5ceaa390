import Foundation
import TransactionStore
import VerifyModel

/// What is submitted for one document (SPEC §7's request body, plus what authenticates it).
public struct SubmissionRequest: Sendable {
    public var documentId: String
    public var transaction: StoredTransaction
    public var documentType: DocumentType
    public var document: DocumentFields
    /// The transaction's Protect payload, sent unchanged with each of its documents.
    public var signals: String?

    public init(documentId: String, transaction: StoredTransaction, documentType: DocumentType, document: DocumentFields,
                signals: String?) {
        self.documentId = documentId
        self.transaction = transaction
        self.documentType = documentType
        self.document = document
        self.signals = signals
    }
}

/// How a submission ended, and after how many attempts.
public enum SubmissionResult: Sendable, Equatable {
    /// Accepted now, or already accepted before (HTTP 409).
    case accepted(attempts: Int)
    /// Failed for good: the document goes back to its policy status with this error.
    case failed(DocumentSubmissionError, attempts: Int)

    public var attempts: Int {
        switch self {
        case .accepted(let attempts), .failed(_, let attempts): attempts
        }
    }
}

/// Sends documents somewhere. The pipeline records the result in the store.
public protocol DocumentSubmitter: Sendable {
    func submit(_ request: SubmissionRequest) async -> SubmissionResult
}

/// The embedded default: the store's record of the submission is the submission.
public struct LocalSubmitter: DocumentSubmitter {
    public init() {}

    public func submit(_ request: SubmissionRequest) async -> SubmissionResult { .accepted(attempts: 1) }
}
