import Foundation
import Logging
import PostgresNIO
import VerifyModel

// The statements every document runs, prepared once per connection: PostgreSQL then neither parses nor plans them
// again, which was most of its CPU per document. Parameter types are declared, not inferred from the first
// execution's values, so a NULL there cannot fix a parameter's type wrongly for the connection's lifetime.

/// A transaction row `t` with its document statuses and when it was purged, and whether a document is recorded.
typealias TransactionColumns = (String, String, String?, String, Date, Date, Date, String?, Int64, [String], Date?, Bool)

private let transactionColumns = """
    t.id, t.verification_code, t.env_id, t.submission_status, t.created_at, t.updated_at, t.expires_at,
    t.signals, t.version,
    ARRAY(SELECT d.document_type || ' ' || d.requirement || ' ' || d.status FROM document_statuses d WHERE d.transaction_id = t.id),
    t.purged_at
    """

/// The row's values, its statuses read from their `type requirement status` words.
func transactionRow(_ row: TransactionColumns) throws -> TransactionRow {
    var transaction = TransactionRow(
        id: row.0, verificationCode: row.1, envId: row.2, submissionStatus: try EnumColumn.decode(row.3), createdAt: row.4,
        updatedAt: row.5, expiresAt: row.6, signals: row.7, version: row.8, purgedAt: row.10)
    for entry in row.9 {
        // Vocabulary words hold no spaces (the schema's CHECK constraints).
        let words = entry.split(separator: " ").map(String.init)
        guard words.count == 3, let type = DocumentType(rawValue: words[0]),
            let requirement = DocumentRequirement(rawValue: words[1]), let status = DocumentStatus(rawValue: words[2])
        else {
            throw StoreError.unreadableStatus(of: row.0)
        }
        transaction.policy[type] = requirement
        transaction.documents[type] = status
    }
    return transaction
}

/// Enum columns, read back from their wire spellings.
enum EnumColumn {
    static func decode<Value: RawRepresentable>(_ text: String) throws -> Value where Value.RawValue == String {
        guard let value = Value(rawValue: text) else { throw StoreError.unknownValue(Value.self) }
        return value
    }
}

/// A transaction's report in one statement (one snapshot): the transaction, its documents with their submissions, and
/// its history, as parallel arrays ("" for a missing document type; a document without a submission has none).
struct ReadReport: PostgresPreparedStatement {
    static let sql = """
        SELECT \(transactionColumns), false,
            ARRAY(SELECT d.id FROM documents d WHERE d.transaction_id = t.id ORDER BY d.created_at, d.id),
            ARRAY(SELECT d.document_type FROM documents d WHERE d.transaction_id = t.id ORDER BY d.created_at, d.id),
            ARRAY(SELECT d.source FROM documents d WHERE d.transaction_id = t.id ORDER BY d.created_at, d.id),
            ARRAY(SELECT d.fields FROM documents d WHERE d.transaction_id = t.id ORDER BY d.created_at, d.id),
            ARRAY(SELECT d.created_at FROM documents d WHERE d.transaction_id = t.id ORDER BY d.created_at, d.id),
            ARRAY(SELECT d.content_hash FROM documents d WHERE d.transaction_id = t.id ORDER BY d.created_at, d.id),
            ARRAY(SELECT s.document_id FROM submissions s JOIN documents d ON d.id = s.document_id WHERE d.transaction_id = t.id),
            ARRAY(SELECT s.attempts::int8 FROM submissions s JOIN documents d ON d.id = s.document_id WHERE d.transaction_id = t.id),
            ARRAY(SELECT s.outcome FROM submissions s JOIN documents d ON d.id = s.document_id WHERE d.transaction_id = t.id),
            ARRAY(SELECT coalesce(s.error, '') FROM submissions s JOIN documents d ON d.id = s.document_id WHERE d.transaction_id = t.id),
            ARRAY(SELECT s.error IS NOT NULL FROM submissions s JOIN documents d ON d.id = s.document_id WHERE d.transaction_id = t.id),
            ARRAY(SELECT s.updated_at FROM submissions s JOIN documents d ON d.id = s.document_id WHERE d.transaction_id = t.id),
            ARRAY(SELECT h.sequence FROM transitions h WHERE h.transaction_id = t.id ORDER BY h.sequence),
            ARRAY(SELECT coalesce(h.document_type, '') FROM transitions h WHERE h.transaction_id = t.id ORDER BY h.sequence),
            ARRAY(SELECT h.from_status FROM transitions h WHERE h.transaction_id = t.id ORDER BY h.sequence),
            ARRAY(SELECT h.to_status FROM transitions h WHERE h.transaction_id = t.id ORDER BY h.sequence),
            ARRAY(SELECT h.at FROM transitions h WHERE h.transaction_id = t.id ORDER BY h.sequence),
            ARRAY(SELECT h.reason FROM transitions h WHERE h.transaction_id = t.id ORDER BY h.sequence)
        FROM transactions t WHERE t.id = $1
        """
    static let bindingDataTypes: [PostgresDataType] = [.text]
    typealias Row = ReportRows

