import Foundation
import GRDB
import VerifyModel

/// The reviews table's statements for SQLite, shared with the status writes.
enum SQLiteReviews {
    /// A document processed closes its type's open review: as the action an operator took for it, else `resolved`.
    static let closeProcessed = """
        UPDATE reviews SET state = COALESCE(pendingState, 'resolved'), resolvedAt = ?1, claimOwner = NULL, claimExpiresAt = NULL,
            pendingState = NULL
        WHERE transactionId = ?2 AND documentType = ?3 AND state = 'open'
        """
    /// A purge takes a transaction's reviews' inputs and notes.
    static let purge = """
        UPDATE reviews SET inputs = NULL, note = NULL, inputsBytes = 0,
            inputsState = CASE WHEN inputsState = 'kept' THEN 'purged' ELSE inputsState END
        WHERE transactionId = ?
        """
    static let columns = """
        r.id, r.transactionId, r.documentType, r.kind, r.code, r.message, r.field, r.source, r.attempt, r.failedAt, r.state,
        r.inputsState, r.documentId, t.expiresAt, r.resolvedAt, r.resolution, r.resolvedBy
        """
    static let select = "SELECT \(columns) FROM reviews r LEFT JOIN transactions t ON t.id = r.transactionId"

    static func entry(_ row: Row) throws -> ReviewEntry {
        ReviewEntry(
            id: try row.value(0), transactionId: try row.value(1), documentType: try row.value(2), kind: try row.value(3),
            code: try row.value(4), message: try row.value(5), field: try row.value(6), source: try row.value(7),
            attempt: try row.value(8), failedAt: try row.value(9), state: try row.value(10), inputs: try row.value(11),
            documentId: try row.value(12), expiresAt: try row.value(13), resolvedAt: try row.value(14), resolution: try row.value(15),
            resolvedBy: try row.value(16))
    }

    static func entry(_ db: Database, id: Int64) throws -> ReviewEntry {
        guard let row = try Row.fetchOne(db, sql: select + " WHERE r.id = ?", arguments: [id]) else { throw StoreError.database("no review \(id)") }
        return try entry(row)
    }

    static func history(_ db: Database, transactionId: String?, type: DocumentType?, at time: Date, reason: String) throws {
        guard let transactionId, let type else { return }
        try db.execute(
            sql: """
                INSERT INTO transitions (transactionId, documentType, fromStatus, toStatus, at, reason)
                SELECT transactionId, documentType, status, status, ?, ? FROM documentStatuses WHERE transactionId = ? AND documentType = ?
                """, arguments: [time, reason, transactionId, type])
    }
}

