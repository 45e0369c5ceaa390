import Foundation
import VerifyModel

/// A transaction as the store keeps it.
package struct StoredTransaction: Sendable, Equatable {
    package var id: String
    package var verificationCode: String
    package var envId: String?
    package var state: TransactionState
    package var createdAt: Date
    package var updatedAt: Date
    /// The Protect signals payload shared by every submission of the transaction (CONTRACT §5).
    package var signals: String?
    /// Bumped by every status change: a write names the version it was decided on, and is refused when the row
    /// has moved on.
    package var version: Int64
    /// When the retention policy purged its identity data (its verification code is then empty); nil while it has it.
    package var purgedAt: Date? = nil

    package var policy: [DocumentType: DocumentRequirement] { state.policy }
    package var expiresAt: Date { state.expiresAt }
}

/// What the first document of a transaction creates.
package struct NewTransaction: Sendable, Equatable {
    package var id: String
    package var verificationCode: String
    package var envId: String?
    package var policy: [DocumentType: DocumentRequirement]
    package var createdAt: Date
    package var expiresAt: Date
    package var signals: String?

    package init(
        id: String, verificationCode: String, envId: String? = nil, policy: [DocumentType: DocumentRequirement],
        createdAt: Date, expiresAt: Date, signals: String? = nil
    ) {
        self.id = id
        self.verificationCode = verificationCode
        self.envId = envId
        self.policy = policy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.signals = signals
    }
}

/// A captured and parsed document.
package struct DocumentRecord: Sendable, Equatable {
    /// Random (`DocumentIdentity.newDocumentId`): a re-run of the same input finds the document by its fingerprint.
    package var id: String
    package var transactionId: String
    package var type: DocumentType
    package var fields: DocumentFields
    /// Where it came from (a path, or a stream line's id); never personal data.
    package var source: String
    /// The content fingerprint (`DocumentIdentity.fingerprint`): how the store recognises the same document again.
    package var contentHash: String
    /// The plain `ContentDigest` the fingerprint is made from, kept sealed so that a new secret can fingerprint the
    /// document again; nil when unknown (and as read back: it is never shown).
    package var contentDigest: String?
    package var createdAt: Date

    package init(
        id: String, transactionId: String, type: DocumentType, fields: DocumentFields, source: String,
        contentHash: String, contentDigest: String? = nil, createdAt: Date
    ) {
        self.id = id
        self.transactionId = transactionId
        self.type = type
        self.fields = fields
        self.source = source
        self.contentHash = contentHash
        self.contentDigest = contentDigest
        self.createdAt = createdAt
    }
}

/// One row of a transaction's append-only history.
package struct TransitionRecord: Sendable, Equatable, Codable {
    package var sequence: Int64
    package var transactionId: String
    /// nil for a move of the transaction itself.
    package var documentType: DocumentType?
    package var from: String
    package var to: String
    package var at: Date
    package var reason: String
}

package enum SubmissionOutcome: String, Sendable, Codable, CaseIterable {
    case pending = "PENDING"
    case accepted = "ACCEPTED"
    case failed = "FAILED"
}

/// The submission of one document: how often it was tried and how it ended.
package struct SubmissionRecord: Sendable, Equatable, Codable {
    package var documentId: String
    package var attempts: Int
    package var outcome: SubmissionOutcome
    package var error: String?
    package var updatedAt: Date
}

/// Who sends a document (CONTRACT §8): a submission is claimed in the store before it is sent, so that any number of
/// processes on one store send it once.
package enum SubmissionClaim: Sendable, Equatable {
    /// The claimant holds it until the claim's expiry: send, then finish the submission (which ends the claim).
    /// `attempts`: the submission's finished attempts so far, by any process.
    case claimed(attempts: Int)
    /// Accepted already: there is nothing to send.
    case accepted
    /// Another claimant holds it until `until`; after that it may be taken over. `attempts` as above, so that a
    /// claimant that waited can tell whether the holder finished it (with a failure) or let it go.
    case held(until: Date, attempts: Int)
}