    var id: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        func column<T: PostgresDecodable>(_ index: Int, _ type: T.Type = T.self) throws -> T { try cells[12 + index].decode(T.self) }
        let transaction = try transactionRow(try row.decode(TransactionColumns.self))
        let (ids, types, sources, fields) = (
            try column(0, [String].self), try column(1, [String].self), try column(2, [String].self), try column(3, [String].self)
        )
        let (created, hashes) = (try column(4, [Date].self), try column(5, [String].self))
        let (submitted, attempts, outcomes) = (try column(6, [String].self), try column(7, [Int64].self), try column(8, [String].self))
        let (errors, hasError, updated) = (try column(9, [String].self), try column(10, [Bool].self), try column(11, [Date].self))
        var submissions: [String: SubmissionRecord] = [:]
        for index in submitted.indices {
            submissions[submitted[index]] = SubmissionRecord(
                documentId: submitted[index], attempts: Int(attempts[index]), outcome: try EnumColumn.decode(outcomes[index]),
                error: hasError[index] ? errors[index] : nil, updatedAt: updated[index])
        }
        var documents: [(DocumentRow, SubmissionRecord?)] = []
        for index in ids.indices {
            let document = DocumentRow(
                id: ids[index], transactionId: transaction.id, type: try EnumColumn.decode(types[index]), fields: fields[index],
                source: sources[index], contentHash: hashes[index], createdAt: created[index])
            documents.append((document, submissions[ids[index]]))
        }
        let (sequences, documentTypes, from, to) = (
            try column(12, [Int64].self), try column(13, [String].self), try column(14, [String].self), try column(15, [String].self)
        )
        let (at, reasons) = (try column(16, [Date].self), try column(17, [String].self))
        let history = sequences.indices.map { index in
            TransitionRecord(
                sequence: sequences[index], transactionId: transaction.id, documentType: DocumentType(rawValue: documentTypes[index]),
                from: from[index], to: to[index], at: at[index], reason: reasons[index])
        }
        return ReportRows(transaction: transaction, documents: documents, history: history)
    }
}

struct ReadTransaction: PostgresPreparedStatement {
    static let sql = """
        SELECT \(transactionColumns), false
        FROM transactions t WHERE t.id = $1
        """
    static let bindingDataTypes: [PostgresDataType] = [.text]
    typealias Row = TransactionColumns

    var id: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The transaction, with what it holds of a document about to be collected: the one with its id or its fingerprint
/// (its id and revision), and how many of its type.
struct ReadTransactionProbing: PostgresPreparedStatement {
    static let sql = """
        SELECT \(transactionColumns), false, found.id, found.revision::int8,
            (SELECT count(*) FROM documents d WHERE d.transaction_id = t.id AND d.document_type = $4)
        FROM transactions t
        LEFT JOIN LATERAL (
            SELECT d.id, d.revision FROM documents d
            WHERE d.transaction_id = t.id AND (d.id = $2 OR (d.document_type = $4 AND d.content_hash = $3 AND d.content_hash <> ''))
            ORDER BY d.id = $2 DESC LIMIT 1
        ) found ON true
        WHERE t.id = $1
        """
    static let bindingDataTypes: [PostgresDataType] = [.text, .text, .text, .text]
    typealias Row = (TransactionColumns, String?, Int64?, Int64)

    var id: String
    var probe: DocumentProbe

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(id)
        bindings.append(probe.id)
        bindings.append(probe.fingerprint)
        bindings.append(probe.type.rawValue)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        return (
            try row.decode(TransactionColumns.self), try cells[12].decode(String?.self), try cells[13].decode(Int64?.self),
            try cells[14].decode(Int64.self)
        )
    }
}

struct ReadDocumentOwner: PostgresPreparedStatement {
    static let sql = """
        SELECT \(transactionColumns), true, doc.document_type
        FROM documents doc JOIN transactions t ON t.id = doc.transaction_id WHERE doc.id = $1
        """
    static let bindingDataTypes: [PostgresDataType] = [.text]
    typealias Row = (TransactionColumns, String)

    var documentId: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(documentId)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        (try row.decode(TransactionColumns.self), try row.makeRandomAccess()[12].decode(String.self))
    }
}

