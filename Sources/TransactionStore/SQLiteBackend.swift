import Foundation
import GRDB
import Logging
import Synchronization
import VerifyModel

/// The embedded store's rows: one SQLite file in WAL mode through one GRDB `DatabasePool` (or a database in memory,
/// for tests). Writes are serialised by GRDB, so a read-modify-write inside one `write { }` cannot lose an update.
final class SQLiteBackend: StoreBackend {
    let location: String
    private let writer: any DatabaseWriter
    /// The wrapped key this process writes under (`expectKey`).
    private let expected = Mutex<String?>(nil)
    /// The file opened, for a store in a file: a write checks that its path still names it.
    private let file: FileIdentity?

    init(writer: any DatabaseWriter, location: String, file: FileIdentity? = nil) {
        self.writer = writer
        self.location = location
        self.file = file
    }

    /// A file by its device and inode. SQLite goes on writing into a file deleted (or replaced) under it, and
    /// everything written from then on is lost with the last descriptor: a re-run would submit it all again.
    struct FileIdentity: Sendable {
        let path: String
        let device: UInt64
        let inode: UInt64

        init?(path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            (self.path, device, inode) = (path, UInt64(status.st_dev), UInt64(status.st_ino))
        }

        var isStillThere: Bool {
            var status = stat()
            return stat(path, &status) == 0 && UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
        }
    }

    /// The store's file at `path`, created (mode 0600) when `create` is true, its schema prepared (`SQLiteSchema`). An
    /// existing file that its group or others may read is tightened to 0600, with a warning.
    static func file(
        path: String, create: Bool, readOnly: Bool, logger: Logger = Logger(label: "verify-pipeline.store")
    ) throws -> SQLiteBackend {
        let existed = try StoreFile.create(path, allowed: create)
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.foreignKeysEnabled = true
        do {
            let pool = try StoreFile.retryingWhenBusy {
                let pool = try DatabasePool(path: path, configuration: configuration)
                try SQLiteSchema.prepare(pool, location: path, readOnly: readOnly)
                return pool
            }
            // Only once the file has shown itself a store: a file that is not one is left as it was.
            if existed { StoreFile.tightenPermissions(path, logger: logger) }
            return SQLiteBackend(writer: pool, location: path, file: FileIdentity(path: path))
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unreadable(path, StoreFile.describe(error))
        }
    }

    /// A new store in memory, gone with the process.
    static func inMemory() throws -> SQLiteBackend {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        let queue = try DatabaseQueue(configuration: configuration)
        try SQLiteSchema.migrate(queue)
        return SQLiteBackend(writer: queue, location: "memory")
    }

    // MARK: - Keys and the document secret

