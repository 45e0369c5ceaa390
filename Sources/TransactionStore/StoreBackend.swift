import Foundation
import VerifyModel

// The seam between the store, which decides, and a database, which keeps rows. A backend reads and writes rows with
// their sealed values as stored; it never seals, opens, chooses a key, selects what a purge takes or phrases a
// message: `TransactionStore` does all of that once, for every backend.

/// A transaction's row with its documents' statuses; its verification code and signals as stored (sealed in an
/// encrypted store).
struct TransactionRow: Sendable {
    var id: String
    var verificationCode: String
    var envId: String?
    var submissionStatus: DocumentSubmissionStatus
    var createdAt: Date
    var updatedAt: Date
    var expiresAt: Date
    var signals: String?
    var version: Int64
    var purgedAt: Date?
    var policy: [DocumentType: DocumentRequirement] = [:]
    var documents: [DocumentType: DocumentStatus] = [:]

    var state: TransactionState {
        TransactionState(policy: policy, documents: documents, submissionStatus: submissionStatus, expiresAt: expiresAt)
    }
}

/// A document's row; `fields` as stored (sealed in an encrypted store, empty once purged).
struct DocumentRow: Sendable {
    var id: String
    var transactionId: String
    var type: DocumentType
    var fields: String
    var source: String
    var contentHash: String
    var createdAt: Date
}

/// A line of the transaction list as stored.
struct SummaryRow: Sendable {
    var id: String
    var status: DocumentSubmissionStatus
    var documents: [DocumentType: DocumentStatus]
    var updatedAt: Date
    var expiresAt: Date
    var purgedAt: Date?
}

/// Everything a report shows, read in one statement (one snapshot).
struct ReportRows: Sendable {
    var transaction: TransactionRow
    var documents: [(DocumentRow, SubmissionRecord?)]
    var history: [TransitionRecord]
    /// Its documents' reviews, by document type.
    var reviews: [ReviewEntry] = []
}

/// A transaction a purge may take, with what the store needs to decide whether it is finished.
struct PurgeCandidate: Sendable {
    var id: String
    /// The purge writes only transactions still at this version: one that moved on meanwhile waits for the next.
    var version: Int64
    var submissionStatus: DocumentSubmissionStatus
    var expiresAt: Date
    /// Whether a document of it is COLLECTED (waiting for its submission).
    var collecting: Bool
    var documents: Int
}

/// A document as a release before random ids named it (from its content), and what the store renames it to.
struct LegacyDocument: Sendable {
    var id: String
    var transactionId: String
    var type: DocumentType
    var contentHash: String
    var fields: String
}

struct DocumentRename: Sendable {
    var from: String
    var to: String
    /// Its content fingerprint ("" when it has none: a purged document).
    var contentHash: String
    /// The fields sealed to the new id.
    var fields: String
    /// Its content digest sealed to the new id, when known.
    var contentDigest: String?
}

/// A sealed value as the store turns it into another (sealed under a new key, or naming renamed documents); the
/// same string when nothing changes.
package typealias SealedRewrite = @Sendable (_ stored: String, _ column: SealedColumn, _ row: String) throws -> String

/// A document's fingerprint under a new document secret, from its content digest as stored (sealed under the old key).
typealias Refingerprint = @Sendable (_ storedDigest: String, _ documentId: String) throws -> String

/// What the store decided for the documents an earlier release named, and how to rewrite the sealed texts that name
/// them (other parts' values included).
struct DocumentRenames: Sendable {
    var renames: [DocumentRename]
    var rewrite: SealedRewrite
    var map: [String: String] { Dictionary(uniqueKeysWithValues: renames.map { ($0.from, $0.to) }) }
}

/// A document about to be collected, looked for in its transaction: by its id, or by its type and content fingerprint.
struct DocumentProbe: Sendable {
    var id: String
    var fingerprint: String
    var type: DocumentType
}

/// What a transaction holds for a probe: the document already recorded, if any, and how many of its type it holds.
struct ProbeResult: Sendable {
    var recorded: (id: String, revision: Int)?
    var documentsOfType: Int
}