/// The transaction and its statuses, unless it exists: then the row as it was (the statement's snapshot does not
/// see its own insert). A concurrent insert of the same id wins; this one inserts nothing, and sees nothing.
struct InsertTransaction: PostgresPreparedStatement {
    static let sql = """
        WITH created AS (
            INSERT INTO transactions (id, verification_code, env_id, submission_status, created_at, updated_at, expires_at, signals)
            VALUES ($1, $2, $3, $4, $5, $5, $6, $7)
            ON CONFLICT (id) DO NOTHING RETURNING id
        ), statuses AS (
            INSERT INTO document_statuses (transaction_id, document_type, requirement, status)
            SELECT created.id, s.document_type, s.requirement, s.status
            FROM created, unnest($8::text[], $9::text[], $10::text[]) AS s(document_type, requirement, status)
        )
        SELECT \(transactionColumns), false, (SELECT count(*) FROM created)
        FROM (SELECT 1) AS one LEFT JOIN transactions t ON t.id = $1
        """
    static let bindingDataTypes: [PostgresDataType] = [
        .text, .text, .text, .text, .timestamptz, .timestamptz, .text,
        .textArray, .textArray, .textArray
    ]
    /// How many rows it inserted, and the existing row.
    typealias Row = (Int, TransactionColumns?)

    var new: NewTransaction
    var state: TransactionState

    func makeBindings() throws -> PostgresBindings {
        let types = state.documents.keys.sorted { $0.rawValue < $1.rawValue }
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(new.id)
        bindings.append(new.verificationCode)
        bindings.append(new.envId)
        bindings.append(state.submissionStatus.rawValue)
        bindings.append(new.createdAt)
        bindings.append(new.expiresAt)
        bindings.append(new.signals)
        bindings.append(types.map(\.rawValue))
        bindings.append(types.map { (state.policy[$0] ?? .optional).rawValue })
        bindings.append(types.map { (state.documents[$0] ?? .optional).rawValue })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        let inserted = try cells[cells.count - 1].decode(Int.self)
        guard try cells[0].decode(String?.self) != nil else { return (inserted, nil) }
        return (inserted, try row.decode(TransactionColumns.self))
    }
}

/// A whole `StatusChange` in one statement: the version check gates every other part, so a refused change writes
/// nothing. History rows are inserted, and numbered, in the model's order; "" stands for the transaction's own
/// moves, which have no document type. Three shapes (a plain change, one that stores a document, one that records
/// a submission), each prepared with only the parts it uses: an unused part still costs the server its planning.
enum StatusChangeStatement {
    static func prepared(_ change: StatusChange) -> any StatusChangeWriting {
        if let submission = change.submission { return WriteSubmissionEnd(change: change, submission: submission) }
        guard let document = change.document, let stored = change.stored else { return WriteStatusChange(change: change) }
        return WriteCollected(change: change, document: document, stored: stored)
    }

    fileprivate static let head = makeHead(gate: "")

    /// `gate`: more conditions the change is written under.
    fileprivate static func makeHead(gate: String) -> String {
        """
        WITH moved AS (
            UPDATE transactions SET submission_status = $1, updated_at = $2, version = version + 1
            WHERE id = $3 AND version = $4\(gate) RETURNING id
        ), statuses AS (
            UPDATE document_statuses d SET status = s.status
            FROM moved, unnest($5::text[], $6::text[]) AS s(document_type, status)
            WHERE d.transaction_id = moved.id AND d.document_type = s.document_type
        ), history AS (
            INSERT INTO transitions (transaction_id, document_type, from_status, to_status, at, reason)
            SELECT moved.id, NULLIF(h.document_type, ''), h.from_status, h.to_status, $2, $10
            FROM moved, unnest($7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS h(document_type, from_status, to_status, position)
            ORDER BY h.position RETURNING sequence
        ), reviewed AS (
            UPDATE reviews r SET state = COALESCE(r.pending_state, 'resolved'), resolved_at = $2, claim_owner = NULL,
                claim_expires_at = NULL, pending_state = NULL
            FROM moved, unnest($5::text[], $6::text[]) AS s(document_type, status)
            WHERE r.transaction_id = moved.id AND r.document_type = s.document_type AND s.status = 'PROCESSED' AND r.state = 'open'
        )
        """
    }
    fileprivate static let written = "(SELECT count(*) FROM moved), ARRAY(SELECT sequence FROM history ORDER BY sequence)"
    fileprivate static let headTypes: [PostgresDataType] = [
        .text, .timestamptz, .text, .int8, .textArray, .textArray,
        .textArray, .textArray, .textArray, .text
    ]

    fileprivate static func headBindings(_ change: StatusChange, capacity: Int) -> PostgresBindings {
        let documentTypes = change.transitions.map { transition -> String in
            if case .document(let type) = transition.subject { type.rawValue } else { "" }
        }
        var bindings = PostgresBindings(capacity: capacity)
        bindings.append(change.submissionStatus.rawValue)
        bindings.append(change.time)
        bindings.append(change.transactionId)
        bindings.append(change.version)
        bindings.append(change.statuses.map(\.0.rawValue))
        bindings.append(change.statuses.map(\.1.rawValue))
        bindings.append(documentTypes)
        bindings.append(change.transitions.map(\.from))
        bindings.append(change.transitions.map(\.to))
        bindings.append(change.reason)
        return bindings
    }
}

