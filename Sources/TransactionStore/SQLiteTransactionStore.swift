import Foundation
import GRDB
import Logging
import Synchronization
import VerifyModel

/// The embedded store: one SQLite file in WAL mode through one GRDB `DatabasePool`.
/// Writes are serialised by the pool, so a read-modify-write inside one `write { }` cannot lose an update.
package final class SQLiteTransactionStore: TransactionStore {
    package let path: String
    private let pool: DatabasePool
    private let turns = TransactionTurns()
    private let recent = RecentTransactions()
    private var core: StoreCore<SQLiteTransactionStore> { StoreCore(rows: self, turns: turns, recent: recent) }
    /// How values are sealed, and the data key as the store keeps it wrapped (nil in clear). `encrypt` and `rotateKey`
    /// change them.
    private let keys: Mutex<(sealing: StoreSealing, wrapped: String?)>
    var sealing: StoreSealing { keys.withLock { $0.sealing } }
    package var isEncrypted: Bool { sealing.isSealed }
    private let identity: DocumentIdentity
    package func documentIdentity() throws(StoreError) -> DocumentIdentity { identity }

    /// Opens the store at `path`, creating it (mode 0600) when `create` is true. Migrations run on open, then the data
    /// key is unwrapped with `encryption`'s key (or made, for a new store that requires encryption). An existing
    /// store that its group or others may read is tightened to 0600, with a warning.
    ///
    /// `readOnly` (commands that only read) migrates nothing: a store that misses migrations of this version is
    /// refused, naming how to bring it up to date.
    package init(
        path: String, create: Bool = true, readOnly: Bool = false, encryption: StoreEncryption = .ifEncrypted(nil),
        logger: Logger = Logger(label: "verify-pipeline.store")
    ) throws(StoreError) {
        self.path = path
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists {
            guard create else { throw .cannotOpen("no store at \(path)") }
            // Identity data: readable by its owner only. SQLite gives the -wal and -shm files the same mode. Another
            // process may create it first (EEXIST): both then open the same store.
            let descriptor = Foundation.open(path, O_CREAT | O_WRONLY | O_EXCL, 0o600)
            guard descriptor >= 0 || errno == EEXIST else { throw .cannotOpen("cannot create \(path): \(String(cString: strerror(errno)))") }
            if descriptor >= 0 { close(descriptor) }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.foreignKeysEnabled = true
        do {
            let (pool, opened, identity, renamed) = try Self.retryingWhenBusy {
                let pool = try DatabasePool(path: path, configuration: configuration)
                let superseded = try pool.read { db in try Self.migrator.hasBeenSuperseded(db) }
                if superseded { throw StoreError.newerSchema(path) }
                if readOnly {
                    let applied = try pool.read { db in try Self.migrator.appliedIdentifiers(db) }
                    let missing = Self.migrator.migrations.filter { !applied.contains($0) }.count
                    if missing > 0 { throw StoreError.olderSchema(path, missing: missing) }
                } else {
                    try Self.migrate(pool)
                }
                let opened = try Self.openKeys(pool, encryption, location: path)
                let (identity, renamed) = try Self.openIdentity(pool, opened.sealing)
                return (pool, opened, identity, renamed)
            }
            self.pool = pool
            keys = Mutex(opened)
            self.identity = identity
            if renamed > 0 {
                // The plain ids and hashes leave the file (and its WAL) with the pages that held them.
                try pool.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM")
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
                logger.notice("documents named by an earlier version were renamed with the store's secret", metadata: ["documents": "\(renamed)"])
            }
            // Only once the file has shown itself a store: a file that is not one is left as it was.
            if exists { Self.tightenPermissions(path, logger: logger) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .cannotOpen("\(path): \(Self.describe(error))")
        }
    }

    /// Runs `open` again, up to five times, when SQLite answers "database is locked" at once: processes that open a
    /// new store together race to set it up (WAL mode, migrations, its key), and a read that must become a write gets
    /// SQLITE_BUSY without waiting for the busy timeout. Every step of the open is idempotent.
    static func retryingWhenBusy<T>(_ open: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try open()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 5 {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.02 * Double(attempt))
            }
        }
    }

    /// Reads the wrapped data key and decides with `encryption`. Only a new encrypted store writes: it records its key,
    /// unless another process recorded one first (then that one must open). Reading first keeps processes that open
    /// the store together from queueing for its write lock.
    static func openKeys(
        _ pool: DatabasePool, _ encryption: StoreEncryption,
        location: String
    ) throws -> (sealing: StoreSealing, wrapped: String?) {
        let (wrapped, holdsTransactions) = try pool.read { db in
            (
                try String.fetchOne(db, sql: "SELECT wrappedKey FROM storeKeys WHERE id = 1"),
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM transactions)") ?? false
            )
        }
        let (sealing, newWrapped) = try StoreSealing.decide(
            wrapped: wrapped, holdsTransactions: holdsTransactions, encryption,
            location: location)
        guard let newWrapped else { return (sealing, wrapped) }
        return try pool.write { db in
            if let recorded = try String.fetchOne(db, sql: "SELECT wrappedKey FROM storeKeys WHERE id = 1") {
                return (try StoreSealing.decide(wrapped: recorded, holdsTransactions: true, encryption, location: location).0, recorded)
            }
            try db.execute(sql: "INSERT INTO storeKeys (id, wrappedKey, createdAt) VALUES (1, ?, ?)", arguments: [newWrapped, Date()])
            return (sealing, newWrapped)
        }
    }

    /// The store's document secret; a store without one (new, or written by an earlier version) gets one, and its
    /// documents are renamed with it in the same transaction. Returns how many documents were renamed.
    static func openIdentity(_ pool: DatabasePool, _ sealing: StoreSealing) throws -> (DocumentIdentity, renamed: Int) {
        let select = "SELECT secret FROM documentIdentity WHERE id = 1"
        if let stored = try pool.read({ db in try String.fetchOne(db, sql: select) }) {
            return (try DocumentIdentity(stored: try sealing.open(stored, .documentIdentity, row: "1")), 0)
        }
        return try pool.write { db in
            if let stored = try String.fetchOne(db, sql: select) {
                return (try DocumentIdentity(stored: try sealing.open(stored, .documentIdentity, row: "1")), 0)
            }
            let identity = DocumentIdentity.generate()
            try db.execute(
                sql: "INSERT INTO documentIdentity (id, secret, createdAt) VALUES (1, ?, ?)",
                arguments: [try sealing.seal(identity.stored, .documentIdentity, row: "1"), Date()])
            return (identity, try rename(db, with: identity, sealing))
        }
    }

    /// Renames the documents an earlier version named with plain SHA-256: their rows, submissions and fields (sealed
    /// to their id) and the transitions' reasons that name them.
    static func rename(_ db: Database, with identity: DocumentIdentity, _ sealing: StoreSealing) throws -> Int {
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        var renames: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, transactionId, contentHash, fields FROM documents") {
            guard let rename = identity.rename(id: row["id"], transactionId: row["transactionId"], contentHash: row["contentHash"]) else { continue }
            let stored: String = row["fields"]
            let fields =
                stored.isEmpty
                ? stored
                : try sealing.seal(try sealing.open(stored, .documentFields, row: rename.from), .documentFields, row: rename.to)
            try db.execute(
                sql: "UPDATE documents SET id = ?, contentHash = ?, fields = ? WHERE id = ?",
                arguments: [rename.to, rename.contentHash, fields, rename.from])
            try db.execute(sql: "UPDATE submissions SET documentId = ? WHERE documentId = ?", arguments: [rename.to, rename.from])
            renames[rename.from] = rename.to
        }
        guard !renames.isEmpty else { return 0 }
        for row in try Row.fetchAll(db, sql: "SELECT sequence, reason FROM transitions WHERE reason LIKE '%doc-%'") {
            let reason: String = row["reason"]
            let renamed = DocumentIdentity.renaming(reason, renames)
            if renamed != reason {
                try db.execute(sql: "UPDATE transitions SET reason = ? WHERE sequence = ?", arguments: [renamed, row["sequence"] as Int64])
            }
        }
        return renames.count
    }

    /// Identity data: the store and its -wal and -shm files are for their owner only.
    static func tightenPermissions(_ path: String, logger: Logger) {
        for file in [path, path + "-wal", path + "-shm"] {
            var status = stat()
            guard stat(file, &status) == 0, status.st_mode & 0o077 != 0 else { continue }
            let before = String(status.st_mode & 0o777, radix: 8)
            if chmod(file, 0o600) == 0 {
                logger.warning(
                    "the store file was readable beyond its owner; its mode is now 0600",
                    metadata: ["store.file": "\(file)", "store.mode.before": "\(before)"])
            } else {
                logger.warning(
                    "the store file is readable beyond its owner and its mode cannot be changed",
                    metadata: ["store.file": "\(file)", "store.mode": "\(before)", "error": "\(String(cString: strerror(errno)))"])
            }
        }
    }

    // MARK: - Schema

    /// Named migrations as frozen SQL: never change one once shipped (a test checksums them), never build one from
    /// the application's types; add a new one.
    static let migrations: [(identifier: String, sql: String)] = [
        (
            "v1-transactions-documents-transitions-submissions",
            """
            CREATE TABLE transactions (
                id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
                verificationCode TEXT NOT NULL,
                envId TEXT,
                submissionStatus TEXT NOT NULL CHECK (submissionStatus IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED')),
                createdAt DATETIME NOT NULL,
                updatedAt DATETIME NOT NULL,
                expiresAt DATETIME NOT NULL,
                signals TEXT
            );
            CREATE TABLE documentStatuses (
                transactionId TEXT NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
                documentType TEXT NOT NULL CHECK (documentType IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                requirement TEXT NOT NULL CHECK (requirement IN ('REQUIRED', 'OPTIONAL')),
                status TEXT NOT NULL CHECK (status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')),
                PRIMARY KEY (transactionId, documentType)
            );
            CREATE TABLE documents (
                id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
                transactionId TEXT NOT NULL,
                documentType TEXT NOT NULL,
                fields TEXT NOT NULL,
                source TEXT NOT NULL,
                contentHash TEXT NOT NULL,
                createdAt DATETIME NOT NULL,
                FOREIGN KEY (transactionId, documentType) REFERENCES documentStatuses(transactionId, documentType)
            );
            CREATE INDEX documentsByTransaction ON documents(transactionId);
            CREATE TABLE transitions (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                transactionId TEXT NOT NULL REFERENCES transactions(id),
                documentType TEXT CHECK (documentType IS NULL OR documentType IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                fromStatus TEXT NOT NULL,
                toStatus TEXT NOT NULL,
                at DATETIME NOT NULL,
                reason TEXT NOT NULL,
                CHECK ((documentType IS NULL AND fromStatus IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED') AND toStatus IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED'))
                    OR (documentType IS NOT NULL AND fromStatus IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED') AND toStatus IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')))
            );
            CREATE INDEX transitionsByTransaction ON transitions(transactionId, sequence);
            CREATE TABLE submissions (
                documentId TEXT PRIMARY KEY NOT NULL REFERENCES documents(id),
                attempts INTEGER NOT NULL CHECK (attempts >= 0),
                outcome TEXT NOT NULL CHECK (outcome IN ('PENDING','ACCEPTED','FAILED')),
                error TEXT,
                updatedAt DATETIME NOT NULL
            );
            """
        ),
        (
            "v2-protect-behavior-and-risk",
            """
            ALTER TABLE transactions ADD COLUMN behavior TEXT;
            ALTER TABLE transactions ADD COLUMN riskEvaluation TEXT;
            """
        ),
        // Writes name the version they were decided on (StoreCore): another process's change in between is seen.
        (
            "v3-transaction-versions",
            """
            ALTER TABLE transactions ADD COLUMN version INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0);
            """
        ),
        // Protect's state leaves the transaction's row for a table of its own, one JSON document per transaction
        // that the Protect module defines; the store only keeps it.
        (
            "v4-protect-states",
            """
            CREATE TABLE protectStates (
                transactionId TEXT PRIMARY KEY NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
                state TEXT NOT NULL CHECK (json_valid(state))
            );
            INSERT INTO protectStates (transactionId, state)
                SELECT id, json_object('behavior', CASE WHEN json_valid(behavior) THEN json(behavior) END,
                                       'riskEvaluation', riskEvaluation)
                FROM transactions WHERE behavior IS NOT NULL OR riskEvaluation IS NOT NULL;
            ALTER TABLE transactions DROP COLUMN behavior;
            ALTER TABLE transactions DROP COLUMN riskEvaluation;
            """
        ),
        // A submission is claimed (owner and expiry) before it is sent: processes sharing the store send it once.
        (
            "v5-submission-claims",
            """
            ALTER TABLE submissions ADD COLUMN claimOwner TEXT;
            ALTER TABLE submissions ADD COLUMN claimExpiresAt DATETIME;
            """
        ),
        // Identity data at rest: the data key, wrapped by the key-encryption key (one row), and when a transaction's
        // data was purged by the retention policy.
        (
            "v6-store-keys-and-purges",
            """
            CREATE TABLE storeKeys (
                id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                wrappedKey TEXT NOT NULL,
                createdAt DATETIME NOT NULL,
                rotatedAt DATETIME
            );
            ALTER TABLE transactions ADD COLUMN purgedAt DATETIME;
            """
        ),
        // The operator's view pages through transactions by their last change, counts them by status and counts
        // recent collections, each from an index however large the store.
        (
            "v7-operator-view-indexes",
            """
            CREATE INDEX transactionsByUpdate ON transactions(updatedAt, id);
            CREATE INDEX transactionsByStatus ON transactions(submissionStatus);
            CREATE INDEX transitionsByTime ON transitions(at);
            """
        ),
        // Document ids and content hashes are keyed with a secret of the store's own (one row, sealed in an encrypted
        // store); the documents of an earlier version are renamed when a store opens (`openIdentity`).
        (
            "v8-document-identity",
            """
            CREATE TABLE documentIdentity (
                id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                secret TEXT NOT NULL,
                createdAt DATETIME NOT NULL
            );
            """
        )
    ]

    /// GRDB's migrator reads which migrations are applied before each one's (immediate) transaction, so two processes
    /// opening a new file together could both apply one. Each migration therefore looks again inside its own transaction;
    /// when another process applied it meanwhile, it gives way and the migrator starts over.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        for (identifier, sql) in migrations {
            migrator.registerMigration(identifier) { db in
                let applied =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
                        arguments: [identifier]) ?? false
                if applied { throw AppliedElsewhere() }
                try db.execute(sql: sql)
            }
        }
        return migrator
    }()

    struct AppliedElsewhere: Error {}

    /// Migrates, giving way to another process migrating the same file (at most once per migration).
    static func migrate(_ pool: DatabasePool) throws {
        for _ in 0...migrations.count {
            do {
                try migrator.migrate(pool)
                return
            } catch is AppliedElsewhere {
                continue
            }
        }
        try migrator.migrate(pool)
    }

    // MARK: - Rows

    struct TransactionRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "transactions"
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
    }

    struct ProtectStateRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "protectStates"
        var transactionId: String
        var state: String
    }

    struct StatusRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "documentStatuses"
        var transactionId: String
        var documentType: DocumentType
        var requirement: DocumentRequirement
        var status: DocumentStatus
    }

    struct DocumentRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "documents"
        var id: String
        var transactionId: String
        var documentType: DocumentType
        var fields: String
        var source: String
        var contentHash: String
        var createdAt: Date
    }

    struct TransitionRow: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "transitions"
        var sequence: Int64?
        var transactionId: String
        var documentType: DocumentType?
        var fromStatus: String
        var toStatus: String
        var at: Date
        var reason: String

        mutating func didInsert(_ inserted: InsertionSuccess) { sequence = inserted.rowID }
    }

    struct SubmissionRow: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "submissions"
        var documentId: String
        var attempts: Int
        var outcome: SubmissionOutcome
        var error: String?
        var updatedAt: Date
        var claimOwner: String?
        var claimExpiresAt: Date?
    }

    // MARK: - TransactionStore

    package func openTransaction(_ new: NewTransaction) async throws(StoreError) -> StoredTransaction {
        try await core.openTransaction(new)
    }

    package func collect(_ document: DocumentRecord, at time: Date) async throws(StoreError) -> CollectOutcome {
        try await core.collect(document, at: time)
    }

    package func apply(
        _ event: DocumentEvent, to type: DocumentType, of transactionId: String, reason: String,
        at time: Date
    ) async throws(StoreError) -> (StoredTransaction, [TransitionRecord]) {
        try await core.apply(event, to: type, of: transactionId, reason: reason, at: time)
    }

    package func endInput(of transactionId: String, reason: String, at time: Date) async throws(StoreError)
        -> (StoredTransaction, [TransitionRecord])?
    {
        try await core.endInput(of: transactionId, reason: reason, at: time)
    }

    package func recordSubmission(
        documentId: String, outcome: SubmissionOutcome, error: String?,
        at time: Date
    ) async throws(StoreError) -> SubmissionRecord {
        try await core.recordSubmission(documentId: documentId, outcome: outcome, error: error, at: time)
    }

    package func finishSubmission(
        documentId: String, type: DocumentType, of transactionId: String, accepted: Bool,
        error: String?, at time: Date
    ) async throws(StoreError) -> (StoredTransaction, SubmissionRecord, [TransitionRecord]) {
        try await core.finishSubmission(
            documentId: documentId, type: type, transactionId: transactionId, accepted: accepted,
            error: error, at: time)
    }

    package func setSignals(_ signals: String, of transactionId: String) async throws(StoreError) -> String {
        let sealing = sealing
        let sealed = try sealing.seal(signals, .signals, row: transactionId)
        let stored = try await write { db in
            try db.execute(
                sql: "UPDATE transactions SET signals = ? WHERE id = ? AND signals IS NULL AND purgedAt IS NULL",
                arguments: [sealed, transactionId])
            guard let stored = try String.fetchOne(db, sql: "SELECT signals FROM transactions WHERE id = ?", arguments: [transactionId]) else {
                throw StoreError.unknownTransaction(transactionId)
            }
            return stored
        }
        return try sealing.open(stored, .signals, row: transactionId)
    }

    package func protectState<State: Codable & Sendable>(of transactionId: String, as type: State.Type) async throws(StoreError) -> State? {
        let text = try await read { db in try ProtectStateRow.fetchOne(db, key: transactionId)?.state }
        return try text.map { text throws(StoreError) in try ProtectStateColumn.decode(text, as: type, sealing, row: transactionId) }
    }

    package func updateProtectState<State: Codable & Sendable>(
        of transactionId: String, as type: State.Type,
        _ transform: @escaping @Sendable (State?) -> State?
    ) async throws(StoreError) -> State? {
        let sealing = sealing
        return try await write { db in
            guard let transaction = try TransactionRow.fetchOne(db.cachedStatement(sql: HotPath.transaction), arguments: [transactionId]) else {
                throw StoreError.unknownTransaction(transactionId)
            }
            // A purged transaction's Protect state is gone for good: nothing after the purge brings it back.
            if transaction.purgedAt != nil { return nil }
            let current = try ProtectStateRow.fetchOne(db, key: transactionId).map {
                try ProtectStateColumn.decode($0.state, as: type, sealing, row: transactionId)
            }
            guard let updated = transform(current) else {
                try ProtectStateRow.deleteOne(db, key: transactionId)
                return nil
            }
            try ProtectStateRow(transactionId: transactionId, state: try ProtectStateColumn.encode(updated, sealing, row: transactionId)).save(db)
            return updated
        }
    }

    package func submission(documentId: String) async throws(StoreError) -> SubmissionRecord? {
        try await read { db in try SubmissionRow.fetchOne(db.cachedStatement(sql: HotPath.submission), arguments: [documentId]).map(Self.record) }
    }

    package func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws(StoreError)
        -> SubmissionClaim
    {
        try await write { db in
            guard try Self.documentExists(db, documentId) else { throw StoreError.unknownDocument(documentId) }
            var row =
                try SubmissionRow.fetchOne(db.cachedStatement(sql: HotPath.submission), arguments: [documentId])
                ?? SubmissionRow(documentId: documentId, attempts: 0, outcome: .pending, updatedAt: time)
            if row.outcome == .accepted { return .accepted }
            if let holder = row.claimOwner, holder != owner, let until = row.claimExpiresAt, until > time {
                return .held(until: until, attempts: row.attempts)
            }
            (row.claimOwner, row.claimExpiresAt, row.updatedAt) = (owner, expiry, time)
            try Self.save(db, row)
            return .claimed(attempts: row.attempts)
        }
    }

    package func releaseSubmission(documentId: String, owner: String) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM submissions WHERE documentId = ? AND claimOwner = ? AND attempts = 0 AND outcome = 'PENDING'",
                arguments: [documentId, owner])
            try db.execute(
                sql: "UPDATE submissions SET claimOwner = NULL, claimExpiresAt = NULL WHERE documentId = ? AND claimOwner = ?",
                arguments: [documentId, owner])
        }
    }

    package func document(id: String) async throws(StoreError) -> DocumentRecord? {
        let sealing = sealing
        return try await read { db in
            guard let row = try DocumentRow.fetchOne(db, key: id) else { return nil }
            return DocumentRecord(
                id: row.id, transactionId: row.transactionId, type: row.documentType,
                fields: try FieldsColumn.decode(row.fields, sealing, document: row.id),
                source: row.source, contentHash: row.contentHash, createdAt: row.createdAt)
        }
    }

    package func transaction(id: String) async throws(StoreError) -> StoredTransaction? {
        let sealing = sealing
        return try await read { db in try Self.read(db, id, sealing)?.transaction }
    }

    package func latestKnown(id: String) async throws(StoreError) -> StoredTransaction? {
        try await core.latestKnown(id)
    }

    package func report(id: String) async throws(StoreError) -> TransactionReport? {
        let sealing = sealing
        return try await read { db in
            guard let transaction = try Self.read(db, id, sealing)?.transaction else { return nil }
            let documents = try DocumentRow.filter(Column("transactionId") == id).order(Column("createdAt"), Column("id")).fetchAll(db)
            let submissions = try SubmissionRow.filter(documents.map(\.id).contains(Column("documentId"))).fetchAll(db)
            let byDocument = Dictionary(uniqueKeysWithValues: submissions.map { ($0.documentId, Self.record($0)) })
            let history = try TransitionRow.filter(Column("transactionId") == id).order(Column("sequence")).fetchAll(db)
            return TransactionReport(
                transaction: transaction,
                documents: try documents.map { row in
                    let fields = try FieldsColumn.decode(row.fields, sealing, document: row.id)
                    return .init(
                        id: row.id, type: row.documentType, source: row.source,
                        keys: fields.keys, submission: byDocument[row.id])
                },
                history: history.map(Self.record),
                data: DataState(purgedAt: transaction.purgedAt, sealing))
        }
    }

    package func transactions(status: DocumentSubmissionStatus?) async throws(StoreError) -> [TransactionSummary] {
        let sealing = sealing
        return try await read { db in
            var request = TransactionRow.order(Column("updatedAt").desc, Column("id"))
            if let status { request = request.filter(Column("submissionStatus") == status) }
            return try Self.summaries(db, try request.fetchAll(db), sealing)
        }
    }

    /// The list's lines for `rows`, with their documents' statuses read in one query.
    private static func summaries(_ db: Database, _ rows: [TransactionRow], _ sealing: StoreSealing) throws -> [TransactionSummary] {
        let statuses = try StatusRow.filter(rows.map(\.id).contains(Column("transactionId"))).fetchAll(db)
        let grouped = Dictionary(grouping: statuses, by: \.transactionId)
        return rows.map { row in
            TransactionSummary(
                id: row.id, status: row.submissionStatus,
                documents: Dictionary(uniqueKeysWithValues: (grouped[row.id] ?? []).map { ($0.documentType, $0.status) }),
                updatedAt: row.updatedAt, expiresAt: row.expiresAt, data: DataState(purgedAt: row.purgedAt, sealing))
        }
    }

    /// A time as GRDB stores a date (`yyyy-MM-dd HH:mm:ss.SSS`, UTC), in whole milliseconds by integer arithmetic:
    /// a Date in between could format a millisecond early and skip the rows of the cursor's own millisecond.
    static func storedText(_ time: BoundedTime) -> String {
        let milliseconds = min((time.microseconds + 500) / 1000, 253_402_300_799_999)  // never past 9999 (text order)
        let seconds = milliseconds / 1000
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second],
            from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%03d", parts.year!, parts.month!, parts.day!, parts.hour!,
            parts.minute!, parts.second!, Int(milliseconds % 1000))
    }

    package func transactions(
        status: DocumentSubmissionStatus?, search: String?, limit: Int,
        after cursor: TransactionCursor?
    ) async throws(StoreError) -> TransactionPage {
        let sealing = sealing
        return try await read { db in
            var conditions: [SQL] = []
            if let status { conditions.append("submissionStatus = \(status)") }
            if let search, !search.isEmpty { conditions.append("instr(id, \(search)) > 0") }
            if let cursor {
                let at = Self.storedText(cursor.time)
                conditions.append("(updatedAt < \(at) OR (updatedAt = \(at) AND id < \(cursor.id)))")
            }
            let filter: SQL = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try SQLRequest<TransactionRow>(
                literal: """
                    SELECT * FROM transactions \(filter) ORDER BY updatedAt DESC, id DESC LIMIT \(limit + 1)
                    """
            ).fetchAll(db)
            let page = Array(rows.prefix(limit))
            let summaries = try Self.summaries(db, page, sealing)
            let next = rows.count > limit ? page.last.map { TransactionCursor(updatedAt: $0.updatedAt, id: $0.id) } : nil
            return TransactionPage(transactions: summaries, next: next)
        }
    }

    package func overview(collectedSince since: Date) async throws(StoreError) -> StoreOverview {
        try await read { db in
            var counts: [DocumentSubmissionStatus: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT submissionStatus, count(*) FROM transactions GROUP BY submissionStatus") {
                if let status = DocumentSubmissionStatus(rawValue: row[0]) { counts[status] = row[1] }
            }
            let collected =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM transitions WHERE at >= ? AND toStatus = 'COLLECTED' AND documentType IS NOT NULL
                        """, arguments: [since]) ?? 0
            return StoreOverview(transactions: counts, collected: collected)
        }
    }

    package func count(of ids: [String], status: DocumentSubmissionStatus) async throws(StoreError) -> Int {
        try await read { db in
            // In slices: SQLite limits the number of bound values in one statement.
            try stride(from: 0, to: ids.count, by: 500).reduce(0) { total, start in
                let slice = Array(ids[start..<min(start + 500, ids.count)])
                return try total
                    + TransactionRow
                    .filter(slice.contains(Column("id")) && Column("submissionStatus") == status).fetchCount(db)
            }
        }
    }

    // MARK: - Identity data at rest

    package func purge(_ retention: Retention, at time: Date, dryRun: Bool) async throws(StoreError) -> PurgeOutcome {
        guard retention.mode != .none else { return PurgeOutcome(transactions: [], documents: 0) }
        let select = Self.purgeSelection(retention, at: time)
        let outcome = try await write { db in
            let ids = try SQLRequest<String>(literal: select).fetchAll(db)
            let documents = try DocumentRow.filter(ids.contains(Column("transactionId"))).fetchCount(db)
            guard !dryRun, !ids.isEmpty else { return PurgeOutcome(transactions: ids, documents: documents) }
            // Freed cells are overwritten, not left in the pages (VACUUM below rewrites the file besides).
            try db.execute(sql: "PRAGMA secure_delete = ON")
            defer { try? db.execute(sql: "PRAGMA secure_delete = OFF") }
            for slice in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
                try DocumentRow.filter(slice.contains(Column("transactionId"))).updateAll(db, Column("fields").set(to: ""))
                try ProtectStateRow.filter(slice.contains(Column("transactionId"))).deleteAll(db)
                try db.execute(
                    literal: """
                        INSERT INTO transitions (transactionId, documentType, fromStatus, toStatus, at, reason)
                        SELECT id, NULL, submissionStatus, submissionStatus, \(time), \(retention.reason) FROM transactions
                        WHERE id IN \(slice) ORDER BY createdAt, id
                        """)
                try db.execute(
                    literal: """
                        UPDATE transactions SET verificationCode = '', signals = NULL, purgedAt = \(time), version = version + 1
                        WHERE id IN \(slice)
                        """)
            }
            return PurgeOutcome(transactions: ids, documents: documents)
        }
        if !dryRun, !outcome.transactions.isEmpty {
            recent.forget(outcome.transactions)
            try await vacuum()
        }
        return outcome
    }

    /// The transactions a purge takes, oldest first: finished (COMPLETED, or expired with no document waiting for its
    /// submission), not purged yet, and past the count or older than the age the retention keeps.
    static func purgeSelection(_ retention: Retention, at time: Date) -> SQL {
        let cutoff = time.addingTimeInterval(-retention.maxAge)
        let beyondCount: SQL =
            retention.byCount
            ? "id NOT IN (SELECT id FROM transactions ORDER BY createdAt DESC, id DESC LIMIT \(retention.keep))" : "0"
        let beyondAge: SQL = retention.byAge ? "createdAt < \(cutoff)" : "0"
        return """
            SELECT id FROM transactions t WHERE purgedAt IS NULL
            AND (submissionStatus = 'COMPLETED' OR (expiresAt < \(time) AND NOT EXISTS (
                SELECT 1 FROM documentStatuses d WHERE d.transactionId = t.id AND d.status = 'COLLECTED')))
            AND (\(beyondCount) OR \(beyondAge))
            ORDER BY createdAt, id
            """
    }

    package func encrypt(with key: KeyEncryptionKey, at time: Date) async throws(StoreError) -> Int {
        let dataKey = DataKey.generate()
        let sealing = StoreSealing.sealed(dataKey), wrapped = try key.wrap(dataKey), location = path
        let sealed = try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM storeKeys") == 0 else {
                throw StoreError.cannotOpen("\(location) is encrypted already")
            }
            try db.execute(sql: "INSERT INTO storeKeys (id, wrappedKey, createdAt) VALUES (1, ?, ?)", arguments: [wrapped, time])
            return try Self.reseal(db, from: .clear, to: sealing)
        }
        keys.withLock { $0 = (sealing, wrapped) }
        // The values in clear leave the file (and its WAL) with the pages that held them.
        try await vacuum()
        return sealed
    }

    package func rotateKey(to key: KeyEncryptionKey, at time: Date) async throws(StoreError) -> Int {
        let (sealing, old) = keys.withLock { $0 }
        guard sealing.isSealed, let old else { throw .cannotOpen("\(path) is not encrypted: encrypt it with `verify-pipeline store encrypt`") }
        let dataKey = DataKey.generate()
        let rotated = StoreSealing.sealed(dataKey), wrapped = try key.wrap(dataKey), location = path
        let count = try await write { db in
            try db.execute(
                sql: "UPDATE storeKeys SET wrappedKey = ?, rotatedAt = ? WHERE id = 1 AND wrappedKey = ?",
                arguments: [wrapped, time, old])
            guard db.changesCount == 1 else {
                throw StoreError.cannotOpen("the key of \(location) was rotated by another process meanwhile; nothing was changed")
            }
            return try Self.reseal(db, from: sealing, to: rotated)
        }
        keys.withLock { $0 = (rotated, wrapped) }
        // The values under the old data key, and its old wrapping, leave the file and its WAL.
        try await vacuum()
        return count
    }

    /// Every sealed value opened with `old` and sealed again with `new` (`.clear` for a store in clear): the
    /// transactions' codes and signals, the documents' fields, the Protect states and the document secret. Returns how
    /// many values.
    static func reseal(_ db: Database, from old: StoreSealing, to new: StoreSealing) throws -> Int {
        var count = 0
        for row in try TransactionRow.filter(Column("purgedAt") == nil).fetchAll(db) {
            let code = try old.open(row.verificationCode, .verificationCode, row: row.id)
            let signals = try old.open(optional: row.signals, .signals, row: row.id)
            try db.execute(
                sql: "UPDATE transactions SET verificationCode = ?, signals = ? WHERE id = ?",
                arguments: [
                    try new.seal(code, .verificationCode, row: row.id),
                    try new.seal(optional: signals, .signals, row: row.id), row.id
                ])
            count += signals == nil ? 1 : 2
        }
        for row in try DocumentRow.filter(Column("fields") != "").fetchAll(db) {
            let fields = try old.open(row.fields, .documentFields, row: row.id)
            try db.execute(
                sql: "UPDATE documents SET fields = ? WHERE id = ?",
                arguments: [try new.seal(fields, .documentFields, row: row.id), row.id])
            count += 1
        }
        for row in try ProtectStateRow.fetchAll(db) {
            let json = try ProtectStateColumn.open(json: row.state, old, row: row.transactionId)
            try db.execute(
                sql: "UPDATE protectStates SET state = ? WHERE transactionId = ?",
                arguments: [try ProtectStateColumn.seal(json: json, new, row: row.transactionId), row.transactionId])
            count += 1
        }
        if let secret = try String.fetchOne(db, sql: "SELECT secret FROM documentIdentity WHERE id = 1") {
            let opened = try old.open(secret, .documentIdentity, row: "1")
            try db.execute(
                sql: "UPDATE documentIdentity SET secret = ? WHERE id = 1",
                arguments: [try new.seal(opened, .documentIdentity, row: "1")])
            count += 1
        }
        return count
    }

    /// Rewrites the file without its free pages and empties the WAL, so that removed bytes leave both.
    func vacuum() async throws(StoreError) {
        try await writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Runs `PRAGMA integrity_check`; "ok" when the file is sound.
    package func integrityCheck() async throws(StoreError) -> String {
        try await read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "" }
    }

    // MARK: - Helpers

    /// The statements every document runs, compiled once per connection (GRDB's statement cache) instead of once per
    /// call: building and preparing them was a tenth of `run`'s CPU beside the image work.
    enum HotPath {
        static let dataKey = "SELECT wrappedKey FROM storeKeys WHERE id = 1"
        static let transaction = "SELECT * FROM transactions WHERE id = ?"
        static let statuses = "SELECT * FROM documentStatuses WHERE transactionId = ?"
        static let submission = "SELECT * FROM submissions WHERE documentId = ?"
        static let documentExists = "SELECT EXISTS (SELECT 1 FROM documents WHERE id = ?)"
        static let documentOwned = "SELECT EXISTS (SELECT 1 FROM documents WHERE id = ? AND transactionId = ? AND documentType = ?)"
        static let updateTransaction =
            "UPDATE transactions SET submissionStatus = ?, updatedAt = ?, version = version + 1 WHERE id = ? AND version = ?"
        static let updateStatus = "UPDATE documentStatuses SET status = ? WHERE transactionId = ? AND documentType = ?"
        static let insertTransition =
            "INSERT INTO transitions (transactionId, documentType, fromStatus, toStatus, at, reason) VALUES (?, ?, ?, ?, ?, ?)"
        static let insertDocument =
            "INSERT INTO documents (id, transactionId, documentType, fields, source, contentHash, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)"
        static let saveSubmission = """
            INSERT INTO submissions (documentId, attempts, outcome, error, updatedAt, claimOwner, claimExpiresAt)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (documentId) DO UPDATE SET attempts = excluded.attempts, outcome = excluded.outcome, error = excluded.error,
                updatedAt = excluded.updatedAt, claimOwner = excluded.claimOwner, claimExpiresAt = excluded.claimExpiresAt
            """
    }

    private static func save(_ db: Database, _ row: SubmissionRow) throws {
        try db.cachedStatement(sql: HotPath.saveSubmission).execute(
            arguments: [row.documentId, row.attempts, row.outcome, row.error, row.updatedAt, row.claimOwner, row.claimExpiresAt])
    }

    private static func documentExists(_ db: Database, _ id: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: HotPath.documentExists), arguments: [id]) ?? false
    }

    private static func read(_ db: Database, _ id: String, _ sealing: StoreSealing) throws -> TransactionRead? {
        guard let row = try TransactionRow.fetchOne(db.cachedStatement(sql: HotPath.transaction), arguments: [id]) else { return nil }
        let statuses = try StatusRow.fetchAll(db.cachedStatement(sql: HotPath.statuses), arguments: [id])
        var policy: [DocumentType: DocumentRequirement] = [:], documents: [DocumentType: DocumentStatus] = [:]
        for status in statuses {
            policy[status.documentType] = status.requirement
            documents[status.documentType] = status.status
        }
        let state = TransactionState(
            policy: policy, documents: documents,
            submissionStatus: row.submissionStatus,
            expiresAt: row.expiresAt)
        // A purged transaction's code and payload are gone: there is nothing to open.
        let purged = row.purgedAt != nil
        let transaction = StoredTransaction(
            id: row.id, verificationCode: purged ? "" : try sealing.open(row.verificationCode, .verificationCode, row: row.id),
            envId: row.envId, state: state, createdAt: row.createdAt, updatedAt: row.updatedAt,
            signals: purged ? nil : try sealing.open(optional: row.signals, .signals, row: row.id),
            version: row.version, purgedAt: row.purgedAt)
        return TransactionRead(transaction: transaction)
    }

    private static func saveSubmission(_ db: Database, _ end: SubmissionEnd, at time: Date) throws -> SubmissionRecord {
        var row =
            try SubmissionRow.fetchOne(db.cachedStatement(sql: HotPath.submission), arguments: [end.documentId])
            ?? SubmissionRow(documentId: end.documentId, attempts: 0, outcome: .pending, updatedAt: time)
        if end.outcome != .pending { row.attempts += 1 }
        row.outcome = end.outcome
        row.error = end.error
        row.updatedAt = time
        if end.outcome != .pending { (row.claimOwner, row.claimExpiresAt) = (nil, nil) }
        try save(db, row)
        return record(row)
    }

    private static func record(_ row: TransitionRow) -> TransitionRecord {
        TransitionRecord(
            sequence: row.sequence ?? 0, transactionId: row.transactionId,
            documentType: row.documentType,
            from: row.fromStatus, to: row.toStatus, at: row.at, reason: row.reason)
    }

    private static func record(_ row: SubmissionRow) -> SubmissionRecord {
        SubmissionRecord(
            documentId: row.documentId, attempts: row.attempts,
            outcome: row.outcome, error: row.error, updatedAt: row.updatedAt)
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        let wrapped = keys.withLock { $0.wrapped }
        do {
            return try await pool.write { db in
                // A process writes nothing once another has encrypted the store or rotated its data key: its values
                // would be clear or sealed under a retired key among the others, and would not open.
                try Self.requireDataKey(db, wrapped)
                return try body(db)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .database(Self.describe(error))
        }
    }

    /// Throws unless the store's data key is still the one this process opened it with (`wrapped`; nil: in clear).
    static func requireDataKey(_ db: Database, _ wrapped: String?) throws {
        let current = try String.fetchOne(db.cachedStatement(sql: HotPath.dataKey))
        guard current != wrapped else { return }
        throw StoreError.cannotOpen(
            wrapped == nil
                ? "the store was encrypted by another process while this one wrote in clear: start it again with the store's key"
                : "the store's data key was rotated by another process: start this one again with the store's current key")
    }

    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.writeWithoutTransaction(body)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .database(Self.describe(error))
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.read(body)
        } catch StoreError.tampered(let place) {
            // A value that does not open may have been sealed again by a key rotation this process did not see.
            let wrapped = keys.withLock { $0.wrapped }
            let current = try? await pool.read { db in try String.fetchOne(db, sql: "SELECT wrappedKey FROM storeKeys WHERE id = 1") }
            if let current, current != wrapped {
                throw StoreError.cannotOpen("the store's data key was rotated by another process: start this one again with the store's current key")
            }
            throw StoreError.tampered(place)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .database(Self.describe(error))
        }
    }

    /// SQLite's message without the SQL text, which could quote document data; any other error by its type only
    /// (a row decoding error's description prints the row, verification code included).
    private static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode)" }
        return "\(type(of: error))"
    }
}

extension SQLiteTransactionStore: StoreRows {
    func read(transaction id: String, document: String?) async throws(StoreError) -> TransactionRead? {
        let sealing = sealing
        return try await read { db in
            guard var read = try Self.read(db, id, sealing) else { return nil }
            if let document { read.documentRecorded = try Self.documentExists(db, document) }
            return read
        }
    }

    func read(ownerOf documentId: String) async throws(StoreError) -> (TransactionRead, DocumentType)? {
        let sealing = sealing
        return try await read { db in
            guard let document = try DocumentRow.fetchOne(db, key: documentId) else { return nil }
            guard let read = try Self.read(db, document.transactionId, sealing) else { throw StoreError.unknownTransaction(document.transactionId) }
            return (read, document.documentType)
        }
    }

    func insert(_ new: NewTransaction, state: TransactionState) async throws(StoreError) -> InsertOutcome {
        let sealing = sealing
        let code = try sealing.seal(new.verificationCode, .verificationCode, row: new.id)
        let signals = try sealing.seal(optional: new.signals, .signals, row: new.id)
        return try await write { db in
            if let existing = try Self.read(db, new.id, sealing) { return .existing(existing) }
            try TransactionRow(
                id: new.id, verificationCode: code, envId: new.envId,
                submissionStatus: state.submissionStatus, createdAt: new.createdAt,
                updatedAt: new.createdAt, expiresAt: new.expiresAt, signals: signals, version: 0
            ).insert(db)
            for (type, status) in state.documents {
                try StatusRow(
                    transactionId: new.id, documentType: type,
                    requirement: state.policy[type] ?? .optional, status: status
                ).insert(db)
            }
            return .inserted
        }
    }

    func write(_ change: StatusChange) async throws(StoreError) -> WrittenChange? {
        let fields = try change.document.map { document throws(StoreError) in try FieldsColumn.encode(document, sealing) }
        return try await write { db in
            if let end = change.submission, let type = end.documentType {
                let owned = try Bool.fetchOne(
                    db.cachedStatement(sql: HotPath.documentOwned), arguments: [end.documentId, change.transactionId, type])
                guard owned == true else { return nil }
            }
            try db.cachedStatement(sql: HotPath.updateTransaction).execute(
                arguments: [change.submissionStatus, change.time, change.transactionId, change.version])
            guard db.changesCount == 1 else { return nil }
            for (type, status) in change.statuses {
                try db.cachedStatement(sql: HotPath.updateStatus).execute(arguments: [status, change.transactionId, type])
            }
            var sequences: [Int64] = []
            for transition in change.transitions {
                let documentType: DocumentType? = if case .document(let type) = transition.subject { type } else { nil }
                try db.cachedStatement(sql: HotPath.insertTransition).execute(
                    arguments: [change.transactionId, documentType, transition.from, transition.to, change.time, change.reason])
                sequences.append(db.lastInsertedRowID)
            }
            if let document = change.document, let fields {
                try db.cachedStatement(sql: HotPath.insertDocument).execute(
                    arguments: [
                        document.id, document.transactionId, document.type, fields, document.source, document.contentHash,
                        document.createdAt
                    ])
            }
            let submission = try change.submission.map { end in try Self.saveSubmission(db, end, at: change.time) }
            return WrittenChange(sequences: sequences, submission: submission)
        }
    }

    func saveSubmission(_ end: SubmissionEnd, at time: Date) async throws(StoreError) -> SubmissionRecord {
        try await write { db in
            guard try Self.documentExists(db, end.documentId) else { throw StoreError.unknownDocument(end.documentId) }
            return try Self.saveSubmission(db, end, at: time)
        }
    }
}

// Enums stored as their wire spellings: a value the schema's CHECK would refuse never reaches Swift as a crash.
extension DocumentType: DatabaseValueConvertible {}
extension DocumentStatus: DatabaseValueConvertible {}
extension DocumentRequirement: DatabaseValueConvertible {}
extension DocumentSubmissionStatus: DatabaseValueConvertible {}
extension SubmissionOutcome: DatabaseValueConvertible {}