/// A failure as a backend writes it: its inputs sealed, and whether it is attached to its transaction (decided by
/// `TransactionStore.recordFailure`).
struct ReviewWrite: Sendable {
    /// nil: unattached.
    var transactionId: String?
    var type: DocumentType?
    var kind: ReviewKind
    var code: String
    var message: String
    var field: String?
    var source: String
    /// Sealed (bound to `ReviewWrite.sealingRow`); nil when none is kept.
    var inputs: String?
    var inputsBytes: Int
    /// `kept` when `inputs` is given, else why not.
    var inputsState: ReviewInputs
    var documentId: String?
    /// An existing review keeps its inputs as they are (`inputs` is then nil).
    var keepInputs = false
    /// The history row's reason.
    var history: String

    /// The row a review's sealed values are bound to: its transaction and document type (its slot in the transaction).
    static func sealingRow(_ transactionId: String, _ type: DocumentType) -> String { "\(transactionId)/\(type.rawValue)" }
}

/// How Protect's state changes in `updateProtectState`.
enum ProtectStateWrite: Sendable {
    case keep
    case delete
    case save(String)
}

/// The rows of a store. SQLite (GRDB) and PostgreSQL (postgres-nio) implement it; neither decides anything.
protocol StoreBackend: Sendable {
    /// The file or the database (without its password), for messages.
    var location: String { get }

    // MARK: Keys and the document secret

    /// The data key as the store keeps it wrapped (nil: the store is in clear), and whether it holds transactions.
    func readKey() async throws -> (wrapped: String?, holdsTransactions: Bool)
    /// Records a new store's wrapped data key unless one is recorded already; returns the one recorded.
    func recordKey(_ wrapped: String, at time: Date) async throws -> String
    /// This process writes only while the recorded key is `wrapped`: once another encrypted the store or rotated its
    /// key, its values would not open among the others (`StoreError.keyChangedElsewhere`).
    func expectKey(_ wrapped: String?)
    /// The document secret as stored (sealed in an encrypted store), and whether the store's documents have random
    /// ids (false: an earlier release named them from their content); nil when the store has no secret yet.
    func readDocumentSecret() async throws -> (secret: String, randomIds: Bool)?
    /// Records `sealed` as the secret unless the store has one (then keeps that one), and, unless the documents have
    /// random ids already, renames every document as `rename` decides (given the secret in force) and records that
    /// they have, in one database transaction. Returns the secret recorded and how many documents were renamed.
    func recordDocumentSecret(
        _ sealed: String, at time: Date,
        renaming rename: @escaping @Sendable (_ secret: String, [LegacyDocument]) throws -> DocumentRenames
    ) async throws -> (secret: String, renamed: Int)
    /// Replaces the recorded key `old` (nil: none, the store is in clear) with `new`, every sealed value with
    /// `rewrite` of it, and every content fingerprint with `refingerprint` of its document's digest (a document
    /// without one keeps no fingerprint), in one database transaction; returns how many values. Refused when the key
    /// is not `old`.
    func changeKey(
        from old: String?, to new: String, at time: Date, _ rewrite: @escaping SealedRewrite, refingerprint: @escaping Refingerprint
    ) async throws -> Int
    /// Rewrites what holds removed or replaced values (after a purge, `resealed` after a key change), so that they
    /// leave the files.
    func reclaim(resealed: Bool) async throws

    // MARK: Reads

    /// The transaction, and what it holds for `probe` (nil when not asked).
    func read(transaction id: String, probe: DocumentProbe?) async throws -> (TransactionRow, ProbeResult?)?
    /// The transaction that owns a document, and the document's type.
    func read(ownerOf documentId: String) async throws -> (TransactionRow, DocumentType)?
    func document(id: String) async throws -> DocumentRow?
    func report(id: String) async throws -> ReportRows?
    func submission(documentId: String) async throws -> SubmissionRecord?
    /// Protect's state as its column holds it.
    func protectState(of transactionId: String) async throws -> String?
    func summaries(status: DocumentSubmissionStatus?) async throws -> [SummaryRow]
    /// One page of the list, newest change first, and the cursor of its last line when more follow.
    func page(
        status: DocumentSubmissionStatus?, search: String?, limit: Int, after cursor: TransactionCursor?
    ) async throws -> ([SummaryRow], TransactionCursor?)
    func overview(collectedSince since: Date) async throws -> StoreOverview
    /// Documents collected since `since`, by minute (UTC, `yyyy-MM-dd HH:mm`), from the transitions' time index.
    func collectedByMinute(since: Date) async throws -> [String: Int]
    func count(of ids: [String], status: DocumentSubmissionStatus) async throws -> Int