/// Runs on a connection: nil when the version check refused the change.
protocol StatusChangeWriting: Sendable {
    func write(on connection: PostgresConnection, logger: Logger) async throws -> WrittenChange?
}

extension StatusChangeWriting where Self: PostgresPreparedStatement, Row == (Int, [Int64]) {
    func write(on connection: PostgresConnection, logger: Logger) async throws -> WrittenChange? {
        for try await (moved, sequences) in try await connection.execute(self, logger: logger) {
            return moved == 1 ? WrittenChange(sequences: sequences, submission: nil) : nil
        }
        return nil
    }
}

struct WriteStatusChange: PostgresPreparedStatement, StatusChangeWriting {
    static let sql = StatusChangeStatement.head + "SELECT " + StatusChangeStatement.written
    static let bindingDataTypes = StatusChangeStatement.headTypes
    typealias Row = (Int, [Int64])

    var change: StatusChange

    func makeBindings() throws -> PostgresBindings { StatusChangeStatement.headBindings(change, capacity: 10) }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// A change that stores a new document with its move to COLLECTED.
struct WriteCollected: PostgresPreparedStatement, StatusChangeWriting {
    static let sql =
        StatusChangeStatement.head + """
            , document AS (
                INSERT INTO documents (id, transaction_id, document_type, fields, source, content_hash, content_digest, revision, created_at)
                SELECT $11, moved.id, $12, $13, $14, $15, $16, $17, $18 FROM moved
            )
            SELECT
            """ + " " + StatusChangeStatement.written
    static let bindingDataTypes = StatusChangeStatement.headTypes + [.text, .text, .text, .text, .text, .text, .int4, .timestamptz]
    typealias Row = (Int, [Int64])

    var change: StatusChange
    var document: DocumentRecord
    /// The document's columns as stored (fields and digest sealed in an encrypted store).
    var stored: StoredDocument

    func makeBindings() throws -> PostgresBindings {
        var bindings = StatusChangeStatement.headBindings(change, capacity: 18)
        bindings.append(document.id)
        bindings.append(document.type.rawValue)
        bindings.append(stored.fields)
        bindings.append(document.source)
        bindings.append(document.contentHash)
        bindings.append(stored.contentDigest)
        bindings.append(Int32(clamping: stored.revision))
        bindings.append(document.createdAt)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// A change that records a submission's end (one more attempt) with the document's move, if the document is the
/// transaction's, of the moved type.
struct WriteSubmissionEnd: PostgresPreparedStatement, StatusChangeWriting {
    static let sql =
        StatusChangeStatement.makeHead(
            gate: """
                 AND EXISTS (SELECT 1 FROM documents WHERE id = $11 AND transaction_id = $3 AND document_type = $14)
                """) + """
            , submission AS (
                INSERT INTO submissions (document_id, attempts, outcome, error, updated_at)
                SELECT $11, 1, $12, $13, $2 FROM moved
                ON CONFLICT (document_id) DO UPDATE SET attempts = submissions.attempts + 1,
                    outcome = EXCLUDED.outcome, error = EXCLUDED.error, updated_at = EXCLUDED.updated_at,
                    claim_owner = NULL, claim_expires_at = NULL
                RETURNING attempts, outcome, error, updated_at
            )
            SELECT
            """ + " " + StatusChangeStatement.written + """
            , s.attempts, s.outcome, s.error, s.updated_at
            FROM (SELECT 1) AS one LEFT JOIN submission s ON true
            """
    static let bindingDataTypes = StatusChangeStatement.headTypes + [.text, .text, .text, .text]
    typealias Row = (Int, [Int64], Int?, String?, String?, Date?)

    var change: StatusChange
    var submission: SubmissionEnd

    func makeBindings() throws -> PostgresBindings {
        var bindings = StatusChangeStatement.headBindings(change, capacity: 14)
        bindings.append(submission.documentId)
        bindings.append(submission.outcome.rawValue)
        bindings.append(submission.error)
        bindings.append(submission.documentType?.rawValue)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }

    func write(on connection: PostgresConnection, logger: Logger) async throws -> WrittenChange? {
        for try await (moved, sequences, attempts, outcome, error, updated) in try await connection.execute(self, logger: logger) {
            guard moved == 1, let attempts, let outcome, let updated else { return nil }
            let record = SubmissionRecord(
                documentId: submission.documentId, attempts: attempts,
                outcome: try EnumColumn.decode(outcome), error: error, updatedAt: updated)
            return WrittenChange(sequences: sequences, submission: record)
        }
        return nil
    }
}
