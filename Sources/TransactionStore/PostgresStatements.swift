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

struct ReadTransaction: PostgresPreparedStatement {
    static let sql = """
        SELECT \(transactionColumns), EXISTS(SELECT 1 FROM documents WHERE id = $2)
        FROM transactions t WHERE t.id = $1
        """
    static let bindingDataTypes: [PostgresDataType] = [.text, .text]
    typealias Row = TransactionColumns

    var id: String
    var document: String?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(id)
        bindings.append(document)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
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
    static func prepared(_ change: StatusChange, _ sealing: StoreSealing) throws(StoreError) -> any StatusChangeWriting {
        if let submission = change.submission { return WriteSubmissionEnd(change: change, submission: submission) }
        guard let document = change.document else { return WriteStatusChange(change: change) }
        return WriteCollected(change: change, document: document, fields: try FieldsColumn.encode(document, sealing))
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
                INSERT INTO documents (id, transaction_id, document_type, fields, source, content_hash, created_at)
                SELECT $11, moved.id, $12, $13, $14, $15, $16 FROM moved
            )
            SELECT
            """ + " " + StatusChangeStatement.written
    static let bindingDataTypes = StatusChangeStatement.headTypes + [.text, .text, .text, .text, .text, .timestamptz]
    typealias Row = (Int, [Int64])

    var change: StatusChange
    var document: DocumentRecord
    /// The document's fields as the `fields` column holds them (JSON, sealed in an encrypted store).
    var fields: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = StatusChangeStatement.headBindings(change, capacity: 16)
        bindings.append(document.id)
        bindings.append(document.type.rawValue)
        bindings.append(fields)
        bindings.append(document.source)
        bindings.append(document.contentHash)
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