    // MARK: Writes

    /// Inserts the transaction (its values sealed already) and its statuses unless it exists, in one round trip.
    func insert(_ new: NewTransaction, state: TransactionState) async throws -> InsertOutcome
    /// Writes the change in one database transaction if the transaction is still at `change.version` (and bumps it),
    /// and a submission's document is the transaction's; nil, having written nothing, when not.
    func write(_ change: StatusChange) async throws -> WrittenChange?
    /// Records an attempt without a status change, by `SubmissionRules.ended`.
    func saveSubmission(_ end: SubmissionEnd, at time: Date) async throws -> SubmissionRecord
    /// Claims by `SubmissionRules.claim`, in one database transaction.
    func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws -> SubmissionClaim
    func releaseSubmission(documentId: String, owner: String) async throws
    /// Stores the signals unless the transaction has some or was purged; returns what it holds (nil: no such
    /// transaction).
    func setSignals(_ sealed: String, of transactionId: String) async throws -> String??
    /// Reads Protect's state with the transaction locked against other updates of it, and writes what `body` decides.
    /// `body` gets whether the transaction was purged. Nil when there is no such transaction.
    func updateProtectState<T: Sendable>(
        of transactionId: String, _ body: @escaping @Sendable (_ purged: Bool, _ stored: String?) throws -> (ProtectStateWrite, T)
    ) async throws -> T?

    // MARK: Retention

    /// The transactions not purged yet that are beyond the newest `keepNewest` (by creation) or created before
    /// `createdBefore`, oldest first.
    func purgeCandidates(keepNewest: Int?, createdBefore: Date?) async throws -> [PurgeCandidate]
    /// Empties the identity data of the transactions still at their version (their documents' fields, content
    /// fingerprints and digests too), records the purge in their history, in one database transaction; returns the ids
    /// it purged.
    func purge(_ transactions: [(id: String, version: Int64)], at time: Date, reason: String) async throws -> [String]

    // MARK: Reviews

    /// Records a failure: a review of its own for an unattached one; for one attached to a transaction, the review of its
    /// document type, made or opened again (one more attempt, the new error and inputs, any claim ended), with a history
    /// row. Inputs are kept only while those kept stay within `maxStoreBytes` (else `storeFull`).
    func recordReview(_ write: ReviewWrite, maxStoreBytes: Int, at time: Date) async throws -> ReviewEntry
    func reviews(_ filter: ReviewFilter, limit: Int, offset: Int) async throws -> [ReviewEntry]
    func review(id: Int64) async throws -> ReviewEntry?
    func review(transactionId: String, type: DocumentType) async throws -> ReviewEntry?
    /// The review's inputs as stored (sealed in an encrypted store).
    func reviewInputs(id: Int64) async throws -> String?
    /// Takes an open review for `action` unless another owner holds it unexpired, recording the action it will close
    /// with; with `history`, a history row on the transaction.
    func claimReview(
        id: Int64, owner: String, action: ReviewAction, operator name: String, until expiry: Date, at time: Date, history: String?
    ) async throws -> ReviewClaim
    /// Closes the open review `owner` holds as `state`, with a history row; false when it is not open or not theirs.
    func resolveReview(
        id: Int64, owner: String, state: ReviewState, resolution: String?, note: String?, at time: Date, history: String
    ) async throws -> Bool
    /// Ends `owner`'s claim on the review without closing it.
    func releaseReview(id: Int64, owner: String) async throws
    /// A history row on the review's transaction (an export).
    func recordReviewEvent(id: Int64, at time: Date, history: String) async throws
    /// The document types of the transaction with an open review.
    func openReviewTypes(of transactionId: String) async throws -> Set<DocumentType>
    func reviewCounts() async throws -> ReviewCounts
    /// Removes the kept inputs of reviews that failed before `time` (`ReviewInputs.expired`); returns how many.
    func expireReviewInputs(failedBefore time: Date) async throws -> Int

    // MARK: The operator's view's sessions

    /// Records a session by its id's hash, after deleting every session expired at `time`.
    func insertSession(hash: String, expiresAt: Date, at time: Date) async throws
    /// The session's expiry; nil when there is no such session.
    func sessionExpiry(hash: String) async throws -> Date?
    func deleteSession(hash: String) async throws
}
