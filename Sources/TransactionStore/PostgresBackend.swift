import Foundation
import Logging
import PostgresNIO
import VerifyModel

/// Tables another module keeps in the store's PostgreSQL database with values sealed under the store's key and
/// naming its transactions (the work queue's items). The store takes them into its own database transactions, so
/// that a purge empties theirs too and a key change seals theirs again: neither can be left behind by a crash.
package protocol PostgresNeighbour: Sendable {
    /// Empties the identity data it keeps for these transactions.
    func purge(transactions ids: [String], on connection: PostgresConnection, logger: Logger) async throws
    /// Every sealed value it keeps, replaced by `rewrite` of it; returns how many values.
    func rewrite(on connection: PostgresConnection, logger: Logger, _ rewrite: SealedRewrite) async throws -> Int
    /// Its tables present in the database, to rewrite after a key change.
    func tables(on connection: PostgresConnection, logger: Logger) async throws -> [String]
}

/// The shared store's rows: PostgreSQL through postgres-nio, for several machines working on one set of transactions.
/// A status change is one statement (`PostgresStatements`); a read of a transaction is one statement too, so one
/// snapshot. The client's connection pool must be running: `StoreLocation.withStore` runs it for its body, a service
/// group beside the store's users runs it as a service (`StoreConnection`).
final class PostgresBackend: StoreBackend {
    let database: StoreDatabase
    let neighbours: [any PostgresNeighbour]
    var location: String { database.location }
    var logger: Logger { database.logger }

    init(database: StoreDatabase, neighbours: [any PostgresNeighbour]) {
        self.database = database
        self.neighbours = neighbours
    }

    // MARK: - Keys and the document secret

    func readKey() async throws -> (wrapped: String?, holdsTransactions: Bool) {
        try await database.withConnection { connection in
            let wrapped = try await Self.first(connection, "SELECT wrapped_key FROM store_keys WHERE id = 1", String.self, self.logger)
            let holds = try await Self.first(connection, "SELECT EXISTS (SELECT 1 FROM transactions)", Bool.self, self.logger) ?? false
            return (wrapped, holds)
        }
    }

    func recordKey(_ wrapped: String, at time: Date) async throws -> String {
        try await database.withConnection { connection in
            try await connection.query(
                "INSERT INTO store_keys (id, wrapped_key, created_at) VALUES (1, \(wrapped), \(time)) ON CONFLICT (id) DO NOTHING",
                logger: self.logger)
            return try await Self.first(connection, "SELECT wrapped_key FROM store_keys WHERE id = 1", String.self, self.logger) ?? wrapped
        }
    }

    /// Nothing to do: a key change waits until no other process is connected (`takeAlone`).
    func expectKey(_ wrapped: String?) {}

    func readDocumentSecret() async throws -> (secret: String, randomIds: Bool)? {
        try await database.withConnection { connection in
            for try await row in try await connection.query("SELECT secret, random_ids FROM document_identity WHERE id = 1", logger: self.logger)
                .decode((String, Bool).self)
            {
                return row
            }
            return nil
        }
    }

