import Foundation
import TransactionStore
import VerifyModel

/// Which input a document came from: what its result line echoes, however far it got.
package struct DocumentInput: Sendable, Equatable {
    package var sequence: Int
    /// A stream line's `id`, echoed in its result.
    package var inputId: String?
    /// Where it came from: a folder, a file, or `stdin:N`.
    package var source: String
    /// nil only for an input that failed before its type could be known (a malformed line).
    package var type: DocumentType?
    /// The part of a batch folder whose end ends its transactions' input (see `DocumentJob.inputGroup`).
    package var group: String?
    /// The work-queue item it came from, when a worker claimed it.
    package var queueItem: Int64?
    /// How many times that item has been claimed, this claim included.
    package var queueClaims = 1

    package init(
        sequence: Int, inputId: String?, source: String, type: DocumentType?, group: String? = nil, queueItem: Int64? = nil
    ) {
        self.sequence = sequence
        self.inputId = inputId
        self.source = source
        self.type = type
        self.group = group
        self.queueItem = queueItem
    }
}

/// A per-document failure as reported: a spec code (CONTRACT §2 or §3) and a message.
package struct DocumentFailure: CodedError, Equatable {
    package var code: FailureCode
    package var message: String
    /// The field it names, where it names one (`documentNumber`, `dateOfBirth`...): never its value.
    package var field: String?
    /// The store could not be asked (its database went away for a moment), so this says nothing about the document:
    /// a worker gives such a document back to the queue instead of marking it done.
    package var storeUnavailable = false

    package var failureCode: FailureCode { code }

    package init(_ code: DocumentSubmissionErrorCode, _ message: String) {
        self.code = .document(code)
        self.message = message
    }

    package init(_ code: DocumentSubmissionErrorCode, _ message: String, field: String?) {
        self.init(code, message)
        self.field = field
    }

    package init(_ error: some CodedError) {
        code = error.failureCode
        message = error.message
        field = (error as? MRZError)?.field.rawValue
        if let error = error as? StoreError, error.code == .database { storeUnavailable = true }
    }

    /// A failure of any coded kind as it is; anything else (which no stage throws) as a store error's code.
    package init(any error: any Error) {
        if let failure = error as? DocumentFailure {
            self = failure
        } else if let error = error as? any CodedError {
            self.init(error)
        } else {
            self.init(.initiateDocumentTransactionError, "the transaction could not be opened")
        }
    }

    /// The same failure, its message prefixed with where it happened ("back image: ...").
    package init(_ error: some CodedError, context: String) {
        self.init(error)
        message = "\(context): \(error.message)"
    }
}

/// What became of one document: its submission response, or its failure.
package struct DocumentOutcome: Sendable {
    package var input: DocumentInput
    package var documentId: String?
    package var transactionId: String?
    package var response: DocumentSubmissionResponse?
    package var failure: DocumentFailure?
    /// Accepted in an earlier run: nothing was sent again.
    package var alreadySubmitted = false
    /// An explicit skip: no document, only a status change.
    package var skipped = false
    /// What was repaired or dropped while reading the document (never values): a reason to review it.
    package var warnings: [String] = []

    package var sequence: Int { input.sequence }
    package var inputId: String? { input.inputId }
    package var source: String { input.source }
    package var documentType: DocumentType? { input.type }

    package init(
        input: DocumentInput, documentId: String? = nil, transactionId: String?, response: DocumentSubmissionResponse? = nil,
        failure: DocumentFailure? = nil
    ) {
        self.input = input
        self.documentId = documentId
        self.transactionId = transactionId
        self.response = response
        self.failure = failure
    }
}