/// A line of the transaction list.
package struct TransactionSummary: Sendable, Equatable, Codable {
    package var id: String
    package var status: DocumentSubmissionStatus
    package var documents: [DocumentType: DocumentStatus]
    package var updatedAt: Date
    package var expiresAt: Date
    package var data: DataState
}

/// Everything `verify-pipeline status ID` shows. Document fields are left out: they are personal data.
package struct TransactionReport: Sendable, Equatable {
    package struct Document: Sendable, Equatable {
        package var id: String
        package var type: DocumentType
        package var source: String
        package var keys: [DocumentKey]
        package var submission: SubmissionRecord?
    }

    package var transaction: StoredTransaction
    package var documents: [Document]
    package var history: [TransitionRecord]
    /// Whether the transaction's identity data is in the store in clear, sealed, or purged.
    package var data: DataState
    /// The reviews of its documents that failed, by document type (CONTRACT §12).
    package var reviews: [ReviewEntry] = []
}

/// How `collect` went.
package enum CollectOutcome: Sendable, Equatable {
    /// The document was new: it was stored and these transitions applied.
    case collected(StoredTransaction, [TransitionRecord], RecordedDocument)
    /// The transaction holds it already (its id, or its content fingerprint: the same input again): nothing changed.
    case alreadyRecorded(StoredTransaction, RecordedDocument)
}