    func recordDocumentSecret(
        _ sealed: String, at time: Date, renaming rename: @escaping @Sendable (String, [LegacyDocument]) throws -> DocumentRenames
    ) async throws -> (secret: String, renamed: Int) {
        let logger = logger, neighbours = neighbours
        return try await database.transaction { connection in
            // Processes opening together: one inserts (or locks the row), the others wait for it here and then read
            // what it recorded.
            try await connection.query(
                """
                INSERT INTO document_identity (id, secret, created_at, random_ids) VALUES (1, \(sealed), \(time), true) ON CONFLICT (id) DO NOTHING
                """, logger: logger)
            var secret = sealed, randomIds = true
            for try await row in try await connection.query(
                "SELECT secret, random_ids FROM document_identity WHERE id = 1 FOR UPDATE", logger: logger
            ).decode((String, Bool).self) {
                (secret, randomIds) = row
            }
            // Inserted now, by this process: the store's documents (an earlier release's, if any) are renamed below.
            let insertedNow = secret == sealed
            guard !randomIds || insertedNow else { return (secret, 0) }
            try await connection.query("UPDATE document_identity SET random_ids = true WHERE id = 1", logger: logger)
            var legacy: [LegacyDocument] = []
            for try await (id, transactionId, type, hash, fields) in try await connection.query(
                "SELECT id, transaction_id, document_type, content_hash, fields FROM documents FOR UPDATE", logger: logger
            ).decode((String, String, String, String, String).self) {
                legacy.append(
                    LegacyDocument(id: id, transactionId: transactionId, type: try EnumColumn.decode(type), contentHash: hash, fields: fields))
            }
            let decided = try rename(secret, legacy)
            guard !decided.renames.isEmpty else { return (secret, 0) }
            // Fingerprints first cleared, so that no two rows share one while they are renamed. Submissions follow the
            // ids (ON UPDATE CASCADE).
            try await connection.query("UPDATE documents SET content_hash = ''", logger: logger)
            for rename in decided.renames {
                try await connection.query(
                    """
                    UPDATE documents SET id = \(rename.to), content_hash = \(rename.contentHash), fields = \(rename.fields),
                        content_digest = \(rename.contentDigest) WHERE id = \(rename.from)
                    """, logger: logger)
            }
            var reasons: [(Int64, String)] = []
            for try await row in try await connection.query("SELECT sequence, reason FROM transitions WHERE reason LIKE '%doc-%'", logger: logger)
                .decode((Int64, String).self)
            {
                reasons.append(row)
            }
            let map = decided.map
            for (sequence, reason) in reasons where DocumentIdentity.renaming(reason, map) != reason {
                let renamed = DocumentIdentity.renaming(reason, map)
                try await connection.query("UPDATE transitions SET reason = \(renamed) WHERE sequence = \(sequence)", logger: logger)
            }
            for neighbour in neighbours { _ = try await neighbour.rewrite(on: connection, logger: logger, decided.rewrite) }
            return (secret, decided.renames.count)
        }
    }

