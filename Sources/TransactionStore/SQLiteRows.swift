import Foundation
import GRDB
import VerifyModel

/// The SQLite backend's rows: the statements every document runs, and rows read into the backend's values.
enum SQLiteRows {
    /// Every column that holds a sealed value: table, key, column, and which rows hold one.
    static let sealedValues: [(String, String, String, SealedColumn, String)] = [
        ("transactions", "id", "verificationCode", .verificationCode, "purgedAt IS NULL"),
        ("transactions", "id", "signals", .signals, "purgedAt IS NULL"),
        ("documents", "id", "fields", .documentFields, "fields <> ''"),
        ("documents", "id", "contentDigest", .contentDigest, "1"),
        ("protectStates", "transactionId", "state", .protectState, "1"),
        ("documentIdentity", "CAST(id AS TEXT)", "secret", .documentIdentity, "1"),
        ("reviews", "transactionId || '/' || documentType", "inputs", .reviewInputs, "transactionId IS NOT NULL"),
        ("reviews", "transactionId || '/' || documentType", "note", .reviewNote, "transactionId IS NOT NULL")
    ]

    /// The list's lines for transaction rows, with their documents' statuses read in one query.
    static func summaries(_ db: Database, _ rows: [Row]) throws -> [SummaryRow] {
        let ids: [String] = try rows.map { try $0.value("id") }
        var statuses: [String: [DocumentType: DocumentStatus]] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM documentStatuses WHERE transactionId IN (SELECT value FROM json_each(?))", arguments: [SQLiteRows.json(ids)])
        {
            statuses[try row.value("transactionId"), default: [:]][try row.value("documentType") as DocumentType] =
                try row.value("status") as DocumentStatus
        }
        return try rows.map { row in
            SummaryRow(
                id: try row.value("id"), status: try row.value("submissionStatus"), documents: statuses[try row.value("id")] ?? [:],
                updatedAt: try row.value("updatedAt"),
                expiresAt: try row.value("expiresAt"), purgedAt: try row.value("purgedAt"))
        }
    }

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
        static let insertDocument = """
            INSERT INTO documents (id, transactionId, documentType, fields, source, contentHash, contentDigest, revision, createdAt)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        static let probe = """
            SELECT id, revision FROM documents
            WHERE transactionId = ? AND (id = ? OR (documentType = ? AND contentHash = ? AND contentHash <> '')) ORDER BY id = ? DESC LIMIT 1
            """
        static let documentsOfType = "SELECT count(*) FROM documents WHERE transactionId = ? AND documentType = ?"
        static let saveSubmission = """
            INSERT INTO submissions (documentId, attempts, outcome, error, updatedAt, claimOwner, claimExpiresAt)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (documentId) DO UPDATE SET attempts = excluded.attempts, outcome = excluded.outcome, error = excluded.error,
                updatedAt = excluded.updatedAt, claimOwner = excluded.claimOwner, claimExpiresAt = excluded.claimExpiresAt
            """
    }

    static func transaction(_ db: Database, _ id: String) throws -> TransactionRow? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: HotPath.transaction), arguments: [id]) else { return nil }
        var transaction = TransactionRow(
            id: try row.value("id"), verificationCode: try row.value("verificationCode"), envId: try row.value("envId"),
            submissionStatus: try row.value("submissionStatus"),
            createdAt: try row.value("createdAt"), updatedAt: try row.value("updatedAt"), expiresAt: try row.value("expiresAt"),
            signals: try row.value("signals"),
            version: try row.value("version"), purgedAt: try row.value("purgedAt"))
        for status in try Row.fetchAll(db.cachedStatement(sql: HotPath.statuses), arguments: [id]) {
            let type: DocumentType = try status.value("documentType")
            transaction.policy[type] = try status.value("requirement")
            transaction.documents[type] = try status.value("status")
        }
        return transaction
    }

    static func document(_ db: Database, _ id: String) throws -> DocumentRow? {
        try Row.fetchOne(db, sql: "SELECT * FROM documents WHERE id = ?", arguments: [id]).map(document)
    }

    static func document(_ row: Row) throws -> DocumentRow {
        DocumentRow(
            id: try row.value("id"), transactionId: try row.value("transactionId"), type: try row.value("documentType"),
            fields: try row.value("fields"), source: try row.value("source"),
            contentHash: try row.value("contentHash"), createdAt: try row.value("createdAt"))
    }

    static func submissionRow(_ db: Database, _ documentId: String) throws -> SubmissionRow? {
        try Row.fetchOne(db.cachedStatement(sql: HotPath.submission), arguments: [documentId]).map(submission)
    }

    static func submission(_ row: Row) throws -> SubmissionRow {
        SubmissionRow(
            documentId: try row.value("documentId"), attempts: try row.value("attempts"), outcome: try row.value("outcome"),
            error: try row.value("error"),
            updatedAt: try row.value("updatedAt"), claimOwner: try row.value("claimOwner"), claimExpiresAt: try row.value("claimExpiresAt"))
    }

    @discardableResult
    static func save(_ db: Database, _ row: SubmissionRow) throws -> SubmissionRow {
        try db.cachedStatement(sql: HotPath.saveSubmission).execute(
            arguments: [row.documentId, row.attempts, row.outcome, row.error, row.updatedAt, row.claimOwner, row.claimExpiresAt])
        return row
    }

    /// What the transaction holds for a document about to be collected.
    static func probe(_ db: Database, transaction id: String, _ probe: DocumentProbe) throws -> ProbeResult {
        let recorded = try Row.fetchOne(
            db.cachedStatement(sql: HotPath.probe), arguments: [id, probe.id, probe.type, probe.fingerprint, probe.id]
        ).map { (id: try $0.value(0) as String, revision: try $0.value(1) as Int) }
        let count = try Int.fetchOne(db.cachedStatement(sql: HotPath.documentsOfType), arguments: [id, probe.type]) ?? 0
        return ProbeResult(recorded: recorded, documentsOfType: count)
    }

    static func documentExists(_ db: Database, _ id: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: HotPath.documentExists), arguments: [id]) ?? false
    }

    /// Ids as one JSON array, bound once however many (SQLite limits a statement's bound values).
    static func json(_ ids: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(ids)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// A time as GRDB stores a date (`yyyy-MM-dd HH:mm:ss.SSS`, UTC), in whole milliseconds by integer arithmetic:
    /// a Date in between could format a millisecond early and skip the rows of the cursor's own millisecond.
    static func storedText(_ time: BoundedTime) -> String {
        let milliseconds = min((time.microseconds + 500) / 1000, 253_402_300_799_999)  // never past 9999 (text order)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000)))
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%03d", parts.year!, parts.month!, parts.day!, parts.hour!,
            parts.minute!, parts.second!, Int(milliseconds % 1000))
    }
}

// Enums stored as their wire spellings: a value the schema's CHECK would refuse never reaches Swift as a crash.
extension DocumentType: DatabaseValueConvertible {}
extension DocumentStatus: DatabaseValueConvertible {}
extension DocumentRequirement: DatabaseValueConvertible {}
extension DocumentSubmissionStatus: DatabaseValueConvertible {}
extension SubmissionOutcome: DatabaseValueConvertible {}
extension ReviewKind: DatabaseValueConvertible {}
extension ReviewState: DatabaseValueConvertible {}
extension ReviewInputs: DatabaseValueConvertible {}

extension Row {
    /// The column's value, or an error when it does not convert (never a trap, whatever a file holds).
    func value<Value: DatabaseValueConvertible>(_ column: String) throws -> Value { try decode(forColumn: column) }
    func value<Value: DatabaseValueConvertible>(_ index: Int) throws -> Value { try decode(atIndex: index) }
}