/// A store failure: a code to tell failures apart by (as PostgresNIO's `PSQLError` has), the detail it names (an id,
/// a location, the database's message; never a document value), and the sentence a person reads.
package struct StoreError: CodedError, Equatable, CustomStringConvertible {
    /// What went wrong, to match on: `error.code == .tampered`.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ name: String) { description = name }

        /// The model refused the move; nothing was written.
        package static let transition = Code("transition")
        package static let unknownTransaction = Code("unknownTransaction")
        /// A QR names a known transaction with another verification code.
        package static let verificationCodeMismatch = Code("verificationCodeMismatch")
        package static let unknownDocument = Code("unknownDocument")
        /// The store cannot be opened or created (a configuration error).
        package static let cannotOpen = Code("cannotOpen")
        /// A command that only reads met a store that misses this version's last migrations.
        package static let olderSchema = Code("olderSchema")
        /// The store was written by a newer verify-pipeline.
        package static let newerSchema = Code("newerSchema")
        /// Another process encrypted the store, or rotated its key, after this one opened it.
        package static let keyChangedElsewhere = Code("keyChangedElsewhere")
        /// `encrypt` or `rotate-key` found the key not as this process opened it.
        package static let keyNotAsOpened = Code("keyNotAsOpened")
        /// PostgreSQL: a key change needs the store to itself.
        package static let othersConnected = Code("othersConnected")
        /// The store's file was deleted, moved or replaced while this process had it open.
        package static let fileGone = Code("fileGone")
        /// A file that is not a store, or one SQLite cannot open.
        package static let unreadable = Code("unreadable")
        /// The database failed a statement or did not answer: the store could not be asked, for now.
        package static let database = Code("database")
        /// The task was cancelled while it waited to write.
        package static let cancelled = Code("cancelled")
        /// A sealed value does not open where it is (its column and row): it was changed, or copied from elsewhere.
        package static let tampered = Code("tampered")
        /// The retention policy purged the transaction's data: it takes no more documents.
        package static let purged = Code("purged")
    }

    package var code: Code
    /// What it names: a transaction's or document's id, the store's location, a sealed value's place, the database's
    /// message.
    package var detail: String
    /// The model's refusal, for `.transition`.
    package var transitionError: TransitionError?
    package let description: String

    private init(_ code: Code, _ detail: String, _ description: String, transition: TransitionError? = nil) {
        (self.code, self.detail, self.description, self.transitionError) = (code, detail, description, transition)
    }

    package static func transition(_ error: TransitionError) -> StoreError {
        StoreError(.transition, error.description, error.description, transition: error)
    }
    package static func unknownTransaction(_ id: String) -> StoreError {
        StoreError(.unknownTransaction, id, "no transaction '\(id)' in the store")
    }
    package static func verificationCodeMismatch(_ id: String) -> StoreError {
        StoreError(.verificationCodeMismatch, id, "the QR's verification code is not the one transaction '\(id)' was opened with")
    }
    package static func unknownDocument(_ id: String) -> StoreError { StoreError(.unknownDocument, id, "no document '\(id)' in the store") }
    package static func cannotOpen(_ reason: String) -> StoreError { StoreError(.cannotOpen, reason, "cannot open the store: \(reason)") }
    package static func newerSchema(_ location: String) -> StoreError {
        StoreError(.newerSchema, location, "the store at \(location) was written by a newer verify-pipeline; upgrade to read it")
    }
    package static func olderSchema(_ location: String, missing: Int) -> StoreError {
        StoreError(
            .olderSchema, location,
            "cannot open the store: the store at \(location) misses \(missing) of this version's schema migrations (an earlier verify-pipeline wrote it): "
                + "a command that writes to it (run, stream, enqueue or worker) brings it up to date")
    }
    package static func keyChangedElsewhere(wasEncrypted: Bool) -> StoreError {
        StoreError(
            .keyChangedElsewhere, "",
            wasEncrypted
                ? "cannot open the store: the store's data key was rotated by another process: start this one again with the store's current key"
                : "cannot open the store: the store was encrypted by another process while this one wrote in clear: start it again with the store's key"
        )
    }
    package static func keyNotAsOpened(_ location: String, encrypting: Bool) -> StoreError {
        StoreError(
            .keyNotAsOpened, location,
            encrypting
                ? "cannot open the store: \(location) is encrypted already"
                : "cannot open the store: the key of \(location) was rotated by another process meanwhile; nothing was changed")
    }
    package static func othersConnected(_ location: String, count: Int64, encrypting: Bool) -> StoreError {
        StoreError(
            .othersConnected, location,
            "cannot open the store: \(location) has \(count) other session(s) connected (a worker, a run, serve): stop every process using the store, then "
                + (encrypting ? "encrypt it" : "rotate its key"))
    }
    package static func fileGone(_ location: String) -> StoreError {
        StoreError(
            .fileGone, location,
            "cannot open the store: the store file \(location) was deleted, moved or replaced while in use: nothing more is written to it")
    }
    package static func unreadable(_ location: String, _ reason: String) -> StoreError {
        StoreError(.unreadable, location, "cannot open the store: \(location): \(reason)")
    }
    /// A row whose document statuses do not read as the schema allows.
    static func unreadableStatus(of transactionId: String) -> StoreError {
        .database("transaction \(transactionId) has an unreadable document status")
    }
    /// A column holds a value its type does not have (the schema's CHECK constraints keep them out).
    static func unknownValue(_ type: Any.Type) -> StoreError { .database("the store holds an unknown \(type) value") }
    package static func database(_ message: String) -> StoreError { StoreError(.database, message, "store error: \(message)") }
    package static var cancelled: StoreError { StoreError(.cancelled, "", "the store write was cancelled before it started") }
    package static func tampered(_ place: String) -> StoreError {
        StoreError(.tampered, place, "the sealed value at \(place) does not open: it was altered or moved from another row")
    }
    package static func purged(_ id: String) -> StoreError {
        StoreError(.purged, id, "transaction '\(id)' had its identity data purged under the retention policy and takes no more documents")
    }

    /// The spec's code when the failure belongs to one document.
    package var failureCode: FailureCode {
        switch code {
        case .transition: transitionError?.failureCode ?? .document(.submissionError)
        case .unknownTransaction, .verificationCodeMismatch, .purged: .document(.initiateDocumentTransactionError)
        default: .document(.submissionError)
        }
    }

    package var message: String { description }

    /// The model refused the move from the status the document has now (another writer moved it first).
    package var isIllegalMove: Bool {
        if case .illegalMove? = transitionError { true } else { false }
    }

    /// A failure to open the store, of any kind: a configuration error (exit 2).
    package var isOpening: Bool {
        [.cannotOpen, .olderSchema, .newerSchema, .keyChangedElsewhere, .keyNotAsOpened, .othersConnected, .fileGone, .unreadable]
            .contains(code)
    }
}