    func readKey() async throws -> (wrapped: String?, holdsTransactions: Bool) {
        try await read { db in
            (
                try String.fetchOne(db, sql: "SELECT wrappedKey FROM storeKeys WHERE id = 1"),
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM transactions)") ?? false
            )
        }
    }

    func recordKey(_ wrapped: String, at time: Date) async throws -> String {
        try await write(checkingKey: false) { db in
            if let recorded = try String.fetchOne(db, sql: "SELECT wrappedKey FROM storeKeys WHERE id = 1") { return recorded }
            try db.execute(sql: "INSERT INTO storeKeys (id, wrappedKey, createdAt) VALUES (1, ?, ?)", arguments: [wrapped, time])
            return wrapped
        }
    }

    func expectKey(_ wrapped: String?) { expected.withLock { $0 = wrapped } }

    func readDocumentSecret() async throws -> (secret: String, randomIds: Bool)? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT secret, randomIds FROM documentIdentity WHERE id = 1").map { (try $0.value(0), try $0.value(1)) }
        }
    }

    func recordDocumentSecret(
        _ sealed: String, at time: Date, renaming rename: @escaping @Sendable (String, [LegacyDocument]) throws -> DocumentRenames
    ) async throws -> (secret: String, renamed: Int) {
        try await write { db in
            let existing = try Row.fetchOne(db, sql: "SELECT secret, randomIds FROM documentIdentity WHERE id = 1")
            if let existing, try existing.value(1) as Bool { return (try existing.value(0), 0) }
            let secret: String = try existing?.value(0) ?? sealed
            if existing == nil {
                try db.execute(
                    sql: "INSERT INTO documentIdentity (id, secret, createdAt, randomIds) VALUES (1, ?, ?, 1)", arguments: [secret, time])
            } else {
                try db.execute(sql: "UPDATE documentIdentity SET randomIds = 1 WHERE id = 1")
            }
            let legacy = try Row.fetchAll(db, sql: "SELECT id, transactionId, documentType, contentHash, fields FROM documents").map {
                LegacyDocument(
                    id: try $0.value("id"), transactionId: try $0.value("transactionId"), type: try $0.value("documentType"),
                    contentHash: try $0.value("contentHash"), fields: try $0.value("fields"))
            }
            let decided = try rename(secret, legacy)
            guard !decided.renames.isEmpty else { return (secret, 0) }
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            // Fingerprints first cleared, so that no two rows share one while they are renamed.
            try db.execute(sql: "UPDATE documents SET contentHash = ''")
            for rename in decided.renames {
                try db.execute(
                    sql: "UPDATE documents SET id = ?, contentHash = ?, fields = ?, contentDigest = ? WHERE id = ?",
                    arguments: [rename.to, rename.contentHash, rename.fields, rename.contentDigest, rename.from])
                try db.execute(sql: "UPDATE submissions SET documentId = ? WHERE documentId = ?", arguments: [rename.to, rename.from])
            }
            let map = decided.map
            for row in try Row.fetchAll(db, sql: "SELECT sequence, reason FROM transitions WHERE reason LIKE '%doc-%'") {
                let reason: String = try row.value("reason")
                let renamed = DocumentIdentity.renaming(reason, map)
                if renamed != reason {
                    try db.execute(
                        sql: "UPDATE transitions SET reason = ? WHERE sequence = ?", arguments: [renamed, try row.value("sequence") as Int64])
                }
            }
            return (secret, decided.renames.count)
        }
    }

    func changeKey(
        from old: String?, to new: String, at time: Date, _ rewrite: @escaping SealedRewrite, refingerprint: @escaping Refingerprint
    ) async throws -> Int {
        let location = location
        return try await write(checkingKey: false) { db in
            if let old {
                try db.execute(
                    sql: "UPDATE storeKeys SET wrappedKey = ?, rotatedAt = ? WHERE id = 1 AND wrappedKey = ?", arguments: [new, time, old])
                guard db.changesCount == 1 else { throw StoreError.keyNotAsOpened(location, encrypting: false) }
            } else {
                guard try Int.fetchOne(db, sql: "SELECT count(*) FROM storeKeys") == 0 else {
                    throw StoreError.keyNotAsOpened(location, encrypting: true)
                }
                try db.execute(sql: "INSERT INTO storeKeys (id, wrappedKey, createdAt) VALUES (1, ?, ?)", arguments: [new, time])
            }
            // Fingerprints under the new secret, from the digests as they are sealed before the rewrite below.
            for row in try Row.fetchAll(db, sql: "SELECT id, contentDigest FROM documents WHERE contentDigest IS NOT NULL") {
                let id: String = try row.value(0)
                try db.execute(
                    sql: "UPDATE documents SET contentHash = ? WHERE id = ?", arguments: [try refingerprint(try row.value(1), id), id])
            }
            try db.execute(sql: "UPDATE documents SET contentHash = '' WHERE contentDigest IS NULL")
            var count = 0
            for (table, key, column, sealed, filter) in SQLiteRows.sealedValues {
                for row in try Row.fetchAll(db, sql: "SELECT \(key), \(column) FROM \(table) WHERE \(column) IS NOT NULL AND \(filter)") {
                    let id: String = try row.value(0), stored: String = try row.value(1)
                    try db.execute(
                        sql: "UPDATE \(table) SET \(column) = ? WHERE \(key) = ?", arguments: [try rewrite(stored, sealed, id), id])
                    count += 1
                }
            }
            return count
        }
    }

    /// Rewrites the file without its free pages and empties the WAL, so that removed bytes leave both.
    func reclaim(resealed: Bool) async throws {
        do {
            try await writer.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                if !db.configuration.readonly, self.writer is DatabasePool { try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            }
        } catch {
            throw StoreError.database(StoreFile.describe(error))
        }
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    func integrityCheck() async throws -> String {
        try await read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "" }
    }

    // MARK: - Reads

    func read(transaction id: String, probe: DocumentProbe?) async throws -> (TransactionRow, ProbeResult?)? {
        try await read { db in
            guard let row = try SQLiteRows.transaction(db, id) else { return nil }
            return (row, try probe.map { try SQLiteRows.probe(db, transaction: id, $0) })
        }
    }

    func read(ownerOf documentId: String) async throws -> (TransactionRow, DocumentType)? {
        try await read { db in
            guard let document = try SQLiteRows.document(db, documentId) else { return nil }
            guard let row = try SQLiteRows.transaction(db, document.transactionId) else {
                throw StoreError.unknownTransaction(document.transactionId)
            }
            return (row, document.type)
        }
    }

    func document(id: String) async throws -> DocumentRow? {
        try await read { db in try SQLiteRows.document(db, id) }
    }

    func report(id: String) async throws -> ReportRows? {
        try await read { db in
            guard let transaction = try SQLiteRows.transaction(db, id) else { return nil }
            let documents = try Row.fetchAll(db, sql: "SELECT * FROM documents WHERE transactionId = ? ORDER BY createdAt, id", arguments: [id])
                .map(SQLiteRows.document)
            let submissions = try Row.fetchAll(
                db, sql: "SELECT s.* FROM submissions s JOIN documents d ON d.id = s.documentId WHERE d.transactionId = ?", arguments: [id]
            ).map(SQLiteRows.submission)
            let byDocument = Dictionary(uniqueKeysWithValues: submissions.map { ($0.documentId, $0.record) })
            let history = try Row.fetchAll(db, sql: "SELECT * FROM transitions WHERE transactionId = ? ORDER BY sequence", arguments: [id]).map {
                TransitionRecord(
                    sequence: try $0.value("sequence"), transactionId: try $0.value("transactionId"), documentType: try $0.value("documentType"),
                    from: try $0.value("fromStatus"), to: try $0.value("toStatus"), at: try $0.value("at"), reason: try $0.value("reason"))
            }
            let reviews = try Row.fetchAll(db, sql: SQLiteReviews.select + " WHERE r.transactionId = ? ORDER BY r.documentType", arguments: [id])
                .map(SQLiteReviews.entry)
            return ReportRows(
                transaction: transaction, documents: documents.map { ($0, byDocument[$0.id]) }, history: history, reviews: reviews)
        }
    }

    func submission(documentId: String) async throws -> SubmissionRecord? {
        try await read { db in try SQLiteRows.submissionRow(db, documentId)?.record }
    }

    func protectState(of transactionId: String) async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT state FROM protectStates WHERE transactionId = ?", arguments: [transactionId]) }
    }

    func summaries(status: DocumentSubmissionStatus?) async throws -> [SummaryRow] {
        try await read { db in
            let rows =
                if let status {
                    try Row.fetchAll(
                        db, sql: "SELECT * FROM transactions WHERE submissionStatus = ? ORDER BY updatedAt DESC, id", arguments: [status])
                } else {
                    try Row.fetchAll(db, sql: "SELECT * FROM transactions ORDER BY updatedAt DESC, id")
                }
            return try SQLiteRows.summaries(db, rows)
        }
    }

    func page(
        status: DocumentSubmissionStatus?, search: String?, limit: Int, after cursor: TransactionCursor?
    ) async throws -> ([SummaryRow], TransactionCursor?) {
        try await read { db in
            var conditions: [SQL] = []
            if let status { conditions.append("submissionStatus = \(status)") }
            if let search, !search.isEmpty { conditions.append("instr(id, \(search)) > 0") }
            if let cursor {
                let at = SQLiteRows.storedText(cursor.time)
                conditions.append("(updatedAt < \(at) OR (updatedAt = \(at) AND id < \(cursor.id)))")
            }
            let filter: SQL = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try SQLRequest<Row>(literal: "SELECT * FROM transactions \(filter) ORDER BY updatedAt DESC, id DESC LIMIT \(limit + 1)")
                .fetchAll(db)
            let page = try SQLiteRows.summaries(db, Array(rows.prefix(limit)))
            let next = rows.count > limit ? page.last.map { TransactionCursor(updatedAt: $0.updatedAt, id: $0.id) } : nil
            return (page, next)
        }
    }

    func overview(collectedSince since: Date) async throws -> StoreOverview {
        try await read { db in
            var counts: [DocumentSubmissionStatus: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT submissionStatus, count(*) FROM transactions GROUP BY submissionStatus") {
                if let status = DocumentSubmissionStatus(rawValue: try row.value(0)) { counts[status] = try row.value(1) }
            }
            let collected =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM transitions WHERE at >= ? AND toStatus = 'COLLECTED' AND documentType IS NOT NULL",
                    arguments: [since]) ?? 0
            return StoreOverview(transactions: counts, collected: collected)
        }
    }

    func collectedByMinute(since: Date) async throws -> [String: Int] {
        try await read { db in
            // GRDB keeps dates as `yyyy-MM-dd HH:mm:ss.SSS`, UTC: the first 16 characters are the minute.
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT substr(at, 1, 16), count(*) FROM transitions
                    WHERE at >= ? AND toStatus = 'COLLECTED' AND documentType IS NOT NULL GROUP BY 1
                    """, arguments: [since])
            {
                counts[try row.value(0)] = try row.value(1)
            }
            return counts
        }
    }

    func count(of ids: [String], status: DocumentSubmissionStatus) async throws -> Int {
        try await read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM transactions WHERE id IN (SELECT value FROM json_each(?)) AND submissionStatus = ?",
                arguments: [SQLiteRows.json(ids), status]) ?? 0
        }
    }

    // MARK: - Writes

    func insert(_ new: NewTransaction, state: TransactionState) async throws -> InsertOutcome {
        try await write { db in
            if let existing = try SQLiteRows.transaction(db, new.id) { return .existing(existing) }
            try db.execute(
                sql: """
                    INSERT INTO transactions (id, verificationCode, envId, submissionStatus, createdAt, updatedAt, expiresAt, signals, version)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
                    """,
                arguments: [
                    new.id, new.verificationCode, new.envId, state.submissionStatus, new.createdAt, new.createdAt, new.expiresAt, new.signals
                ])
            for (type, status) in state.documents {
                try db.execute(
                    sql: "INSERT INTO documentStatuses (transactionId, documentType, requirement, status) VALUES (?, ?, ?, ?)",
                    arguments: [new.id, type, state.policy[type] ?? .optional, status])
            }
            return .inserted
        }
    }

    func write(_ change: StatusChange) async throws -> WrittenChange? {
        try await write { db in
            if let end = change.submission, let type = end.documentType {
                let owned = try Bool.fetchOne(
                    db.cachedStatement(sql: SQLiteRows.HotPath.documentOwned), arguments: [end.documentId, change.transactionId, type])
                guard owned == true else { return nil }
            }
            try db.cachedStatement(sql: SQLiteRows.HotPath.updateTransaction).execute(
                arguments: [change.submissionStatus, change.time, change.transactionId, change.version])
            guard db.changesCount == 1 else { return nil }
            for (type, status) in change.statuses {
                try db.cachedStatement(sql: SQLiteRows.HotPath.updateStatus).execute(arguments: [status, change.transactionId, type])
                // A document processed closes its type's open review (as the action that was taken for it, if any).
                if status == .processed {
                    try db.cachedStatement(sql: SQLiteReviews.closeProcessed).execute(arguments: [change.time, change.transactionId, type])
                }
            }
            var sequences: [Int64] = []
            for transition in change.transitions {
                let documentType: DocumentType? = if case .document(let type) = transition.subject { type } else { nil }
                try db.cachedStatement(sql: SQLiteRows.HotPath.insertTransition).execute(
                    arguments: [change.transactionId, documentType, transition.from, transition.to, change.time, change.reason])
                sequences.append(db.lastInsertedRowID)
            }
            if let document = change.document, let stored = change.stored {
                try db.cachedStatement(sql: SQLiteRows.HotPath.insertDocument).execute(
                    arguments: [
                        document.id, document.transactionId, document.type, stored.fields, document.source, document.contentHash,
                        stored.contentDigest, stored.revision, document.createdAt
                    ])
            }
            let submission = try change.submission.map { end in
                try SQLiteRows.save(db, SubmissionRules.ended(try SQLiteRows.submissionRow(db, end.documentId), end, at: change.time)).record
            }
            return WrittenChange(sequences: sequences, submission: submission)
        }
    }

    func saveSubmission(_ end: SubmissionEnd, at time: Date) async throws -> SubmissionRecord {
        try await write { db in
            guard try SQLiteRows.documentExists(db, end.documentId) else { throw StoreError.unknownDocument(end.documentId) }
            return try SQLiteRows.save(db, SubmissionRules.ended(try SQLiteRows.submissionRow(db, end.documentId), end, at: time)).record
        }
    }

    func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws -> SubmissionClaim {
        try await write { db in
            guard try SQLiteRows.documentExists(db, documentId) else { throw StoreError.unknownDocument(documentId) }
            let (claim, row) = SubmissionRules.claim(
                try SQLiteRows.submissionRow(db, documentId), documentId: documentId, owner: owner, until: expiry, at: time)
            if let row { try SQLiteRows.save(db, row) }
            return claim
        }
    }

    func releaseSubmission(documentId: String, owner: String) async throws {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM submissions WHERE documentId = ? AND claimOwner = ? AND attempts = 0 AND outcome = 'PENDING'",
                arguments: [documentId, owner])
            try db.execute(
                sql: "UPDATE submissions SET claimOwner = NULL, claimExpiresAt = NULL WHERE documentId = ? AND claimOwner = ?",
                arguments: [documentId, owner])
        }
    }

    func setSignals(_ sealed: String, of transactionId: String) async throws -> String?? {
        try await write { db in
            try db.execute(
                sql: "UPDATE transactions SET signals = ? WHERE id = ? AND signals IS NULL AND purgedAt IS NULL", arguments: [sealed, transactionId])
            guard let row = try Row.fetchOne(db, sql: "SELECT signals FROM transactions WHERE id = ?", arguments: [transactionId]) else { return nil }
            return .some(try row.value("signals") as String?)
        }
    }

    func updateProtectState<T: Sendable>(
        of transactionId: String, _ body: @escaping @Sendable (Bool, String?) throws -> (ProtectStateWrite, T)
    ) async throws -> T? {
        try await write { db in
            guard let purged = try Row.fetchOne(db, sql: "SELECT purgedAt IS NOT NULL FROM transactions WHERE id = ?", arguments: [transactionId])
            else { return nil }
            let stored = try String.fetchOne(db, sql: "SELECT state FROM protectStates WHERE transactionId = ?", arguments: [transactionId])
            let (change, result) = try body(try purged.value(0), stored)
            switch change {
            case .keep: break
            case .delete: try db.execute(sql: "DELETE FROM protectStates WHERE transactionId = ?", arguments: [transactionId])
            case .save(let text):
                try db.execute(
                    sql:
                        "INSERT INTO protectStates (transactionId, state) VALUES (?, ?) ON CONFLICT (transactionId) DO UPDATE SET state = excluded.state",
                    arguments: [transactionId, text])
            }
            return result
        }
    }

    // MARK: - Retention

    func purgeCandidates(keepNewest: Int?, createdBefore: Date?) async throws -> [PurgeCandidate] {
        try await read { db in
            let beyondCount: SQL =
                keepNewest.map { "id NOT IN (SELECT id FROM transactions ORDER BY createdAt DESC, id DESC LIMIT \($0))" } ?? "0"
            let beyondAge: SQL = createdBefore.map { "createdAt < \($0)" } ?? "0"
            let request = SQLRequest<Row>(
                literal: """
                    SELECT id, version, submissionStatus, expiresAt,
                        EXISTS (SELECT 1 FROM documentStatuses d WHERE d.transactionId = t.id AND d.status = 'COLLECTED'),
                        (SELECT count(*) FROM documents WHERE transactionId = t.id)
                    FROM transactions t WHERE purgedAt IS NULL AND (\(beyondCount) OR \(beyondAge)) ORDER BY createdAt, id
                    """)
            return try request.fetchAll(db).map {
                PurgeCandidate(
                    id: try $0.value(0), version: try $0.value(1), submissionStatus: try $0.value(2), expiresAt: try $0.value(3),
                    collecting: try $0.value(4), documents: try $0.value(5))
            }
        }
    }

    func purge(_ transactions: [(id: String, version: Int64)], at time: Date, reason: String) async throws -> [String] {
        try await write { db in
            // Freed cells are overwritten, not left in the pages (`reclaim` rewrites the file besides).
            try db.execute(sql: "PRAGMA secure_delete = ON")
            defer { try? db.execute(sql: "PRAGMA secure_delete = OFF") }
            var purged: [String] = []
            for (id, version) in transactions {
                try db.execute(
                    sql:
                        "UPDATE transactions SET verificationCode = '', signals = NULL, purgedAt = ?, version = version + 1 WHERE id = ? AND version = ?",
                    arguments: [time, id, version])
                guard db.changesCount == 1 else { continue }
                // Nothing that verifies a guess at what was removed stays: neither the fingerprint nor the digest.
                try db.execute(
                    sql: "UPDATE documents SET fields = '', contentHash = '', contentDigest = NULL WHERE transactionId = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM protectStates WHERE transactionId = ?", arguments: [id])
                try db.execute(sql: SQLiteReviews.purge, arguments: [id])
                try db.execute(
                    sql: """
                        INSERT INTO transitions (transactionId, documentType, fromStatus, toStatus, at, reason)
                        SELECT id, NULL, submissionStatus, submissionStatus, ?, ? FROM transactions WHERE id = ?
                        """, arguments: [time, reason, id])
                purged.append(id)
            }
            return purged
        }
    }

    // MARK: - The operator's view's sessions

    // They hold no identity data and nothing sealed: written whatever key another process changed to.

    func insertSession(hash: String, expiresAt: Date, at time: Date) async throws {
        try await write(checkingKey: false) { db in
            try db.execute(sql: "DELETE FROM operatorSessions WHERE expiresAt <= ?", arguments: [time])
            try db.execute(
                sql: "INSERT INTO operatorSessions (idHash, createdAt, expiresAt) VALUES (?, ?, ?)", arguments: [hash, time, expiresAt])
        }
    }

    func sessionExpiry(hash: String) async throws -> Date? {
        try await read { db in try Date.fetchOne(db, sql: "SELECT expiresAt FROM operatorSessions WHERE idHash = ?", arguments: [hash]) }
    }

    func deleteSession(hash: String) async throws {
        try await write(checkingKey: false) { db in try db.execute(sql: "DELETE FROM operatorSessions WHERE idHash = ?", arguments: [hash]) }
    }

    /// In one write transaction, refused once the store's key is no longer the one this process writes under.
    func write<T: Sendable>(checkingKey: Bool = true, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let wrapped = expected.withLock { $0 }
        if let file, !file.isStillThere { throw StoreError.fileGone(location) }
        do {
            return try await writer.write { db in
                if checkingKey, try String.fetchOne(db.cachedStatement(sql: SQLiteRows.HotPath.dataKey)) != wrapped {
                    throw StoreError.keyChangedElsewhere(wasEncrypted: wrapped != nil)
                }
                return try body(db)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.database(StoreFile.describe(error))
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writer.read(body)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.database(StoreFile.describe(error))
        }
    }
}
