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

/// A document as a release before the document secret named it, and what the store renames it to.
struct LegacyDocument: Sendable {
    var id: String
    var transactionId: String
    var contentHash: String
    var fields: String
}

struct DocumentRename: Sendable {
    var from: String
    var to: String
    var contentHash: String
    /// The fields sealed to the new id.
    var fields: String
}

/// A sealed value as the store turns it into another (sealed under a new key, or naming renamed documents); the
/// same string when nothing changes.
package typealias SealedRewrite = @Sendable (_ stored: String, _ column: SealedColumn, _ row: String) throws(StoreError) -> String

/// What the store decided for the documents an earlier release named, and how to rewrite the sealed texts that name
/// them (other parts' values included).
struct DocumentRenames: Sendable {
    var renames: [DocumentRename]
    var rewrite: SealedRewrite
    var map: [String: String] { Dictionary(uniqueKeysWithValues: renames.map { ($0.from, $0.to) }) }
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
    func readKey() async throws(StoreError) -> (wrapped: String?, holdsTransactions: Bool)
    /// Records a new store's wrapped data key unless one is recorded already; returns the one recorded.
    func recordKey(_ wrapped: String, at time: Date) async throws(StoreError) -> String
    /// This process writes only while the recorded key is `wrapped`: once another encrypted the store or rotated its
    /// key, its values would not open among the others (`StoreError.keyChangedElsewhere`).
    func expectKey(_ wrapped: String?)
    /// The document secret as stored (sealed in an encrypted store); nil when the store has none yet.
    func readDocumentSecret() async throws(StoreError) -> String?
    /// Records the secret unless another process recorded one first (then returns that one), and renames the
    /// documents an earlier release named as `rename` decides, in the same database transaction. Returns the secret
    /// recorded and how many documents were renamed.
    func recordDocumentSecret(
        _ sealed: String, at time: Date,
        renaming rename: @escaping @Sendable ([LegacyDocument]) throws(StoreError) -> DocumentRenames
    ) async throws(StoreError) -> (secret: String, renamed: Int)
    /// Replaces the recorded key `old` (nil: none, the store is in clear) with `new`, and every sealed value with
    /// `rewrite` of it, in one database transaction; returns how many values. Refused when the key is not `old`.
    func changeKey(from old: String?, to new: String, at time: Date, _ rewrite: @escaping SealedRewrite) async throws(StoreError) -> Int
    /// Rewrites what holds removed or replaced values (after a purge, `resealed` after a key change), so that they
    /// leave the files.
    func reclaim(resealed: Bool) async throws(StoreError)

    // MARK: Reads

    /// The transaction, and whether `document` is recorded (false when not asked).
    func read(transaction id: String, document: String?) async throws(StoreError) -> (TransactionRow, Bool)?
    /// The transaction that owns a document, and the document's type.
    func read(ownerOf documentId: String) async throws(StoreError) -> (TransactionRow, DocumentType)?
    func document(id: String) async throws(StoreError) -> DocumentRow?
    func report(id: String) async throws(StoreError) -> ReportRows?
    func submission(documentId: String) async throws(StoreError) -> SubmissionRecord?
    /// Protect's state as its column holds it.
    func protectState(of transactionId: String) async throws(StoreError) -> String?
    func summaries(status: DocumentSubmissionStatus?) async throws(StoreError) -> [SummaryRow]
    /// One page of the list, newest change first, and the cursor of its last line when more follow.
    func page(
        status: DocumentSubmissionStatus?, search: String?, limit: Int, after cursor: TransactionCursor?
    ) async throws(StoreError) -> ([SummaryRow], TransactionCursor?)
    func overview(collectedSince since: Date) async throws(StoreError) -> StoreOverview
    func count(of ids: [String], status: DocumentSubmissionStatus) async throws(StoreError) -> Int

    // MARK: Writes

    /// Inserts the transaction (its values sealed already) and its statuses unless it exists, in one round trip.
    func insert(_ new: NewTransaction, state: TransactionState) async throws(StoreError) -> InsertOutcome
    /// Writes the change in one database transaction if the transaction is still at `change.version` (and bumps it),
    /// and a submission's document is the transaction's; nil, having written nothing, when not.
    func write(_ change: StatusChange) async throws(StoreError) -> WrittenChange?
    /// Records an attempt without a status change, by `SubmissionRules.ended`.
    func saveSubmission(_ end: SubmissionEnd, at time: Date) async throws(StoreError) -> SubmissionRecord
    /// Claims by `SubmissionRules.claim`, in one database transaction.
    func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws(StoreError) -> SubmissionClaim
    func releaseSubmission(documentId: String, owner: String) async throws(StoreError)
    /// Stores the signals unless the transaction has some or was purged; returns what it holds (nil: no such
    /// transaction).
    func setSignals(_ sealed: String, of transactionId: String) async throws(StoreError) -> String??
    /// Reads Protect's state with the transaction locked against other updates of it, and writes what `body` decides.
    /// `body` gets whether the transaction was purged. Nil when there is no such transaction.
    func updateProtectState<T: Sendable>(
        of transactionId: String, _ body: @escaping @Sendable (_ purged: Bool, _ stored: String?) throws(StoreError) -> (ProtectStateWrite, T)
    ) async throws(StoreError) -> T?

    // MARK: Retention

    /// The transactions not purged yet that are beyond the newest `keepNewest` (by creation) or created before
    /// `createdBefore`, oldest first.
    func purgeCandidates(keepNewest: Int?, createdBefore: Date?) async throws(StoreError) -> [PurgeCandidate]
    /// Empties the identity data of the transactions still at their version, records the purge in their history, in
    /// one database transaction; returns the ids it purged.
    func purge(_ transactions: [(id: String, version: Int64)], at time: Date, reason: String) async throws(StoreError) -> [String]
}