/// Where a page of the transaction list ends: its last transaction's update time and id.
package struct TransactionCursor: Sendable, Equatable {
    /// The last row's time, to the microsecond a store keeps (PostgreSQL keeps microseconds; a cursor in
    /// milliseconds skipped and repeated rows there).
    package var time: BoundedTime
    package var id: String

    package var updatedAt: Date { time.date }

    package init(time: BoundedTime, id: String) {
        self.time = time
        self.id = id
    }

    /// A row's time; times outside `BoundedTime` (which no store writes) are clamped to its ends.
    package init(updatedAt: Date, id: String) {
        let microseconds = updatedAt.timeIntervalSince1970 * 1_000_000
        let clamped = microseconds.isFinite ? min(max(microseconds.rounded(), 0), Double(BoundedTime.microsecondRange.upperBound)) : 0
        self.init(time: BoundedTime(microseconds: Int64(clamped))!, id: id)
    }

    /// As an API passes it (`after=`): `u`, microseconds since 1970, `|` and the id, base64url.
    package var text: String {
        Data("u\(time.microseconds)|\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Any text a client sends: nil unless it is a cursor whose time `BoundedTime` holds (earlier releases' cursors,
    /// in milliseconds without the `u`, are read too).
    package init?(text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 512, let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8),
            let bar = decoded.firstIndex(of: "|")
        else { return nil }
        let number = decoded[..<bar]
        let microseconds: Int64?
        if number.hasPrefix("u") {
            microseconds = Int64(number.dropFirst())
        } else {
            microseconds = Int64(number).flatMap { $0.multipliedReportingOverflow(by: 1000).overflow ? nil : $0 * 1000 }
        }
        guard let microseconds, let time = BoundedTime(microseconds: microseconds) else { return nil }
        self.init(time: time, id: String(decoded[decoded.index(after: bar)...]))
    }
}

/// One page of the transaction list, and where the next one starts (nil: this is the last).
package struct TransactionPage: Sendable, Equatable {
    package var transactions: [TransactionSummary]
    package var next: TransactionCursor?
}

/// What the operator's view counts in the store.
package struct StoreOverview: Sendable, Equatable {
    package var transactions: [DocumentSubmissionStatus: Int]
    /// Documents collected since the time asked for.
    package var collected: Int
}

/// How long identity data stays (the pipeline's `retention`), with the modes of PingOne's push storage.
package struct Retention: Sendable, Equatable {
    package enum Mode: String, Sendable, CaseIterable {
        case none, count, age, hybrid
    }

    package var mode: Mode
    /// count and hybrid: the newest this many transactions (by creation) keep their data.
    package var keep: Int
    /// age and hybrid: the data of transactions created longer ago than this goes.
    package var maxAge: TimeInterval

    package init(mode: Mode = .none, keep: Int = 10_000, maxAge: TimeInterval = 30 * 86_400) {
        self.mode = mode
        self.keep = keep
        self.maxAge = maxAge
    }

    var byCount: Bool { mode == .count || mode == .hybrid }
    var byAge: Bool { mode == .age || mode == .hybrid }

    /// As the history records it: `retention count 100`, `retention age 30d`, `retention hybrid 100, 30d`.
    package var label: String {
        let age =
            maxAge.truncatingRemainder(dividingBy: 86_400) == 0
            ? "\(Int(maxAge / 86_400))d"
            : maxAge.truncatingRemainder(dividingBy: 3600) == 0 ? "\(Int(maxAge / 3600))h" : "\(Int(maxAge))s"
        return switch mode {
        case .none: "retention none"
        case .count: "retention count \(keep)"
        case .age: "retention age \(age)"
        case .hybrid: "retention hybrid \(keep), \(age)"
        }
    }

    /// The history's reason for a purge.
    var reason: String { "identity data purged (\(label))" }
}

/// What a purge removed, or would remove in a dry run.
package struct PurgeOutcome: Sendable, Equatable {
    /// The transactions whose data went, oldest first.
    package var transactions: [String]
    /// Their documents.
    package var documents: Int
    /// Failed documents whose inputs, kept for review, went by their age.
    package var reviewInputs = 0

    package init(transactions: [String], documents: Int, reviewInputs: Int = 0) {
        self.transactions = transactions
        self.documents = documents
        self.reviewInputs = reviewInputs
    }
}
