import Foundation
import Logging
import PostgresNIO
import Synchronization
import VerifyModel

/// The shared store: PostgreSQL through postgres-nio, for several machines working on one set of transactions.
/// The same migrations and invariants as the SQLite store; where SQLite serialises every write, this one locks
/// the transaction's row (`SELECT ... FOR UPDATE`) so that concurrent writers to one transaction take turns.
///
/// The client's connection pool must be running: use `StoreLocation.withStore`, which runs it for the
/// duration of its body.
package final class PostgresTransactionStore: TransactionStore {
    let database: StoreDatabase
    var logger: Logger { database.logger }
    private let turns = TransactionTurns()
    private let recent = RecentTransactions()
    private var core: StoreCore<PostgresTransactionStore> { StoreCore(rows: self, turns: turns, recent: recent) }
    /// How values are sealed, and the data key as the store keeps it wrapped (nil in clear).
    private let keys: Mutex<(sealing: StoreSealing, wrapped: String?)>
    var sealing: StoreSealing { keys.withLock { $0.sealing } }
    package var isEncrypted: Bool { sealing.isSealed }
    /// Nil only for a database an earlier version wrote, opened by a command that does not migrate: it names no
    /// document.
    private let identity: DocumentIdentity?

    package func documentIdentity() throws(StoreError) -> DocumentIdentity {
        guard let identity else {
            throw .cannotOpen(
                "\(database.location) was written by an earlier version: open it once with a command that writes (run, worker, enqueue) to migrate it"
            )
        }
        return identity
    }

    init(database: StoreDatabase, sealing: StoreSealing = .clear, wrapped: String? = nil, identity: DocumentIdentity?) {
        self.database = database
        keys = Mutex((sealing, wrapped))
        self.identity = identity
    }

    /// The store in `database`, its data key unwrapped with `encryption`'s key, or made for a new store that requires
    /// encryption (unless another process recorded one first: then that one must open). `create` false: an older
    /// store without the key table is a store in clear.
    static func open(_ database: StoreDatabase, encryption: StoreEncryption) async throws(StoreError) -> PostgresTransactionStore {
        let logger = database.logger, location = database.location
        let (sealing, wrapped) = try await database.transaction { connection -> (StoreSealing, String?) in
            let hasKeys =
                try await connection.query("SELECT to_regclass('store_keys') IS NOT NULL", logger: logger)
                .collect().first?.decode(Bool.self) ?? false
            var wrapped: String?
            if hasKeys {
                for try await value in try await connection.query("SELECT wrapped_key FROM store_keys WHERE id = 1", logger: logger)
                    .decode(String.self)
                { wrapped = value }
            }
            let holds =
                try await connection.query("SELECT EXISTS (SELECT 1 FROM transactions)", logger: logger)
                .collect().first?.decode(Bool.self) ?? false
            let (sealing, newWrapped) = try StoreSealing.decide(wrapped: wrapped, holdsTransactions: holds, encryption, location: location)
            guard let newWrapped else { return (sealing, wrapped) }
            let inserted = try await connection.query(
                """
                INSERT INTO store_keys (id, wrapped_key, created_at) VALUES (1, \(newWrapped), \(Date())) ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger: logger
            ).collect()
            if !inserted.isEmpty { return (sealing, newWrapped) }
            // Another process made the store's key first: it must open with this one too.
            for try await value in try await connection.query("SELECT wrapped_key FROM store_keys WHERE id = 1", logger: logger)
                .decode(String.self)
            {
                return (try StoreSealing.decide(wrapped: value, holdsTransactions: true, encryption, location: location).0, value)
            }
            throw StoreError.database("the store's key could not be recorded")
        }
        let identity = try await openIdentity(database, sealing)
        return PostgresTransactionStore(database: database, sealing: sealing, wrapped: wrapped, identity: identity)
    }

    /// The store's document secret; a store without one (new, or written by an earlier version) gets one, and its
    /// documents are renamed with it in the same transaction, then the tables rewritten without the old names. Nil
    /// when the table is missing (an earlier version's database opened without migrating).
    static func openIdentity(_ database: StoreDatabase, _ sealing: StoreSealing) async throws(StoreError) -> DocumentIdentity? {
        let logger = database.logger
        let (identity, renamed) = try await database.transaction { connection -> (DocumentIdentity?, Int) in
            let exists =
                try await connection.query("SELECT to_regclass('document_identity') IS NOT NULL", logger: logger)
                .collect().first?.decode(Bool.self) ?? false
            guard exists else { return (nil, 0) }
            for try await stored in try await connection.query("SELECT secret FROM document_identity WHERE id = 1", logger: logger)
                .decode(String.self)
            {
                return (try DocumentIdentity(stored: try sealing.open(stored, .documentIdentity, row: "1")), 0)
            }
            let identity = DocumentIdentity.generate()
            let sealed = try sealing.seal(identity.stored, .documentIdentity, row: "1")
            // Processes opening together: one inserts, the others wait for it here and then read its secret.
            let inserted = try await connection.query(
                """
                INSERT INTO document_identity (id, secret, created_at) VALUES (1, \(sealed), \(Date())) ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else {
                for try await stored in try await connection.query("SELECT secret FROM document_identity WHERE id = 1", logger: logger)
                    .decode(String.self)
                {
                    return (try DocumentIdentity(stored: try sealing.open(stored, .documentIdentity, row: "1")), 0)
                }
                throw StoreError.database("the store's document secret could not be read")
            }
            return (identity, try await rename(connection, with: identity, sealing, logger: logger))
        }
        if renamed > 0 {
            logger.notice("documents named by an earlier version were renamed with the store's secret", metadata: ["documents": "\(renamed)"])
            // The old names stay in dead row versions until the tables are rewritten.
            try await database.withConnection { connection in
                try await connection.query("VACUUM FULL documents, submissions, transitions", logger: logger)
                if try await holdsWorkQueue(connection, logger: logger) {
                    try await connection.query("VACUUM FULL work_items", logger: logger)
                }
            }
        }
        return identity
    }

    /// Renames the documents an earlier version named with plain SHA-256: their rows (submissions follow, ON UPDATE
    /// CASCADE), fields (sealed to their id), the transitions' reasons and the work queue's results that name them.
    static func rename(
        _ connection: PostgresConnection, with identity: DocumentIdentity, _ sealing: StoreSealing,
        logger: Logger
    ) async throws -> Int {
        var documents: [(String, String, String, String)] = []
        for try await row in try await connection.query(
            "SELECT id, transaction_id, content_hash, fields FROM documents FOR UPDATE",
            logger: logger
        ).decode((String, String, String, String).self) {
            documents.append(row)
        }
        var renames: [String: String] = [:]
        for (id, transactionId, contentHash, stored) in documents {
            guard let rename = identity.rename(id: id, transactionId: transactionId, contentHash: contentHash) else { continue }
            let fields =
                stored.isEmpty
                ? stored
                : try sealing.seal(try sealing.open(stored, .documentFields, row: rename.from), .documentFields, row: rename.to)
            try await connection.query(
                """
                UPDATE documents SET id = \(rename.to), content_hash = \(rename.contentHash), fields = \(fields) WHERE id = \(rename.from)
                """, logger: logger)
            renames[rename.from] = rename.to
        }
        guard !renames.isEmpty else { return 0 }
        var reasons: [(Int64, String)] = []
        for try await row in try await connection.query("SELECT sequence, reason FROM transitions WHERE reason LIKE '%doc-%'", logger: logger)
            .decode((Int64, String).self)
        {
            reasons.append(row)
        }
        for (sequence, reason) in reasons {
            let renamed = DocumentIdentity.renaming(reason, renames)
            if renamed != reason {
                try await connection.query("UPDATE transitions SET reason = \(renamed) WHERE sequence = \(sequence)", logger: logger)
            }
        }
        guard try await holdsWorkQueue(connection, logger: logger) else { return renames.count }
        var results: [(Int64, String)] = []
        for try await row in try await connection.query("SELECT id, result FROM work_items WHERE result IS NOT NULL", logger: logger)
            .decode((Int64, String).self)
        {
            results.append(row)
        }
        for (id, stored) in results {
            let result = try sealing.open(stored, .workResult, row: "\(id)")
            let renamed = DocumentIdentity.renaming(result, renames)
            if renamed != result {
                let sealed = try sealing.seal(renamed, .workResult, row: "\(id)")
                try await connection.query("UPDATE work_items SET result = \(sealed) WHERE id = \(id)", logger: logger)
            }
        }
        return renames.count
    }

    // MARK: - Schema

    /// Named migrations as frozen SQL, applied in order under an advisory lock so that workers starting together
    /// agree. Never change one once shipped (a test checksums them); add a new one.
    static let migrations: [(String, [String])] = [
        (
            "v1-transactions-documents-transitions-submissions",
            [
                """
                CREATE TABLE transactions (
                    id text PRIMARY KEY CHECK (length(id) > 0),
                    verification_code text NOT NULL,
                    env_id text,
                    submission_status text NOT NULL CHECK (submission_status IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED')),
                    created_at timestamptz NOT NULL,
                    updated_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL,
                    signals text
                )
                """,
                """
                CREATE TABLE document_statuses (
                    transaction_id text NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
                    document_type text NOT NULL CHECK (document_type IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                    requirement text NOT NULL CHECK (requirement IN ('REQUIRED', 'OPTIONAL')),
                    status text NOT NULL CHECK (status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')),
                    PRIMARY KEY (transaction_id, document_type)
                )
                """,
                """
                CREATE TABLE documents (
                    id text PRIMARY KEY CHECK (length(id) > 0),
                    transaction_id text NOT NULL,
                    document_type text NOT NULL,
                    fields text NOT NULL,
                    source text NOT NULL,
                    content_hash text NOT NULL,
                    created_at timestamptz NOT NULL,
                    FOREIGN KEY (transaction_id, document_type) REFERENCES document_statuses(transaction_id, document_type)
                )
                """,
                "CREATE INDEX documents_by_transaction ON documents(transaction_id)",
                """
                CREATE TABLE transitions (
                    sequence bigserial PRIMARY KEY,
                    transaction_id text NOT NULL REFERENCES transactions(id),
                    document_type text CHECK (document_type IS NULL OR document_type IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                    from_status text NOT NULL,
                    to_status text NOT NULL,
                    at timestamptz NOT NULL,
                    reason text NOT NULL,
                    CHECK ((document_type IS NULL AND from_status IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED') AND to_status IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED'))
                        OR (document_type IS NOT NULL AND from_status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED') AND to_status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')))
                )
                """,
                "CREATE INDEX transitions_by_transaction ON transitions(transaction_id, sequence)",
                """
                CREATE TABLE submissions (
                    document_id text PRIMARY KEY REFERENCES documents(id),
                    attempts integer NOT NULL CHECK (attempts >= 0),
                    outcome text NOT NULL CHECK (outcome IN ('PENDING','ACCEPTED','FAILED')),
                    error text,
                    updated_at timestamptz NOT NULL
                )
                """
            ]
        ),
        (
            "v2-protect-behavior-and-risk",
            [
                "ALTER TABLE transactions ADD COLUMN behavior text",
                "ALTER TABLE transactions ADD COLUMN risk_evaluation text"
            ]
        ),
        // Writes name the version they were decided on (StoreCore): a change by another worker in between is seen.
        (
            "v5-transaction-versions",
            [
                "ALTER TABLE transactions ADD COLUMN version bigint NOT NULL DEFAULT 0 CHECK (version >= 0)"
            ]
        ),
        // Protect's state leaves the transaction's row for a table of its own, one JSON document per transaction
        // that the Protect module defines; the store only keeps it.
        (
            "v6-protect-states",
            [
                """
                CREATE TABLE protect_states (
                    transaction_id text PRIMARY KEY REFERENCES transactions(id) ON DELETE CASCADE,
                    state jsonb NOT NULL
                )
                """,
                """
                INSERT INTO protect_states (transaction_id, state)
                SELECT id, jsonb_build_object('behavior', behavior::jsonb, 'riskEvaluation', risk_evaluation)
                FROM transactions WHERE behavior IS NOT NULL OR risk_evaluation IS NOT NULL
                """,
                "ALTER TABLE transactions DROP COLUMN behavior, DROP COLUMN risk_evaluation"
            ]
        ),
        // A submission is claimed (owner and expiry) before it is sent: processes sharing the store send it once.
        (
            "v7-submission-claims",
            [
                """
                ALTER TABLE submissions ADD COLUMN claim_owner text, ADD COLUMN claim_expires_at timestamptz,
                    ADD CONSTRAINT submission_claims_whole CHECK ((claim_owner IS NULL) = (claim_expires_at IS NULL))
                """
            ]
        ),
        // Identity data at rest: the data key, wrapped by the key-encryption key (one row), and when a
        // transaction's data was purged by the retention policy.
        (
            "v8-store-keys-and-purges",
            [
                """
                CREATE TABLE store_keys (
                    id integer PRIMARY KEY CHECK (id = 1),
                    wrapped_key text NOT NULL,
                    created_at timestamptz NOT NULL,
                    rotated_at timestamptz
                )
                """,
                "ALTER TABLE transactions ADD COLUMN purged_at timestamptz"
            ]
        ),
        // The operator's view pages through transactions by their last change, counts them by status and counts
        // recent collections, each from an index however large the store.
        (
            "v9-operator-view-indexes",
            [
                "CREATE INDEX transactions_by_update ON transactions(updated_at, id)",
                "CREATE INDEX transactions_by_status ON transactions(submission_status)",
                "CREATE INDEX transitions_by_time ON transitions(at)"
            ]
        ),
        // Document ids and content hashes are keyed with a secret of the store's own (one row, sealed in an
        // encrypted store); the documents of an earlier version are renamed when a store opens (`openIdentity`),
        // their submissions following the new id.
        (
            "v10-document-identity",
            [
                """
                CREATE TABLE document_identity (
                    id integer PRIMARY KEY CHECK (id = 1),
                    secret text NOT NULL,
                    created_at timestamptz NOT NULL
                )
                """,
                """
                ALTER TABLE submissions DROP CONSTRAINT submissions_document_id_fkey,
                    ADD CONSTRAINT submissions_document_id_fkey FOREIGN KEY (document_id) REFERENCES documents(id) ON UPDATE CASCADE
                """
            ]
        )
    ]

    /// The work queue's migrations, recorded in this ledger until they moved to the queue's own.
    static let retiredMigrations: Set<String> = ["v3-work-queue", "v4-work-groups"]

    /// Applies the missing migrations; refuses a database that has migrations this version does not know.
    static func migrate(_ database: StoreDatabase) async throws(StoreError) {
        try await database.migrate(ledger: "schema_migrations", migrations, retired: retiredMigrations)
    }

    /// For commands that open an existing store: the database must already hold a store of a version this one reads;
    /// `complete` (commands that only read): with every migration of this version applied.
    static func requireSchema(_ database: StoreDatabase, complete: Bool) async throws(StoreError) {
        try await database.requireMigrations(ledger: "schema_migrations", migrations, retired: retiredMigrations, complete: complete)
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

    package func submission(documentId: String) async throws(StoreError) -> SubmissionRecord? {
        try await withConnection { connection in
            try await Self.submission(connection, documentId, logger: self.logger)
        }
    }

    /// One statement: the claim is taken, or renewed, unless the submission was accepted or another owner's claim has
    /// not expired; when it is not taken, one read says why. The upsert locks the row it did not update, so that read
    /// sees what the upsert saw.
    package func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws(StoreError)
        -> SubmissionClaim
    {
        let logger = logger
        return try await database.transaction { connection in
            let taken = try await connection.query(
                """
                INSERT INTO submissions (document_id, attempts, outcome, updated_at, claim_owner, claim_expires_at)
                SELECT id, 0, 'PENDING', \(time), \(owner), \(expiry) FROM documents WHERE id = \(documentId)
                ON CONFLICT (document_id) DO UPDATE SET claim_owner = EXCLUDED.claim_owner,
                    claim_expires_at = EXCLUDED.claim_expires_at, updated_at = EXCLUDED.updated_at
                WHERE submissions.outcome <> 'ACCEPTED' AND (submissions.claim_owner IS NULL
                    OR submissions.claim_owner = EXCLUDED.claim_owner OR submissions.claim_expires_at <= EXCLUDED.updated_at)
                RETURNING submissions.attempts
                """, logger: logger
            ).collect()
            if let row = taken.first { return SubmissionClaim.claimed(attempts: try row.decode(Int.self)) }
            for try await (outcome, until, attempts) in try await connection.query(
                "SELECT outcome, claim_expires_at, attempts FROM submissions WHERE document_id = \(documentId)", logger: logger
            )
            .decode((String, Date?, Int).self) {
                if outcome == SubmissionOutcome.accepted.rawValue { return .accepted }
                if let until { return .held(until: until, attempts: attempts) }
            }
            throw StoreError.unknownDocument(documentId)
        }
    }

    package func releaseSubmission(documentId: String, owner: String) async throws(StoreError) {
        let logger = logger
        try await database.transaction { connection in
            try await connection.query(
                """
                DELETE FROM submissions WHERE document_id = \(documentId) AND claim_owner = \(owner) AND attempts = 0 AND outcome = 'PENDING'
                """, logger: logger)
            try await connection.query(
                """
                UPDATE submissions SET claim_owner = NULL, claim_expires_at = NULL
                WHERE document_id = \(documentId) AND claim_owner = \(owner)
                """, logger: logger)
        }
    }

    package func document(id: String) async throws(StoreError) -> DocumentRecord? {
        let sealing = sealing
        return try await withConnection { connection in
            for try await (id, transactionId, type, fields, source, hash, created) in try await connection.query(
                """
                SELECT id, transaction_id, document_type, fields, source, content_hash, created_at FROM documents WHERE id = \(id)
                """, logger: self.logger
            ).decode((String, String, String, String, String, String, Date).self) {
                return DocumentRecord(
                    id: id, transactionId: transactionId, type: try EnumColumn.decode(type),
                    fields: try FieldsColumn.decode(fields, sealing, document: id),
                    source: source, contentHash: hash, createdAt: created)
            }
            return nil
        }
    }

    package func transaction(id: String) async throws(StoreError) -> StoredTransaction? {
        try await withConnection { connection in try await self.read(connection, transaction: id, document: nil)?.transaction }
    }

    package func latestKnown(id: String) async throws(StoreError) -> StoredTransaction? {
        try await core.latestKnown(id)
    }

    package func report(id: String) async throws(StoreError) -> TransactionReport? {
        let sealing = sealing
        return try await withConnection { connection in
            guard let transaction = try await self.read(connection, transaction: id, document: nil)?.transaction else { return nil }
            // Each document with its submission: one statement however many documents.
            var documents: [TransactionReport.Document] = []
            for try await (documentId, type, source, fields, attempts, outcome, error, updated) in try await connection.query(
                """
                SELECT d.id, d.document_type, d.source, d.fields, s.attempts, s.outcome, s.error, s.updated_at
                FROM documents d LEFT JOIN submissions s ON s.document_id = d.id
                WHERE d.transaction_id = \(id) ORDER BY d.created_at, d.id
                """, logger: self.logger
            ).decode((String, String, String, String, Int?, String?, String?, Date?).self) {
                let keys = try FieldsColumn.decode(fields, sealing, document: documentId).keys
                var submission: SubmissionRecord?
                if let attempts, let outcome, let updated {
                    submission = SubmissionRecord(
                        documentId: documentId, attempts: attempts, outcome: try EnumColumn.decode(outcome),
                        error: error, updatedAt: updated)
                }
                documents.append(.init(id: documentId, type: try EnumColumn.decode(type), source: source, keys: keys, submission: submission))
            }
            var history: [TransitionRecord] = []
            for try await (sequence, type, from, to, at, reason) in try await connection.query(
                """
                SELECT sequence, document_type, from_status, to_status, at, reason FROM transitions
                WHERE transaction_id = \(id) ORDER BY sequence
                """, logger: self.logger
            ).decode((Int64, String?, String, String, Date, String).self) {
                history.append(
                    TransitionRecord(
                        sequence: sequence, transactionId: id, documentType: type.flatMap(DocumentType.init(rawValue:)),
                        from: from, to: to, at: at, reason: reason))
            }
            return TransactionReport(
                transaction: transaction, documents: documents, history: history,
                data: DataState(purgedAt: transaction.purgedAt, sealing))
        }
    }

    package func count(of ids: [String], status: DocumentSubmissionStatus) async throws(StoreError) -> Int {
        try await withConnection { connection in
            try await connection.query(
                """
                SELECT count(*) FROM transactions WHERE id = ANY(\(ids)) AND submission_status = \(status.rawValue)
                """, logger: self.logger
            ).collect().first?.decode(Int.self) ?? 0
        }
    }

    package func transactions(
        status: DocumentSubmissionStatus?, search: String?, limit: Int,
        after cursor: TransactionCursor?
    ) async throws(StoreError) -> TransactionPage {
        let sealing = sealing
        return try await withConnection { connection in
            var rows: [(String, String, Date, Date, Date?)] = []
            var lastMicroseconds: Int64 = 0
            // NULL parameters switch their condition off: one statement for every combination. The cursor's time is
            // compared in whole microseconds, as stored (a Date in between could round a row out or in).
            for try await (id, status, updated, expires, purged, microseconds) in try await connection.query(
                """
                SELECT id, submission_status, updated_at, expires_at, purged_at,
                       (extract(epoch FROM updated_at) * 1000000)::int8 FROM transactions
                WHERE (\(status?.rawValue)::text IS NULL OR submission_status = \(status?.rawValue))
                AND (\(search)::text IS NULL OR strpos(id, \(search)) > 0)
                AND (\(cursor?.time.microseconds)::int8 IS NULL
                     OR (updated_at, id) < (to_timestamp(0) + \(cursor?.time.microseconds)::int8 * interval '1 microsecond', \(cursor?.id)))
                ORDER BY updated_at DESC, id DESC LIMIT \(limit + 1)
                """, logger: self.logger
            ).decode((String, String, Date, Date, Date?, Int64).self) {
                if rows.count < limit { lastMicroseconds = microseconds }
                rows.append((id, status, updated, expires, purged))
            }
            let page = Array(rows.prefix(limit))
            let summaries = try await Self.summaries(connection, page, sealing, logger: self.logger)
            let next =
                rows.count > limit
                ? page.last.map { TransactionCursor(time: BoundedTime(microseconds: lastMicroseconds) ?? BoundedTime(microseconds: 0)!, id: $0.0) }
                : nil
            return TransactionPage(transactions: summaries, next: next)
        }
    }

    package func overview(collectedSince since: Date) async throws(StoreError) -> StoreOverview {
        try await withConnection { connection in
            var counts: [DocumentSubmissionStatus: Int] = [:]
            for try await (status, count) in try await connection.query(
                "SELECT submission_status, count(*)::bigint FROM transactions GROUP BY submission_status", logger: self.logger
            ).decode((String, Int).self) {
                counts[try EnumColumn.decode(status)] = count
            }
            let collected =
                try await connection.query(
                    """
                    SELECT count(*)::bigint FROM transitions WHERE at >= \(since) AND to_status = 'COLLECTED' AND document_type IS NOT NULL
                    """, logger: self.logger
                ).collect().first?.decode(Int.self) ?? 0
            return StoreOverview(transactions: counts, collected: collected)
        }
    }

    package func transactions(status: DocumentSubmissionStatus?) async throws(StoreError) -> [TransactionSummary] {
        let sealing = sealing
        return try await withConnection { connection in
            var rows: [(String, String, Date, Date, Date?)] = []
            let query: PostgresQuery =
                if let status {
                    "SELECT id, submission_status, updated_at, expires_at, purged_at FROM transactions WHERE submission_status = \(status.rawValue) ORDER BY updated_at DESC, id"
                } else {
                    "SELECT id, submission_status, updated_at, expires_at, purged_at FROM transactions ORDER BY updated_at DESC, id"
                }
            for try await row in try await connection.query(query, logger: self.logger).decode((String, String, Date, Date, Date?).self) {
                rows.append(row)
            }
            return try await Self.summaries(connection, rows, sealing, logger: self.logger)
        }
    }

    /// The list's lines for transaction rows (id, status, updated, expires, purged), with their documents' statuses
    /// read in one query.
    static func summaries(
        _ connection: PostgresConnection, _ rows: [(String, String, Date, Date, Date?)], _ sealing: StoreSealing,
        logger: Logger
    ) async throws -> [TransactionSummary] {
        var statuses: [String: [DocumentType: DocumentStatus]] = [:]
        for try await (transactionId, type, status) in try await connection.query(
            """
            SELECT transaction_id, document_type, status FROM document_statuses WHERE transaction_id = ANY(\(rows.map(\.0)))
            """, logger: logger
        ).decode((String, String, String).self) {
            statuses[transactionId, default: [:]][try EnumColumn.decode(type) as DocumentType] = try EnumColumn.decode(status)
        }
        return try rows.map { id, status, updated, expires, purged in
            TransactionSummary(
                id: id, status: try EnumColumn.decode(status), documents: statuses[id] ?? [:],
                updatedAt: updated, expiresAt: expires, data: DataState(purgedAt: purged, sealing))
        }
    }

    package func setSignals(_ signals: String, of transactionId: String) async throws(StoreError) -> String {
        let sealing = sealing
        let sealed = try sealing.seal(signals, .signals, row: transactionId)
        let stored = try await transaction { connection in
            try await connection.query(
                """
                UPDATE transactions SET signals = \(sealed) WHERE id = \(transactionId) AND signals IS NULL AND purged_at IS NULL
                """, logger: self.logger)
            for try await stored in try await connection.query(
                "SELECT signals FROM transactions WHERE id = \(transactionId)",
                logger: self.logger
            ).decode(String?.self) {
                if let stored { return stored }
            }
            throw StoreError.unknownTransaction(transactionId)
        }
        return try sealing.open(stored, .signals, row: transactionId)
    }

    package func protectState<State: Codable & Sendable>(of transactionId: String, as type: State.Type) async throws(StoreError) -> State? {
        let sealing = sealing
        let text = try await withConnection { connection -> String? in
            for try await state in try await connection.query(
                "SELECT state::text FROM protect_states WHERE transaction_id = \(transactionId)", logger: self.logger
            ).decode(String.self) {
                return state
            }
            return nil
        }
        return try text.map { text throws(StoreError) in try ProtectStateColumn.decode(text, as: type, sealing, row: transactionId) }
    }

    package func updateProtectState<State: Codable & Sendable>(
        of transactionId: String, as type: State.Type,
        _ transform: @escaping @Sendable (State?) -> State?
    ) async throws(StoreError) -> State? {
        let sealing = sealing
        return try await transaction { connection in
            // The transaction's row lock makes updates of its Protect state take turns, the first one included. The
            // state is read by a statement of its own, after the lock: its snapshot then holds the previous update.
            let locked = try await connection.query(
                "SELECT purged_at IS NOT NULL FROM transactions WHERE id = \(transactionId) FOR UPDATE",
                logger: self.logger
            ).collect()
            guard let row = locked.first else { throw StoreError.unknownTransaction(transactionId) }
            // A purged transaction's Protect state is gone for good: nothing after the purge brings it back.
            if try row.decode(Bool.self) { return nil }
            var current: State?
            for try await text in try await connection.query(
                "SELECT state::text FROM protect_states WHERE transaction_id = \(transactionId)", logger: self.logger
            ).decode(String.self) {
                current = try ProtectStateColumn.decode(text, as: type, sealing, row: transactionId)
            }
            guard let updated = transform(current) else {
                try await connection.query("DELETE FROM protect_states WHERE transaction_id = \(transactionId)", logger: self.logger)
                return nil
            }
            let text = try ProtectStateColumn.encode(updated, sealing, row: transactionId)
            try await connection.query(
                """
                INSERT INTO protect_states (transaction_id, state) VALUES (\(transactionId), \(text)::jsonb)
                ON CONFLICT (transaction_id) DO UPDATE SET state = EXCLUDED.state
                """, logger: self.logger)
            return updated
        }
    }

    // MARK: - Identity data at rest

    package func purge(_ retention: Retention, at time: Date, dryRun: Bool) async throws(StoreError) -> PurgeOutcome {
        guard retention.mode != .none else { return PurgeOutcome(transactions: [], documents: 0) }
        let logger = logger, cutoff = time.addingTimeInterval(-retention.maxAge), reason = retention.reason
        let byCount = retention.byCount, byAge = retention.byAge, keep = retention.keep
        let outcome = try await transaction { connection in
            // The rows are locked: a writer deciding on one meanwhile waits, then finds its version moved on.
            var ids: [String] = []
            for try await id in try await connection.query(
                """
                SELECT id FROM transactions t WHERE purged_at IS NULL
                AND (submission_status = 'COMPLETED' OR (expires_at < \(time) AND NOT EXISTS (
                    SELECT 1 FROM document_statuses d WHERE d.transaction_id = t.id AND d.status = 'COLLECTED')))
                AND ((\(byCount) AND id NOT IN (SELECT id FROM transactions ORDER BY created_at DESC, id DESC LIMIT \(keep)))
                    OR (\(byAge) AND created_at < \(cutoff)))
                ORDER BY created_at, id FOR UPDATE
                """, logger: logger
            ).decode(String.self) {
                ids.append(id)
            }
            let documents =
                try await connection.query("SELECT count(*) FROM documents WHERE transaction_id = ANY(\(ids))", logger: logger)
                .collect().first?.decode(Int.self) ?? 0
            guard !dryRun, !ids.isEmpty else { return PurgeOutcome(transactions: ids, documents: documents) }
            try await connection.query("UPDATE documents SET fields = '' WHERE transaction_id = ANY(\(ids))", logger: logger)
            try await connection.query("DELETE FROM protect_states WHERE transaction_id = ANY(\(ids))", logger: logger)
            try await connection.query(
                """
                INSERT INTO transitions (transaction_id, document_type, from_status, to_status, at, reason)
                SELECT id, NULL, submission_status, submission_status, \(time), \(reason) FROM transactions
                WHERE id = ANY(\(ids)) ORDER BY created_at, id
                """, logger: logger)
            try await connection.query(
                """
                UPDATE transactions SET verification_code = '', signals = NULL, purged_at = \(time), version = version + 1
                WHERE id = ANY(\(ids))
                """, logger: logger)
            // The work queue, in the same database when there is one, holds the documents' jobs and results too: done
            // ones, and queued ones that named their transaction (a worker that claims one reports it purged).
            if try await Self.holdsWorkQueue(connection, logger: logger) {
                try await connection.query(
                    """
                    UPDATE work_items SET job = '', result = NULL WHERE kind = 'document' AND transaction_id = ANY(\(ids))
                    """, logger: logger)
            }
            return PurgeOutcome(transactions: ids, documents: documents)
        }
        if !dryRun { recent.forget(outcome.transactions) }
        return outcome
    }

    package func encrypt(with key: KeyEncryptionKey, at time: Date) async throws(StoreError) -> Int {
        let dataKey = DataKey.generate()
        let sealing = StoreSealing.sealed(dataKey), wrapped = try key.wrap(dataKey)
        let logger = logger, location = database.location
        let sealed = try await transaction { connection in
            try await Self.takeAlone(connection, location: location, doing: "encrypt it", logger: logger)
            let inserted = try await connection.query(
                """
                INSERT INTO store_keys (id, wrapped_key, created_at) VALUES (1, \(wrapped), \(time)) ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { throw StoreError.cannotOpen("\(location) is encrypted already") }
            return try await Self.reseal(connection, from: .clear, to: sealing, logger: logger)
        }
        keys.withLock { $0 = (sealing, wrapped) }
        try await vacuumSealedTables()
        return sealed
    }

    package func rotateKey(to key: KeyEncryptionKey, at time: Date) async throws(StoreError) -> Int {
        let (sealing, old) = keys.withLock { $0 }
        let location = database.location, logger = logger
        guard sealing.isSealed, let old else {
            throw .cannotOpen("\(location) is not encrypted: encrypt it with `verify-pipeline store encrypt`")
        }
        let dataKey = DataKey.generate()
        let rotated = StoreSealing.sealed(dataKey), wrapped = try key.wrap(dataKey)
        let count = try await transaction { connection in
            try await Self.takeAlone(connection, location: location, doing: "rotate its key", logger: logger)
            let changed = try await connection.query(
                """
                UPDATE store_keys SET wrapped_key = \(wrapped), rotated_at = \(time) WHERE id = 1 AND wrapped_key = \(old) RETURNING 1
                """, logger: logger
            ).collect()
            guard !changed.isEmpty else {
                throw StoreError.cannotOpen("the key of \(location) was rotated by another process meanwhile; nothing was changed")
            }
            return try await Self.reseal(connection, from: sealing, to: rotated, logger: logger)
        }
        keys.withLock { $0 = (rotated, wrapped) }
        try await vacuumSealedTables()
        return count
    }

    /// Inside a transaction that changes how the store is sealed: no other session may be connected (a process that
    /// holds the old sealing would go on writing with it), and one that connects meanwhile waits on the key table
    /// until the change is committed, then reads the new key.
    static func takeAlone(_ connection: PostgresConnection, location: String, doing action: String, logger: Logger) async throws {
        try await connection.query("LOCK TABLE store_keys IN ACCESS EXCLUSIVE MODE", logger: logger)
        let others =
            try await connection.query(
                """
                SELECT count(*)::int8 FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> \(PostgresLocation.applicationName)
                """, logger: logger
            ).collect().first?.decode(Int64.self) ?? 0
        guard others == 0 else {
            throw StoreError.cannotOpen(
                "\(location) has \(others) other session(s) connected (a worker, a run, serve): stop every process using the store, then \(action)")
        }
        try await connection.query("LOCK TABLE transactions, documents, protect_states IN EXCLUSIVE MODE", logger: logger)
    }

    /// Every sealed value opened with `old` and sealed again with `new` (`.clear` for a store in clear): the
    /// transactions' codes and signals, the documents' fields, the Protect states, the document secret and, in a
    /// database that holds the work queue, its items' jobs and results. Returns how many values.
    static func reseal(_ connection: PostgresConnection, from old: StoreSealing, to new: StoreSealing, logger: Logger) async throws -> Int {
        var count = 0
        var transactions: [(String, String, String?)] = []
        for try await row in try await connection.query(
            "SELECT id, verification_code, signals FROM transactions WHERE purged_at IS NULL", logger: logger
        ).decode((String, String, String?).self) {
            transactions.append(row)
        }
        for (id, code, signals) in transactions {
            let sealedCode = try new.seal(try old.open(code, .verificationCode, row: id), .verificationCode, row: id)
            let sealedSignals = try new.seal(optional: try old.open(optional: signals, .signals, row: id), .signals, row: id)
            try await connection.query(
                "UPDATE transactions SET verification_code = \(sealedCode), signals = \(sealedSignals) WHERE id = \(id)",
                logger: logger)
            count += signals == nil ? 1 : 2
        }
        var documents: [(String, String)] = []
        for try await row in try await connection.query("SELECT id, fields FROM documents WHERE fields <> ''", logger: logger)
            .decode((String, String).self)
        {
            documents.append(row)
        }
        for (id, fields) in documents {
            let sealedFields = try new.seal(try old.open(fields, .documentFields, row: id), .documentFields, row: id)
            try await connection.query("UPDATE documents SET fields = \(sealedFields) WHERE id = \(id)", logger: logger)
            count += 1
        }
        var states: [(String, String)] = []
        for try await row in try await connection.query("SELECT transaction_id, state::text FROM protect_states", logger: logger)
            .decode((String, String).self)
        {
            states.append(row)
        }
        for (id, state) in states {
            let json = try ProtectStateColumn.open(json: state, old, row: id)
            let sealedState = try ProtectStateColumn.seal(json: json, new, row: id)
            try await connection.query("UPDATE protect_states SET state = \(sealedState)::jsonb WHERE transaction_id = \(id)", logger: logger)
            count += 1
        }
        for try await secret in try await connection.query("SELECT secret FROM document_identity WHERE id = 1", logger: logger).decode(String.self) {
            let sealed = try new.seal(try old.open(secret, .documentIdentity, row: "1"), .documentIdentity, row: "1")
            try await connection.query("UPDATE document_identity SET secret = \(sealed) WHERE id = 1", logger: logger)
            count += 1
        }
        guard try await holdsWorkQueue(connection, logger: logger) else { return count }
        var items: [(Int64, String, String?)] = []
        for try await row in try await connection.query(
            """
            SELECT id, job, result FROM work_items WHERE kind = 'document' AND (job <> '' OR result IS NOT NULL) FOR UPDATE
            """, logger: logger
        ).decode((Int64, String, String?).self) {
            items.append(row)
        }
        for (id, job, result) in items {
            let row = "\(id)"
            let sealedJob = job.isEmpty ? job : try new.seal(try old.open(job, .workJob, row: row), .workJob, row: row)
            let sealedResult = try new.seal(optional: try old.open(optional: result, .workResult, row: row), .workResult, row: row)
            try await connection.query("UPDATE work_items SET job = \(sealedJob), result = \(sealedResult) WHERE id = \(id)", logger: logger)
            count += (job.isEmpty ? 0 : 1) + (result == nil ? 0 : 1)
        }
        return count
    }

    /// Whether the database holds the work queue's tables too (the queue keeps its items sealed with the store's key).
    static func holdsWorkQueue(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query("SELECT to_regclass('work_items') IS NOT NULL", logger: logger).collect().first?.decode(Bool.self) ?? false
    }

    /// Rewrites the tables that hold sealed values, so that the row versions an encryption or a rotation replaced
    /// (clear values, values under the retired data key, its old wrapping) leave their files. Copies in WAL not yet
    /// recycled, archives, replicas and backups are beyond this.
    func vacuumSealedTables() async throws(StoreError) {
        let logger = logger
        try await withConnection { connection in
            try await connection.query("VACUUM FULL store_keys, document_identity, transactions, documents, protect_states", logger: logger)
            if try await Self.holdsWorkQueue(connection, logger: logger) {
                try await connection.query("VACUUM FULL work_items", logger: logger)
            }
        }
    }

    // MARK: - Helpers

    /// The transaction, its document statuses and version, and whether `document` is recorded: one statement, so
    /// one snapshot (a writer changes all of them in one statement too).
    func read(_ connection: PostgresConnection, transaction id: String, document: String?) async throws -> TransactionRead? {
        let sealing = sealing
        for try await row in try await connection.execute(ReadTransaction(id: id, document: document), logger: logger) {
            return try Self.transactionRead(row, sealing)
        }
        return nil
    }

    static func transactionRead(_ row: TransactionColumns, _ sealing: StoreSealing) throws -> TransactionRead {
        var policy: [DocumentType: DocumentRequirement] = [:], documents: [DocumentType: DocumentStatus] = [:]
        for entry in row.9 {
            // Vocabulary words hold no spaces (the schema's CHECK constraints).
            let words = entry.split(separator: " ").map(String.init)
            guard words.count == 3, let type = DocumentType(rawValue: words[0]),
                let requirement = DocumentRequirement(rawValue: words[1]), let status = DocumentStatus(rawValue: words[2])
            else {
                throw StoreError.database("transaction \(row.0) has an unreadable document status")
            }
            policy[type] = requirement
            documents[type] = status
        }
        let state = TransactionState(
            policy: policy, documents: documents,
            submissionStatus: try EnumColumn.decode(row.3), expiresAt: row.6)
        // A purged transaction's code and payload are gone: there is nothing to open.
        let purged = row.10 != nil
        let transaction = StoredTransaction(
            id: row.0, verificationCode: purged ? "" : try sealing.open(row.1, .verificationCode, row: row.0),
            envId: row.2, state: state, createdAt: row.4, updatedAt: row.5,
            signals: purged ? nil : try sealing.open(optional: row.7, .signals, row: row.0),
            version: row.8, purgedAt: row.10)
        return TransactionRead(transaction: transaction, documentRecorded: row.11)
    }

    static func submission(_ connection: PostgresConnection, _ documentId: String, logger: Logger) async throws -> SubmissionRecord? {
        for try await (attempts, outcome, error, updated) in try await connection.query(
            "SELECT attempts, outcome, error, updated_at FROM submissions WHERE document_id = \(documentId)", logger: logger
        )
        .decode((Int, String, String?, Date).self) {
            return SubmissionRecord(
                documentId: documentId, attempts: attempts, outcome: try EnumColumn.decode(outcome),
                error: error, updatedAt: updated)
        }
        return nil
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(StoreError) -> T {
        try await database.transaction(body)
    }

    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(StoreError) -> T {
        try await database.withConnection(body)
    }
}

extension PostgresTransactionStore: StoreRows {
    func read(transaction id: String, document: String?) async throws(StoreError) -> TransactionRead? {
        try await withConnection { connection in try await self.read(connection, transaction: id, document: document) }
    }

    func read(ownerOf documentId: String) async throws(StoreError) -> (TransactionRead, DocumentType)? {
        let sealing = sealing
        return try await withConnection { connection in
            for try await (columns, documentType) in try await connection.execute(ReadDocumentOwner(documentId: documentId), logger: self.logger) {
                return (try Self.transactionRead(columns, sealing), try EnumColumn.decode(documentType))
            }
            return nil
        }
    }

    func insert(_ new: NewTransaction, state: TransactionState) async throws(StoreError) -> InsertOutcome {
        let sealing = sealing
        var sealed = new
        sealed.verificationCode = try sealing.seal(new.verificationCode, .verificationCode, row: new.id)
        sealed.signals = try sealing.seal(optional: new.signals, .signals, row: new.id)
        return try await withConnection { [sealed] connection in
            for try await (inserted, existing) in try await connection.execute(InsertTransaction(new: sealed, state: state), logger: self.logger) {
                if inserted == 1 { return .inserted }
                return try existing.map { .existing(try Self.transactionRead($0, sealing)) } ?? .concurrent
            }
            return .concurrent
        }
    }

    func write(_ change: StatusChange) async throws(StoreError) -> WrittenChange? {
        let statement = try StatusChangeStatement.prepared(change, sealing)
        return try await withConnection { connection in try await statement.write(on: connection, logger: self.logger) }
    }

    func saveSubmission(_ end: SubmissionEnd, at time: Date) async throws(StoreError) -> SubmissionRecord {
        let increment = end.outcome == .pending ? 0 : 1
        return try await withConnection { connection in
            for try await (attempts, stored, message, updated) in try await connection.query(
                """
                INSERT INTO submissions (document_id, attempts, outcome, error, updated_at)
                SELECT id, \(increment), \(end.outcome.rawValue), \(end.error), \(time) FROM documents WHERE id = \(end.documentId)
                ON CONFLICT (document_id) DO UPDATE SET attempts = submissions.attempts + \(increment),
                    outcome = EXCLUDED.outcome, error = EXCLUDED.error, updated_at = EXCLUDED.updated_at,
                    claim_owner = CASE WHEN \(increment) = 1 THEN NULL ELSE submissions.claim_owner END,
                    claim_expires_at = CASE WHEN \(increment) = 1 THEN NULL ELSE submissions.claim_expires_at END
                RETURNING attempts, outcome, error, updated_at
                """, logger: self.logger
            ).decode((Int, String, String?, Date).self) {
                return SubmissionRecord(
                    documentId: end.documentId, attempts: attempts, outcome: try EnumColumn.decode(stored),
                    error: message, updatedAt: updated)
            }
            throw StoreError.unknownDocument(end.documentId)
        }
    }
}

/// Enum columns, read back from their wire spellings.
enum EnumColumn {
    static func decode<Value: RawRepresentable>(_ text: String) throws(StoreError) -> Value where Value.RawValue == String {
        guard let value = Value(rawValue: text) else { throw StoreError.database("the store holds an unknown \(Value.self) value") }
        return value
    }
}