    func changeKey(
        from old: String?, to new: String, at time: Date, _ rewrite: @escaping SealedRewrite, refingerprint: @escaping Refingerprint
    ) async throws -> Int {
        let logger = logger, location = location, neighbours = neighbours
        return try await database.transaction(answerWithin: nil) { connection in
            // No other session may be connected: a process that holds the old sealing would go on writing with it. One
            // that connects meanwhile waits on the key table until the change is committed, then reads the new key.
            try await connection.query("LOCK TABLE store_keys IN ACCESS EXCLUSIVE MODE", logger: logger)
            // A process that has just exited is still listed until its server backend notices and ends (seconds on a
            // busy server): the count is read again, on a fresh statistics snapshot, for up to `sessionsEnd`, and only
            // sessions still there then refuse the change.
            func otherSessions() async throws -> Int64 {
                try await connection.query("SELECT pg_stat_clear_snapshot()", logger: logger).collect()
                return try await Self.first(
                    connection,
                    """
                    SELECT count(*)::int8 FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> \(PostgresLocation.applicationName)
                    """, Int64.self, logger) ?? 0
            }
            var others = try await otherSessions()
            let deadline = ContinuousClock.now + Self.sessionsEnd
            while others > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                others = try await otherSessions()
            }
            guard others == 0 else { throw StoreError.othersConnected(location, count: others, encrypting: old == nil) }
            try await connection.query("LOCK TABLE transactions, documents, protect_states IN EXCLUSIVE MODE", logger: logger)
            let changed =
                if let old {
                    try await connection.query(
                        "UPDATE store_keys SET wrapped_key = \(new), rotated_at = \(time) WHERE id = 1 AND wrapped_key = \(old) RETURNING 1",
                        logger: logger
                    ).collect()
                } else {
                    try await connection.query(
                        "INSERT INTO store_keys (id, wrapped_key, created_at) VALUES (1, \(new), \(time)) ON CONFLICT (id) DO NOTHING RETURNING 1",
                        logger: logger
                    ).collect()
                }
            guard !changed.isEmpty else { throw StoreError.keyNotAsOpened(location, encrypting: old == nil) }
            // Fingerprints under the new secret, from the digests as they are sealed before the rewrite below.
            var digests: [(String, String)] = []
            for try await row in try await connection.query(
                "SELECT id, content_digest FROM documents WHERE content_digest IS NOT NULL", logger: logger
            ).decode((String, String).self) {
                digests.append(row)
            }
            for (id, digest) in digests {
                try await connection.query(
                    "UPDATE documents SET content_hash = \(try refingerprint(digest, id)) WHERE id = \(id)", logger: logger)
            }
            try await connection.query("UPDATE documents SET content_hash = '' WHERE content_digest IS NULL", logger: logger)
            var count = 0
            for (table, key, column, sealed, filter) in Self.sealedValues {
                var values: [(String, String)] = []
                for try await row in try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT \(key), \(column) FROM \(table) WHERE \(column) IS NOT NULL AND \(filter)"), logger: logger
                ).decode((String, String).self) {
                    values.append(row)
                }
                for (id, stored) in values {
                    var bindings = PostgresBindings(capacity: 2)
                    bindings.append(try rewrite(stored, sealed, id))
                    bindings.append(id)
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "UPDATE \(table) SET \(Self.name(column)) = $1\(Self.cast(column)) WHERE \(key) = $2", binds: bindings),
                        logger: logger)
                    count += 1
                }
            }
            for neighbour in neighbours { count += try await neighbour.rewrite(on: connection, logger: logger, rewrite) }
            return count
        }
    }

    /// Every column that holds a sealed value: table, key, column, and which rows hold one.
    static let sealedValues: [(String, String, String, SealedColumn, String)] = [
        ("transactions", "id", "verification_code", .verificationCode, "purged_at IS NULL"),
        ("transactions", "id", "signals", .signals, "purged_at IS NULL"),
        ("documents", "id", "fields", .documentFields, "fields <> ''"),
        ("documents", "id", "content_digest", .contentDigest, "true"),
        ("protect_states", "transaction_id", "state::text", .protectState, "true"),
        ("document_identity", "id::text", "secret", .documentIdentity, "true"),
        ("reviews", "transaction_id || '/' || document_type", "inputs", .reviewInputs, "transaction_id IS NOT NULL"),
        ("reviews", "transaction_id || '/' || document_type", "note", .reviewNote, "transaction_id IS NOT NULL")
    ]

    /// The column as a SET names it (the list reads JSON as text), and the cast its value needs.
    private static func name(_ column: String) -> String { column.replacingOccurrences(of: "::text", with: "") }
    private static func cast(_ column: String) -> String { column.hasSuffix("::text") ? "::jsonb" : "" }

    /// After a key change (or a rename), the tables holding sealed values are rewritten, so that the row versions it
    /// replaced leave their files. Copies in WAL not yet recycled, archives, replicas and backups are beyond this. A
    /// purge leaves its rows to autovacuum.
    func reclaim(resealed: Bool) async throws {
        guard resealed else { return }
        let logger = logger, neighbours = neighbours
        try await database.withConnection(answerWithin: nil) { connection in
            var tables = ["store_keys", "document_identity", "transactions", "documents", "protect_states", "submissions", "transitions"]
            for neighbour in neighbours { tables += try await neighbour.tables(on: connection, logger: logger) }
            try await connection.query(PostgresQuery(unsafeSQL: "VACUUM FULL " + tables.joined(separator: ", ")), logger: logger)
        }
    }

    // MARK: - Reads

    func read(transaction id: String, probe: DocumentProbe?) async throws -> (TransactionRow, ProbeResult?)? {
        try await database.withConnection { connection in
            guard let probe else {
                for try await row in try await connection.execute(ReadTransaction(id: id), logger: self.logger) {
                    return (try transactionRow(row), nil)
                }
                return nil
            }
            for try await (row, recordedId, revision, ofType) in try await connection.execute(
                ReadTransactionProbing(id: id, probe: probe), logger: self.logger)
            {
                let recorded = recordedId.map { (id: $0, revision: Int(revision ?? 1)) }
                return (try transactionRow(row), ProbeResult(recorded: recorded, documentsOfType: Int(ofType)))
            }
            return nil
        }
    }

    func read(ownerOf documentId: String) async throws -> (TransactionRow, DocumentType)? {
        try await database.withConnection { connection in
            for try await (columns, documentType) in try await connection.execute(ReadDocumentOwner(documentId: documentId), logger: self.logger) {
                return (try transactionRow(columns), try EnumColumn.decode(documentType))
            }
            return nil
        }
    }

    func document(id: String) async throws -> DocumentRow? {
        try await database.withConnection { connection in
            for try await (id, transactionId, type, fields, source, hash, created) in try await connection.query(
                "SELECT id, transaction_id, document_type, fields, source, content_hash, created_at FROM documents WHERE id = \(id)",
                logger: self.logger
            ).decode((String, String, String, String, String, String, Date).self) {
                return DocumentRow(
                    id: id, transactionId: transactionId, type: try EnumColumn.decode(type), fields: fields, source: source,
                    contentHash: hash, createdAt: created)
            }
            return nil
        }
    }

    func report(id: String) async throws -> ReportRows? {
        try await database.withConnection { connection in
            for try await rows in try await connection.execute(ReadReport(id: id), logger: self.logger) {
                var rows = rows
                rows.reviews = try await PostgresReviews.entries(
                    connection, "WHERE r.transaction_id = \(id) ORDER BY r.document_type", logger: self.logger)
                return rows
            }
            return nil
        }
    }

    func submission(documentId: String) async throws -> SubmissionRecord? {
        try await database.withConnection { connection in
            for try await (attempts, outcome, error, updated) in try await connection.query(
                "SELECT attempts, outcome, error, updated_at FROM submissions WHERE document_id = \(documentId)", logger: self.logger
            ).decode((Int, String, String?, Date).self) {
                return SubmissionRecord(
                    documentId: documentId, attempts: attempts, outcome: try EnumColumn.decode(outcome), error: error, updatedAt: updated)
            }
            return nil
        }
    }

    func protectState(of transactionId: String) async throws -> String? {
        try await database.withConnection { connection in
            try await Self.first(
                connection, "SELECT state::text FROM protect_states WHERE transaction_id = \(transactionId)", String.self, self.logger)
        }
    }

    func summaries(status: DocumentSubmissionStatus?) async throws -> [SummaryRow] {
        try await database.withConnection { connection in
            var rows: [SummaryRow] = []
            for try await (id, status, updated, expires, purged, entries) in try await connection.query(
                """
                SELECT id, submission_status, updated_at, expires_at, purged_at, \(unescaped: PostgresBackend.statusWords) FROM transactions t
                WHERE (\(status?.rawValue)::text IS NULL OR submission_status = \(status?.rawValue)) ORDER BY updated_at DESC, id
                """, logger: self.logger
            ).decode((String, String, Date, Date, Date?, [String]).self) {
                rows.append(try Self.summary(id, status, updated, expires, purged, entries))
            }
            return rows
        }
    }

    func page(
        status: DocumentSubmissionStatus?, search: String?, limit: Int, after cursor: TransactionCursor?
    ) async throws -> ([SummaryRow], TransactionCursor?) {
        try await database.withConnection { connection in
            var rows: [SummaryRow] = []
            var lastMicroseconds: Int64 = 0
            // NULL parameters switch their condition off: one statement for every combination. The cursor's time is
            // compared in whole microseconds, as stored (a Date in between could round a row out or in).
            for try await (id, status, updated, expires, purged, entries, microseconds) in try await connection.query(
                """
                SELECT id, submission_status, updated_at, expires_at, purged_at, \(unescaped: PostgresBackend.statusWords),
                       (extract(epoch FROM updated_at) * 1000000)::int8 FROM transactions t
                WHERE (\(status?.rawValue)::text IS NULL OR submission_status = \(status?.rawValue))
                AND (\(search)::text IS NULL OR strpos(id, \(search)) > 0)
                AND (\(cursor?.time.microseconds)::int8 IS NULL
                     OR (updated_at, id) < (to_timestamp(0) + \(cursor?.time.microseconds)::int8 * interval '1 microsecond', \(cursor?.id)))
                ORDER BY updated_at DESC, id DESC LIMIT \(limit + 1)
                """, logger: self.logger
            ).decode((String, String, Date, Date, Date?, [String], Int64).self) {
                if rows.count < limit { lastMicroseconds = microseconds }
                rows.append(try Self.summary(id, status, updated, expires, purged, entries))
            }
            let page = Array(rows.prefix(limit))
            let next =
                rows.count > limit
                ? page.last.map { TransactionCursor(time: BoundedTime(microseconds: lastMicroseconds) ?? BoundedTime(microseconds: 0)!, id: $0.id) }
                : nil
            return (page, next)
        }
    }

    /// A transaction's document statuses as `type status` words, in the statement that reads it.
    private static let statusWords =
        "ARRAY(SELECT d.document_type || ' ' || d.status FROM document_statuses d WHERE d.transaction_id = t.id)"

    private static func summary(_ id: String, _ status: String, _ updated: Date, _ expires: Date, _ purged: Date?, _ entries: [String])
        throws -> SummaryRow
    {
        var documents: [DocumentType: DocumentStatus] = [:]
        for entry in entries {
            let words = entry.split(separator: " ").map(String.init)
            guard words.count == 2 else { throw StoreError.unreadableStatus(of: id) }
            documents[try EnumColumn.decode(words[0]) as DocumentType] = try EnumColumn.decode(words[1])
        }
        return SummaryRow(
            id: id, status: try EnumColumn.decode(status), documents: documents, updatedAt: updated, expiresAt: expires, purgedAt: purged)
    }

    func overview(collectedSince since: Date) async throws -> StoreOverview {
        try await database.withConnection { connection in
            var counts: [DocumentSubmissionStatus: Int] = [:]
            for try await (status, count) in try await connection.query(
                "SELECT submission_status, count(*)::bigint FROM transactions GROUP BY submission_status", logger: self.logger
            ).decode((String, Int).self) {
                counts[try EnumColumn.decode(status)] = count
            }
            let collected =
                try await Self.first(
                    connection,
                    "SELECT count(*)::bigint FROM transitions WHERE at >= \(since) AND to_status = 'COLLECTED' AND document_type IS NOT NULL",
                    Int.self, self.logger) ?? 0
            return StoreOverview(transactions: counts, collected: collected)
        }
    }

    func collectedByMinute(since: Date) async throws -> [String: Int] {
        try await database.withConnection { connection in
            var counts: [String: Int] = [:]
            for try await (minute, count) in try await connection.query(
                """
                SELECT to_char(date_trunc('minute', at AT TIME ZONE 'UTC'), 'YYYY-MM-DD HH24:MI'), count(*)::bigint FROM transitions
                WHERE at >= \(since) AND to_status = 'COLLECTED' AND document_type IS NOT NULL GROUP BY 1
                """, logger: self.logger
            ).decode((String, Int).self) {
                counts[minute] = count
            }
            return counts
        }
    }

    func count(of ids: [String], status: DocumentSubmissionStatus) async throws -> Int {
        try await database.withConnection { connection in
            try await Self.first(
                connection, "SELECT count(*) FROM transactions WHERE id = ANY(\(ids)) AND submission_status = \(status.rawValue)", Int.self,
                self.logger) ?? 0
        }
    }

    /// How long a key change waits for the sessions of processes that have just ended to leave the server's list.
    static let sessionsEnd = Duration.seconds(5)

    /// The first row's one value, nil when there is no row.
    static func first<T: PostgresDecodable>(_ connection: PostgresConnection, _ query: PostgresQuery, _ type: T.Type, _ logger: Logger)
        async throws -> T?
    {
        try await connection.query(query, logger: logger).collect().first?.decode(T.self)
    }
}
