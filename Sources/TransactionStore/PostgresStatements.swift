import Foundation
import PostgresNIO
import VerifyModel

// The statements every document runs, prepared once per connection: PostgreSQL then neither parses nor plans them
// again, which was most of its CPU per document. Parameter types are declared, not inferred from the first
// execution's values, so a NULL there cannot fix a parameter's type wrongly for the connection's lifetime.

/// A transaction row `t` with its document statuses, and whether a document is recorded.
typealias TransactionColumns = (String, String, String?, String, Date, Date, Date, String?, String?, String?, Int64, [String], Bool)

private let transactionColumns = """
    t.id, t.verification_code, t.env_id, t.submission_status, t.created_at, t.updated_at, t.expires_at,
    t.signals, t.behavior, t.risk_evaluation, t.version,
    ARRAY(SELECT d.document_type || ' ' || d.requirement || ' ' || d.status FROM document_statuses d WHERE d.transaction_id = t.id)
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
        (try row.decode(TransactionColumns.self), try row.makeRandomAccess()[13].decode(String.self))
    }
}

/// The transaction and its statuses; a concurrent insert of the same id wins and this one inserts nothing.
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
        SELECT count(*) FROM created
        """
    static let bindingDataTypes: [PostgresDataType] = [.text, .text, .text, .text, .timestamptz, .timestamptz, .text,
                                                       .textArray, .textArray, .textArray]
    typealias Row = Int

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

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
}

/// A whole `StatusChange` in one statement: the version check gates every other part, so a refused change writes
/// nothing. History rows are inserted, and numbered, in the model's order; "" stands for the transaction's own
/// moves, which have no document type.
struct WriteStatusChange: PostgresPreparedStatement {
    static let sql = """
        WITH moved AS (
            UPDATE transactions SET submission_status = $1, updated_at = $2, version = version + 1
            WHERE id = $3 AND version = $4 RETURNING id
        ), statuses AS (
            UPDATE document_statuses d SET status = s.status
            FROM moved, unnest($5::text[], $6::text[]) AS s(document_type, status)
            WHERE d.transaction_id = moved.id AND d.document_type = s.document_type
        ), history AS (
            INSERT INTO transitions (transaction_id, document_type, from_status, to_status, at, reason)
            SELECT moved.id, NULLIF(h.document_type, ''), h.from_status, h.to_status, $2, $10
            FROM moved, unnest($7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS h(document_type, from_status, to_status, position)
            ORDER BY h.position RETURNING sequence
        ), document AS (
            INSERT INTO documents (id, transaction_id, document_type, fields, source, content_hash, created_at)
            SELECT $11, moved.id, $12, $13, $14, $15, $16 FROM moved WHERE $11 IS NOT NULL
        ), submission AS (
            INSERT INTO submissions (document_id, attempts, outcome, error, updated_at)
            SELECT $17, 1, $18, $19, $2 FROM moved WHERE $17 IS NOT NULL
            ON CONFLICT (document_id) DO UPDATE SET attempts = submissions.attempts + 1,
                outcome = EXCLUDED.outcome, error = EXCLUDED.error, updated_at = EXCLUDED.updated_at
            RETURNING attempts, outcome, error, updated_at
        )
        SELECT (SELECT count(*) FROM moved), ARRAY(SELECT sequence FROM history ORDER BY sequence),
               s.attempts, s.outcome, s.error, s.updated_at
        FROM (SELECT 1) AS one LEFT JOIN submission s ON true
        """
    static let bindingDataTypes: [PostgresDataType] = [
        .text, .timestamptz, .text, .int8, .textArray, .textArray, .textArray, .textArray, .textArray, .text,
        .text, .text, .text, .text, .text, .timestamptz, .text, .text, .text,
    ]
    typealias Row = (Int, [Int64], Int?, String?, String?, Date?)

    var change: StatusChange
    /// The document's fields as the `fields` column holds them (JSON), when the change stores a document.
    var fields: String?

    func makeBindings() throws -> PostgresBindings {
        let documentTypes = change.transitions.map { transition -> String in
            if case .document(let type) = transition.subject { type.rawValue } else { "" }
        }
        let document = change.document, submission = change.submission
        var bindings = PostgresBindings(capacity: 19)
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
        bindings.append(document?.id)
        bindings.append(document?.type.rawValue)
        bindings.append(fields)
        bindings.append(document?.source)
        bindings.append(document?.contentHash)
        bindings.append(document?.createdAt)
        bindings.append(submission?.documentId)
        bindings.append(submission?.outcome.rawValue)
        bindings.append(submission?.error)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
