import Foundation
import VerifyModel

// The review loop's values (CONTRACT §12): a document that failed is recorded with its error, its inputs kept sealed,
// and is open for review until an operator (or a later reading of it) resolves it.

/// Where a review stands.
package enum ReviewState: String, Sendable, Codable, CaseIterable {
    /// Waiting for an operator.
    case open
    /// Closed by `review accept`: the operator's fields were collected and submitted.
    case accepted
    /// Closed by `review replay`: read or sent again, and processed.
    case replayed
    /// Closed by `review reject`, with a reason.
    case rejected
    /// Closed because a later document of its type was processed (the input run again once mended).
    case resolved
}

/// What failed, which decides what an operator may do.
package enum ReviewKind: String, Sendable, Codable, CaseIterable {
    /// The document could not be read or did not meet the rules: its inputs can be read again, or fields entered.
    case capture
    /// Its submission failed: it can be sent again under its idempotency key.
    case submission
    /// A failure tied to no transaction it could prove it belongs to (a QR error, another verification code, a
    /// malformed line): kept without inputs, it can only be rejected.
    case unattached
}

/// What the store keeps of a failed document's inputs.
package enum ReviewInputs: String, Sendable, Codable, CaseIterable {
    case kept
    /// Nothing to keep (an unattached failure), or nothing was given.
    case none
    /// Larger than `review.maxInputBytes`.
    case tooLarge = "too-large"
    /// The store's retained inputs reached `review.maxStoreBytes`.
    case storeFull = "store-full"
    /// Removed with the transaction's data under the retention policy.
    case purged
    /// Older than `review.inputsMaxAge`.
    case expired
}

/// Why an operator closed a review without a document (`review reject --reason`).
package enum RejectReason: String, Sendable, CaseIterable {
    case unreadable
    case notADocument = "not-a-document"
    case suspectedFraud = "suspected-fraud"
    case duplicate
    case expired
    case other
}

/// How much of failed documents' inputs a store keeps (the pipeline's `review` section).
package struct ReviewLimits: Sendable, Equatable {
    /// A document's inputs larger than this are not kept (its review says `too-large`).
    package var maxInputBytes = 32 << 20
    /// Inputs are not kept once those kept reach this (the review says `store-full`).
    package var maxStoreBytes = 2 << 30
    /// Kept inputs older than this are removed by every purge, whatever the retention mode.
    package var inputsMaxAge: TimeInterval = 30 * 86_400

    package init() {}
}

/// A failure as the pipeline reports it, for the store to record.
package struct FailureReport: Sendable {
    /// The transaction the document names, and the verification code it carries for it (nil when the input names the
    /// transaction by id, as a stream line's `transactionId` does); nil for a failure before any was named.
    package var transactionId: String?
    package var verificationCode: String?
    package var type: DocumentType?
    package var kind: ReviewKind
    package var code: FailureCode
    package var message: String
    package var field: String?
    package var source: String
    /// What the document was made from, as JSON (`ReviewInputs.kept` once sealed in the store); nil when none.
    package var inputs: String?
    /// The recorded document whose submission failed.
    package var documentId: String?
    /// The review keeps the inputs it has (a failed `review accept`: the operator's fields are not what failed first).
    package var keepInputs = false

    package init(
        transactionId: String?, verificationCode: String?, type: DocumentType?, kind: ReviewKind, code: FailureCode, message: String,
        field: String?, source: String, inputs: String?, documentId: String? = nil
    ) {
        self.transactionId = transactionId
        self.verificationCode = verificationCode
        self.type = type
        self.kind = kind
        self.code = code
        self.message = message
        self.field = field
        self.source = source
        self.inputs = inputs
        self.documentId = documentId
    }
}

/// A review as the store holds it: reasons, never values.
package struct ReviewEntry: Sendable, Equatable {
    package var id: Int64
    package var transactionId: String?
    package var documentType: DocumentType?
    package var kind: ReviewKind
    package var code: String
    package var message: String
    package var field: String?
    package var source: String
    /// How many times the document failed.
    package var attempt: Int
    package var failedAt: Date
    package var state: ReviewState
    package var inputs: ReviewInputs
    package var documentId: String?
    /// The transaction's expiry; nil for an unattached failure.
    package var expiresAt: Date?
    package var resolvedAt: Date?
    /// A rejection's reason.
    package var resolution: String?
    package var resolvedBy: String?

    /// The action shown for it: `open`, or how it was closed.
    package var isOpen: Bool { state == .open }
}

/// A page of the review queue.
package struct ReviewPage: Sendable, Equatable {
    package var entries: [ReviewEntry]
    /// The id the next page starts after; nil on the last page.
    package var next: Int64?
}

/// Which reviews a list shows.
package struct ReviewFilter: Sendable, Equatable {
    /// Only these states (nil: every state).
    package var states: Set<ReviewState>? = [.open]
    package var code: String?
    package var transactionId: String?

    package init(states: Set<ReviewState>? = [.open], code: String? = nil, transactionId: String? = nil) {
        self.states = states
        self.code = code
        self.transactionId = transactionId
    }
}

/// Counts for the overview and `/metrics`.
package struct ReviewCounts: Sendable, Equatable {
    /// Open reviews by error code.
    package var open: [String: Int] = [:]
    /// Failed documents (every attempt) by error code.
    package var failed: [String: Int] = [:]

    package init(open: [String: Int] = [:], failed: [String: Int] = [:]) {
        self.open = open
        self.failed = failed
    }
}

/// An operator's action on a review, taken before it is carried out, so that two operators never both carry it out.
package enum ReviewAction: String, Sendable {
    case accept, replay, reject

    /// The state a review ends in once the action is done.
    var closes: ReviewState {
        switch self {
        case .accept: .accepted
        case .replay: .replayed
        case .reject: .rejected
        }
    }
}

/// How taking a review for an action went.
package enum ReviewClaim: Sendable, Equatable {
    case taken(ReviewEntry)
    /// Closed already (by another operator, or by a later document).
    case closed(ReviewEntry)
    /// Another operator is carrying out an action on it until then.
    case held(ReviewEntry, until: Date)
}
