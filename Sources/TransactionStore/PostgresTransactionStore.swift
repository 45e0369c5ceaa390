import Foundation
import Logging
import PostgresNIO
import VerifyModel

/// The shared store: PostgreSQL through postgres-nio, for several machines working on one set of transactions.
/// The same migrations and invariants as the SQLite store; where SQLite serialises every write, this one locks
/// the transaction's row (`SELECT ... FOR UPDATE`) so that concurrent writers to one transaction take turns.
///
/// The client's connection pool must be running: use `StoreLocation.withStore`, which runs it for the
/// duration of its body.
public final class PostgresTransactionStore: TransactionStore {
    let database: StoreDatabase
    var logger: Logger { database.logger }
    private let turns = TransactionTurns()
    private let recent = RecentTransactions()
    private var core: StoreCore<PostgresTransactionStore> { StoreCore(rows: self, turns: turns, recent: recent) }

    init(database: StoreDatabase) {
        self.database = database
    }

    // MARK: - Schema

    /// Named migrations as frozen SQL, applied in order under an advisory lock so that workers starting together
    /// agree. Never change one once shipped (a test checksums them); add a new one.
    static let migrations: [(String, [String])] = [
            ("v1-transactions-documents-transitions-submissions", [
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
                """,
            ]),
            ("v2-protect-behavior-and-risk", [
                "ALTER TABLE transactions ADD COLUMN behavior text",
                "ALTER TABLE transactions ADD COLUMN risk_evaluation text",
            ]),
            // Writes name the version they were decided on (StoreCore): a change by another worker in between is seen.
            ("v5-transaction-versions", [
                "ALTER TABLE transactions ADD COLUMN version bigint NOT NULL DEFAULT 0 CHECK (version >= 0)",
            ]),
            // Protect's state leaves the transaction's row for a table of its own, one JSON document per transaction
            // that the Protect module defines; the store only keeps it.
            ("v6-protect-states", [
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
                "ALTER TABLE transactions DROP COLUMN behavior, DROP COLUMN risk_evaluation",
            ]),
            // A submission is claimed (owner and expiry) before it is sent: processes sharing the store send it once.
            ("v7-submission-claims", [
                """
                ALTER TABLE submissions ADD COLUMN claim_owner text, ADD COLUMN claim_expires_at timestamptz,
                    ADD CONSTRAINT submission_claims_whole CHECK ((claim_owner IS NULL) = (claim_expires_at IS NULL))
                """,
            ]),
    ]

    /// The work queue's migrations, recorded in this ledger until they moved to the queue's own.
    static let retiredMigrations: Set<String> = ["v3-work-queue", "v4-work-groups"]

    /// Applies the missing migrations; refuses a database that has migrations this version does not know.
    func migrate() async throws(StoreError) {
        try await database.migrate(ledger: "schema_migrations", Self.migrations, retired: Self.retiredMigrations)
    }

    /// For read-only commands: the database must already hold a store of a version this one reads.
    func requireSchema() async throws(StoreError) {
        try await database.requireMigrations(ledger: "schema_migrations", Self.migrations, retired: Self.retiredMigrations)
    }

    // MARK: - TransactionStore

    public func openTransaction(_ new: NewTransaction) async throws(StoreError) -> StoredTransaction {
        try await core.openTransaction(new)
    }

    public func collect(_ document: DocumentRecord, at time: Date) async throws(StoreError) -> CollectOutcome {
        try await core.collect(document, at: time)
    }

    public func apply(_ event: DocumentEvent, to type: DocumentType, of transactionId: String, reason: String,
                      at time: Date) async throws(StoreError) -> (StoredTransaction, [TransitionRecord]) {
        try await core.apply(event, to: type, of: transactionId, reason: reason, at: time)
    }

    public func endInput(of transactionId: String, reason: String, at time: Date) async throws(StoreError)
        -> (StoredTransaction, [TransitionRecord])? {
        try await core.endInput(of: transactionId, reason: reason, at: time)
    }

    public func recordSubmission(documentId: String, outcome: SubmissionOutcome, error: String?,
                                 at time: Date) async throws(StoreError) -> SubmissionRecord {
        try await core.recordSubmission(documentId: documentId, outcome: outcome, error: error, at: time)
    }

    public func finishSubmission(documentId: String, type: DocumentType, of transactionId: String, accepted: Bool,
                                 error: String?, at time: Date) async throws(StoreError) -> (StoredTransaction, SubmissionRecord, [TransitionRecord]) {
        try await core.finishSubmission(documentId: documentId, type: type, transactionId: transactionId, accepted: accepted,
                                        error: error, at: time)
    }

    public func submission(documentId: String) async throws(StoreError) -> SubmissionRecord? {
        try await withConnection { connection in
            try await Self.submission(connection, documentId, logger: self.logger)
        }
    }

    /// One statement: the claim is taken, or renewed, unless the submission was accepted or another owner's claim has
    /// not expired; when it is not taken, one read says why.
    public func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws(StoreError)
        -> SubmissionClaim {
        let logger = logger
        return try await database.transaction { connection in
            let taken = try await connection.query("""
                INSERT INTO submissions (document_id, attempts, outcome, updated_at, claim_owner, claim_expires_at)
                SELECT id, 0, 'PENDING', \(time), \(owner), \(expiry) FROM documents WHERE id = \(documentId)
                ON CONFLICT (document_id) DO UPDATE SET claim_owner = EXCLUDED.claim_owner,
                    claim_expires_at = EXCLUDED.claim_expires_at, updated_at = EXCLUDED.updated_at
                WHERE submissions.outcome <> 'ACCEPTED' AND (submissions.claim_owner IS NULL
                    OR submissions.claim_owner = EXCLUDED.claim_owner OR submissions.claim_expires_at <= EXCLUDED.updated_at)
                RETURNING 1
                """, logger: logger).collect()
            if !taken.isEmpty { return SubmissionClaim.claimed }
            for try await (outcome, until) in try await connection.query(
                "SELECT outcome, claim_expires_at FROM submissions WHERE document_id = \(documentId)", logger: logger)
                .decode((String, Date?).self) {
                if outcome == SubmissionOutcome.accepted.rawValue { return .accepted }
                if let until { return .held(until: until) }
            }
            throw StoreError.unknownDocument(documentId)
        }
    }

    public func releaseSubmission(documentId: String, owner: String) async throws(StoreError) {
        let logger = logger
        try await database.transaction { connection in
            try await connection.query("""
                DELETE FROM submissions WHERE document_id = \(documentId) AND claim_owner = \(owner) AND attempts = 0 AND outcome = 'PENDING'
                """, logger: logger)
            try await connection.query("""
                UPDATE submissions SET claim_owner = NULL, claim_expires_at = NULL
                WHERE document_id = \(documentId) AND claim_owner = \(owner)
                """, logger: logger)
        }
    }

    public func document(id: String) async throws(StoreError) -> DocumentRecord? {
        try await withConnection { connection in
            for try await (id, transactionId, type, fields, source, hash, created) in try await connection.query("""
                SELECT id, transaction_id, document_type, fields, source, content_hash, created_at FROM documents WHERE id = \(id)
                """, logger: self.logger).decode((String, String, String, String, String, String, Date).self) {
                return DocumentRecord(id: id, transactionId: transactionId, type: try EnumColumn.decode(type),
                                      fields: try JSONDecoder().decode(DocumentFields.self, from: Data(fields.utf8)),
                                      source: source, contentHash: hash, createdAt: created)
            }
            return nil
        }
    }

    public func transaction(id: String) async throws(StoreError) -> StoredTransaction? {
        try await withConnection { connection in try await Self.read(connection, transaction: id, document: nil, logger: self.logger)?.transaction }
    }

    public func latestKnown(id: String) async throws(StoreError) -> StoredTransaction? {
        try await core.latestKnown(id)
    }

    public func report(id: String) async throws(StoreError) -> TransactionReport? {
        try await withConnection { connection in
            guard let transaction = try await Self.read(connection, transaction: id, document: nil, logger: self.logger)?.transaction else { return nil }
            var documents: [TransactionReport.Document] = []
            for try await (documentId, type, source, fields) in try await connection.query("""
                SELECT id, document_type, source, fields FROM documents WHERE transaction_id = \(id) ORDER BY created_at, id
                """, logger: self.logger).decode((String, String, String, String).self) {
                let keys = try JSONDecoder().decode(DocumentFields.self, from: Data(fields.utf8)).keys
                documents.append(.init(id: documentId, type: try EnumColumn.decode(type), source: source, keys: keys, submission: nil))
            }
            for index in documents.indices {
                documents[index].submission = try await Self.submission(connection, documents[index].id, logger: self.logger)
            }
            var history: [TransitionRecord] = []
            for try await (sequence, type, from, to, at, reason) in try await connection.query("""
                SELECT sequence, document_type, from_status, to_status, at, reason FROM transitions
                WHERE transaction_id = \(id) ORDER BY sequence
                """, logger: self.logger).decode((Int64, String?, String, String, Date, String).self) {
                history.append(TransitionRecord(sequence: sequence, transactionId: id, documentType: type.flatMap(DocumentType.init(rawValue:)),
                                                from: from, to: to, at: at, reason: reason))
            }
            return TransactionReport(transaction: transaction, documents: documents, history: history)
        }
    }

    public func count(of ids: [String], status: DocumentSubmissionStatus) async throws(StoreError) -> Int {
        try await withConnection { connection in
            try await connection.query("""
                SELECT count(*) FROM transactions WHERE id = ANY(\(ids)) AND submission_status = \(status.rawValue)
                """, logger: self.logger).collect().first?.decode(Int.self) ?? 0
        }
    }

    public func transactions(status: DocumentSubmissionStatus?) async throws(StoreError) -> [TransactionSummary] {
        try await withConnection { connection in
            var rows: [(String, String, Date, Date)] = []
            let query: PostgresQuery = if let status {
                "SELECT id, submission_status, updated_at, expires_at FROM transactions WHERE submission_status = \(status.rawValue) ORDER BY updated_at DESC, id"
            } else {
                "SELECT id, submission_status, updated_at, expires_at FROM transactions ORDER BY updated_at DESC, id"
            }
            for try await row in try await connection.query(query, logger: self.logger).decode((String, String, Date, Date).self) {
                rows.append(row)
            }
            var statuses: [String: [DocumentType: DocumentStatus]] = [:]
            for try await (transactionId, type, status) in try await connection.query("""
                SELECT transaction_id, document_type, status FROM document_statuses WHERE transaction_id = ANY(\(rows.map(\.0)))
                """, logger: self.logger).decode((String, String, String).self) {
                statuses[transactionId, default: [:]][try EnumColumn.decode(type) as DocumentType] = try EnumColumn.decode(status)
            }
            return try rows.map { id, status, updated, expires in
                TransactionSummary(id: id, status: try EnumColumn.decode(status), documents: statuses[id] ?? [:],
                                   updatedAt: updated, expiresAt: expires)
            }
        }
    }

    public func setSignals(_ signals: String, of transactionId: String) async throws(StoreError) -> String {
        try await transaction { connection in
            try await connection.query("UPDATE transactions SET signals = \(signals) WHERE id = \(transactionId) AND signals IS NULL",
                                       logger: self.logger)
            for try await stored in try await connection.query("SELECT signals FROM transactions WHERE id = \(transactionId)",
                                                               logger: self.logger).decode(String?.self) {
                if let stored { return stored }
            }
            throw StoreError.unknownTransaction(transactionId)
        }
    }

    public func protectState<State: Codable & Sendable>(of transactionId: String, as type: State.Type) async throws(StoreError) -> State? {
        let text = try await withConnection { connection -> String? in
            for try await state in try await connection.query(
                "SELECT state::text FROM protect_states WHERE transaction_id = \(transactionId)", logger: self.logger).decode(String.self) {
                return state
            }
            return nil
        }
        return try text.map { text throws(StoreError) in try ProtectStateColumn.decode(text, as: type) }
    }

    public func updateProtectState<State: Codable & Sendable>(of transactionId: String, as type: State.Type,
                                                             _ transform: @escaping @Sendable (State?) -> State?) async throws(StoreError) -> State? {
        try await transaction { connection in
            // The transaction's row lock makes updates of its Protect state take turns, the first one included. The
            // state is read by a statement of its own, after the lock: its snapshot then holds the previous update.
            let locked = try await connection.query("SELECT 1 FROM transactions WHERE id = \(transactionId) FOR UPDATE",
                                                    logger: self.logger).collect()
            guard !locked.isEmpty else { throw StoreError.unknownTransaction(transactionId) }
            var current: State?
            for try await text in try await connection.query(
                "SELECT state::text FROM protect_states WHERE transaction_id = \(transactionId)", logger: self.logger).decode(String.self) {
                current = try ProtectStateColumn.decode(text, as: type)
            }
            guard let updated = transform(current) else {
                try await connection.query("DELETE FROM protect_states WHERE transaction_id = \(transactionId)", logger: self.logger)
                return nil
            }
            let text = try ProtectStateColumn.encode(updated)
            try await connection.query("""
                INSERT INTO protect_states (transaction_id, state) VALUES (\(transactionId), \(text)::jsonb)
                ON CONFLICT (transaction_id) DO UPDATE SET state = EXCLUDED.state
                """, logger: self.logger)
            return updated
        }
    }

    // MARK: - Helpers

    /// The transaction, its document statuses and version, and whether `document` is recorded: one statement, so
    /// one snapshot (a writer changes all of them in one statement too).
    static func read(_ connection: PostgresConnection, transaction id: String, document: String?,
                     logger: Logger) async throws -> TransactionRead? {
        for try await row in try await connection.execute(ReadTransaction(id: id, document: document), logger: logger) {
            return try transactionRead(row)
        }
        return nil
    }

    static func transactionRead(_ row: TransactionColumns) throws -> TransactionRead {
        var policy: [DocumentType: DocumentRequirement] = [:], documents: [DocumentType: DocumentStatus] = [:]
        for entry in row.9 {
            // Vocabulary words hold no spaces (the schema's CHECK constraints).
            let words = entry.split(separator: " ").map(String.init)
            guard words.count == 3, let type = DocumentType(rawValue: words[0]),
                  let requirement = DocumentRequirement(rawValue: words[1]), let status = DocumentStatus(rawValue: words[2]) else {
                throw StoreError.database("transaction \(row.0) has an unreadable document status")
            }
            policy[type] = requirement
            documents[type] = status
        }
        let state = TransactionState(policy: policy, documents: documents,
                                     submissionStatus: try EnumColumn.decode(row.3), expiresAt: row.6)
        let transaction = StoredTransaction(id: row.0, verificationCode: row.1, envId: row.2, state: state, createdAt: row.4,
                                            updatedAt: row.5, signals: row.7, version: row.8)
        return TransactionRead(transaction: transaction, documentRecorded: row.10)
    }

    static func submission(_ connection: PostgresConnection, _ documentId: String, logger: Logger) async throws -> SubmissionRecord? {
        for try await (attempts, outcome, error, updated) in try await connection.query(
            "SELECT attempts, outcome, error, updated_at FROM submissions WHERE document_id = \(documentId)", logger: logger)
            .decode((Int, String, String?, Date).self) {
            return SubmissionRecord(documentId: documentId, attempts: attempts, outcome: try EnumColumn.decode(outcome),
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
        try await withConnection { connection in
            try await Self.read(connection, transaction: id, document: document, logger: self.logger)
        }
    }

    func read(ownerOf documentId: String) async throws(StoreError) -> (TransactionRead, DocumentType)? {
        try await withConnection { connection in
            for try await (columns, documentType) in try await connection.execute(ReadDocumentOwner(documentId: documentId), logger: self.logger) {
                return (try Self.transactionRead(columns), try EnumColumn.decode(documentType))
            }
            return nil
        }
    }

    func insert(_ new: NewTransaction, state: TransactionState) async throws(StoreError) -> InsertOutcome {
        try await withConnection { connection in
            for try await (inserted, existing) in try await connection.execute(InsertTransaction(new: new, state: state), logger: self.logger) {
                if inserted == 1 { return .inserted }
                return try existing.map { .existing(try Self.transactionRead($0)) } ?? .concurrent
            }
            return .concurrent
        }
    }

    func write(_ change: StatusChange) async throws(StoreError) -> WrittenChange? {
        let statement = try StatusChangeStatement.prepared(change)
        return try await withConnection { connection in try await statement.write(on: connection, logger: self.logger) }
    }

    func saveSubmission(_ end: SubmissionEnd, at time: Date) async throws(StoreError) -> SubmissionRecord {
        let increment = end.outcome == .pending ? 0 : 1
        return try await withConnection { connection in
            for try await (attempts, stored, message, updated) in try await connection.query("""
                INSERT INTO submissions (document_id, attempts, outcome, error, updated_at)
                SELECT id, \(increment), \(end.outcome.rawValue), \(end.error), \(time) FROM documents WHERE id = \(end.documentId)
                ON CONFLICT (document_id) DO UPDATE SET attempts = submissions.attempts + \(increment),
                    outcome = EXCLUDED.outcome, error = EXCLUDED.error, updated_at = EXCLUDED.updated_at,
                    claim_owner = CASE WHEN \(increment) = 1 THEN NULL ELSE submissions.claim_owner END,
                    claim_expires_at = CASE WHEN \(increment) = 1 THEN NULL ELSE submissions.claim_expires_at END
                RETURNING attempts, outcome, error, updated_at
                """, logger: self.logger).decode((Int, String, String?, Date).self) {
                return SubmissionRecord(documentId: end.documentId, attempts: attempts, outcome: try EnumColumn.decode(stored),
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
