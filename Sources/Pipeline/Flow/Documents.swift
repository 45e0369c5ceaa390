import Foundation
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
    var group: String?
    /// The work-queue item it came from, when a worker claimed it.
    var queueItem: Int64?

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

    package var failureCode: FailureCode { code }

    package init(_ code: DocumentSubmissionErrorCode, _ message: String) {
        self.code = .document(code)
        self.message = message
    }

    init(_ error: some CodedError) {
        code = error.failureCode
        message = error.message
    }

    /// A failure of any coded kind as it is; anything else (which no stage throws) as a store error's code.
    init(any error: any Error) {
        if let error = error as? any CodedError {
            self.init(error)
        } else {
            self.init(.initiateDocumentTransactionError, "the transaction could not be opened")
        }
    }

    /// The same failure, its message prefixed with where it happened ("back image: ...").
    init(_ error: some CodedError, context: String) {
        code = error.failureCode
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

/// What a stage hands to the next: the transaction it belongs to once known, and how many bytes it holds
/// (the queues between stages are bounded in bytes).
protocol StageValue: Sendable {
    var transactionId: String? { get }
    var byteCount: Int { get }
}

/// A document between two stages: where it came from, and the last stage's value.
struct InFlight<Value: StageValue>: Sendable {
    var input: DocumentInput
    var value: Value

    /// The document after the next stage.
    func with<Next: StageValue>(_ next: Next) -> InFlight<Next> {
        InFlight<Next>(input: input, value: next)
    }

    func failed(_ failure: DocumentFailure) -> DocumentOutcome {
        DocumentOutcome(input: input, transactionId: value.transactionId, failure: failure)
    }
}

/// Why a stage gave up on a document: it failed (and is reported), or the run was cancelled (and it is not).
enum StageStop: Error {
    case failed(DocumentFailure)
    case cancelled
}