extension SQLiteBackend {
    func recordReview(_ write: ReviewWrite, maxStoreBytes: Int, at time: Date) async throws -> ReviewEntry {
        try await self.write { db in
            var write = write
            if write.inputs != nil, !write.keepInputs {
                let others =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT COALESCE(sum(inputsBytes), 0) FROM reviews WHERE inputs IS NOT NULL
                            AND NOT (transactionId IS ? AND documentType IS ?)
                            """, arguments: [write.transactionId, write.type]) ?? 0
                if others + write.inputsBytes > maxStoreBytes { (write.inputs, write.inputsBytes, write.inputsState) = (nil, 0, .storeFull) }
            }
            let arguments: StatementArguments = [
                write.transactionId, write.type, write.kind, write.code, write.message, write.field, write.source, time, write.inputs,
                write.inputsBytes, write.inputsState, write.documentId
            ]
            let id: Int64
            if write.transactionId != nil,
                let existing = try Int64.fetchOne(
                    db, sql: "SELECT id FROM reviews WHERE transactionId = ? AND documentType = ?", arguments: [write.transactionId, write.type])
            {
                // Kept inputs stay when asked (`?13`): the values bound for them are then ignored.
                try db.execute(
                    sql: """
                        UPDATE reviews SET transactionId = ?1, documentType = ?2, kind = ?3, code = ?4, message = ?5, field = ?6, source = ?7,
                            failedAt = ?8, inputs = CASE WHEN ?13 THEN inputs ELSE ?9 END,
                            inputsBytes = CASE WHEN ?13 THEN inputsBytes ELSE ?10 END,
                            inputsState = CASE WHEN ?13 THEN inputsState ELSE ?11 END, documentId = ?12, attempt = attempt + 1, state = 'open',
                            claimOwner = NULL, claimExpiresAt = NULL, pendingState = NULL, resolvedBy = NULL, resolvedAt = NULL,
                            resolution = NULL, note = NULL
                        WHERE id = ?14
                        """, arguments: arguments + [write.keepInputs, existing])
                id = existing
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO reviews (transactionId, documentType, kind, code, message, field, source, failedAt, inputs, inputsBytes,
                            inputsState, documentId, attempt, state)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 'open')
                        """, arguments: arguments)
                id = db.lastInsertedRowID
            }
            try SQLiteReviews.history(db, transactionId: write.transactionId, type: write.type, at: time, reason: write.history)
            return try SQLiteReviews.entry(db, id: id)
        }
    }

    func reviews(_ filter: ReviewFilter, limit: Int, offset: Int) async throws -> [ReviewEntry] {
        try await read { db in
            var conditions: [SQL] = []
            if let states = filter.states { conditions.append("r.state IN \(states.map(\.rawValue))") }
            if let code = filter.code { conditions.append("r.code = \(code)") }
            if let transactionId = filter.transactionId { conditions.append("r.transactionId = \(transactionId)") }
            let condition: SQL = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let request = SQLRequest<Row>(
                literal: """
                    \(sql: SQLiteReviews.select) \(condition)
                    ORDER BY t.expiresAt IS NULL, t.expiresAt, r.id LIMIT \(limit) OFFSET \(offset)
                    """)
            return try request.fetchAll(db).map(SQLiteReviews.entry)
        }
    }

    func review(id: Int64) async throws -> ReviewEntry? {
        try await read { db in try Row.fetchOne(db, sql: SQLiteReviews.select + " WHERE r.id = ?", arguments: [id]).map(SQLiteReviews.entry) }
    }

    func review(transactionId: String, type: DocumentType) async throws -> ReviewEntry? {
        try await read { db in
            try Row.fetchOne(db, sql: SQLiteReviews.select + " WHERE r.transactionId = ? AND r.documentType = ?", arguments: [transactionId, type])
                .map(SQLiteReviews.entry)
        }
    }

    func reviewInputs(id: Int64) async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT inputs FROM reviews WHERE id = ?", arguments: [id]) }
    }

    func claimReview(
        id: Int64, owner: String, action: ReviewAction, operator name: String, until expiry: Date, at time: Date, history: String?
    ) async throws -> ReviewClaim {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE reviews SET claimOwner = ?, claimExpiresAt = ?, pendingState = ?, resolvedBy = ?
                    WHERE id = ? AND state = 'open' AND (claimOwner IS NULL OR claimOwner = ? OR claimExpiresAt <= ?)
                    """, arguments: [owner, expiry, action.closes, name, id, owner, time])
            let taken = db.changesCount == 1
            let entry = try SQLiteReviews.entry(db, id: id)
            if taken {
                if let history {
                    try SQLiteReviews.history(db, transactionId: entry.transactionId, type: entry.documentType, at: time, reason: history)
                }
                return .taken(entry)
            }
            if entry.state != .open { return .closed(entry) }
            return .held(entry, until: try Date.fetchOne(db, sql: "SELECT claimExpiresAt FROM reviews WHERE id = ?", arguments: [id]) ?? time)
        }
    }

    func resolveReview(
        id: Int64, owner: String, state: ReviewState, resolution: String?, note: String?, at time: Date, history: String
    ) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE reviews SET state = ?, resolvedAt = ?, resolution = ?, note = ?, claimOwner = NULL, claimExpiresAt = NULL,
                        pendingState = NULL
                    WHERE id = ? AND state = 'open' AND claimOwner = ?
                    """, arguments: [state, time, resolution, note, id, owner])
            guard db.changesCount == 1 else { return false }
            let entry = try SQLiteReviews.entry(db, id: id)
            try SQLiteReviews.history(db, transactionId: entry.transactionId, type: entry.documentType, at: time, reason: history)
            return true
        }
    }

    func releaseReview(id: Int64, owner: String) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE reviews SET claimOwner = NULL, claimExpiresAt = NULL, pendingState = NULL WHERE id = ? AND claimOwner = ?",
                arguments: [id, owner])
        }
    }

    func recordReviewEvent(id: Int64, at time: Date, history: String) async throws {
        try await write { db in
            let entry = try SQLiteReviews.entry(db, id: id)
            try SQLiteReviews.history(db, transactionId: entry.transactionId, type: entry.documentType, at: time, reason: history)
        }
    }

    func openReviewTypes(of transactionId: String) async throws -> Set<DocumentType> {
        try await read { db in
            Set(
                try String.fetchAll(
                    db, sql: "SELECT documentType FROM reviews WHERE transactionId = ? AND state = 'open'", arguments: [transactionId]
                ).compactMap { DocumentType(rawValue: $0) })
        }
    }

    func reviewCounts() async throws -> ReviewCounts {
        try await read { db in
            var counts = ReviewCounts()
            for row in try Row.fetchAll(db, sql: "SELECT code, sum(attempt), sum(state = 'open') FROM reviews GROUP BY code ORDER BY code") {
                let code: String = try row.value(0), failed: Int = try row.value(1), open: Int = try row.value(2)
                counts.failed[code] = failed
                if open > 0 { counts.open[code] = open }
            }
            return counts
        }
    }

    func expireReviewInputs(failedBefore time: Date) async throws -> Int {
        try await write { db in
            try db.execute(sql: "PRAGMA secure_delete = ON")
            defer { try? db.execute(sql: "PRAGMA secure_delete = OFF") }
            try db.execute(
                sql: "UPDATE reviews SET inputs = NULL, inputsBytes = 0, inputsState = 'expired' WHERE inputs IS NOT NULL AND failedAt < ?",
                arguments: [time])
            return db.changesCount
        }
    }
}
