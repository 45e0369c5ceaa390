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
    var group: String?
    /// The work-queue item it came from, when a worker claimed it.
    var queueItem: Int64?
    /// How many times that item has been claimed, this claim included.
    var queueClaims = 1

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

    init(_ code: DocumentSubmissionErrorCode, _ message: String, field: String?) {
        self.init(code, message)
        self.field = field
    }

    init(_ error: some CodedError) {
        code = error.failureCode
        message = error.message
        field = (error as? MRZError)?.field.rawValue
        if let error = error as? StoreError, case .database = error { storeUnavailable = true }
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
    /// What a failed document leaves for its review.
    var failedInput: FailedInput?

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
    /// What the document leaves for its review when it fails at the next stage.
    var failedInput: FailedInput? { get }
}

/// What a failed document leaves for its review: the transaction it names (with the verification code it carries
/// for it), and what it was made from.
struct FailedInput: Sendable {
    var job: DocumentJob
    /// nil when the document named no transaction yet (its QR was still to be read).
    var transactionId: String?
    /// The code the document carries for its transaction; nil when the input names it by id.
    var verificationCode: String?
    /// The images' bytes, once read (before that, the recorder reads them as the decode stage does).
    var images: [ImageRole: [UInt8]]?
    /// The recorded document, when its submission failed.
    var documentId: String?

    init(_ job: DocumentJob, transaction: TransactionReference? = nil, images: [ImageRole: [UInt8]]? = nil, documentId: String? = nil) {
        self.job = job
        self.images = images
        self.documentId = documentId
        switch (transaction, job.identity) {
        case (.read(let qr), _), (_, .qr(let qr)): (transactionId, verificationCode) = (qr.transactionId, qr.verificationCode)
        case (.named(let id), _), (nil, .known(let id)): transactionId = id
        case (nil, .qrImage): transactionId = nil
        }
    }

    /// The images a document's fields carry (base64), as bytes.
    static func images(in fields: DocumentFields) -> [ImageRole: [UInt8]] {
        var images: [ImageRole: [UInt8]] = [:]
        for role in ImageRole.allCases {
            if let text = fields[role.documentKey], let data = Data(base64Encoded: text) { images[role] = [UInt8](data) }
        }
        return images
    }
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
        var outcome = DocumentOutcome(input: input, transactionId: value.transactionId, failure: failure)
        outcome.failedInput = value.failedInput
        return outcome
    }
}

/// Why a stage gave up on a document: it failed (and is reported), or the run was cancelled (and it is not).
enum StageStop: Error {
    case failed(DocumentFailure)
    case cancelled
}
