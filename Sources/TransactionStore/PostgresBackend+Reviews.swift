import Foundation
import Logging
import PostgresNIO
import VerifyModel

/// The reviews table's reads for PostgreSQL.
enum PostgresReviews {
    static let select = """
        SELECT r.id, r.transaction_id, r.document_type, r.kind, r.code, r.message, r.field, r.source, r.attempt, r.failed_at, r.state,
            r.inputs_state, r.document_id, t.expires_at, r.resolved_at, r.resolution, r.resolved_by
        FROM reviews r LEFT JOIN transactions t ON t.id = r.transaction_id
        """

    static func entry(_ row: PostgresRow) throws -> ReviewEntry {
        let cells = row.makeRandomAccess()
        func cell<T: PostgresDecodable>(_ index: Int, _ type: T.Type = T.self) throws -> T { try cells[index].decode(T.self) }
        return ReviewEntry(
            id: try cell(0), transactionId: try cell(1), documentType: try (try cell(2, String?.self)).map { try EnumColumn.decode($0) },
            kind: try EnumColumn.decode(try cell(3)), code: try cell(4), message: try cell(5), field: try cell(6), source: try cell(7),
            attempt: Int(try cell(8, Int32.self)), failedAt: try cell(9), state: try EnumColumn.decode(try cell(10)),
            inputs: try EnumColumn.decode(try cell(11)), documentId: try cell(12), expiresAt: try cell(13), resolvedAt: try cell(14),
            resolution: try cell(15), resolvedBy: try cell(16))
    }

    /// The reviews `condition` selects (a WHERE clause and an order, with its bindings).
    static func entries(_ connection: PostgresConnection, _ condition: PostgresQuery, logger: Logger) async throws -> [ReviewEntry] {
        let query = PostgresQuery(unsafeSQL: select + " " + condition.sql, binds: condition.binds)
        var entries: [ReviewEntry] = []
        for try await row in try await connection.query(query, logger: logger) { entries.append(try entry(row)) }
        return entries
    }

    static func history(
        _ connection: PostgresConnection, transactionId: String?, type: DocumentType?, at time: Date, reason: String, logger: Logger
    ) async throws {
        guard let transactionId, let type else { return }
        try await connection.query(
            """
            INSERT INTO transitions (transaction_id, document_type, from_status, to_status, at, reason)
            SELECT transaction_id, document_type, status, status, \(time), \(reason) FROM document_statuses
            WHERE transaction_id = \(transactionId) AND document_type = \(type.rawValue)
            """, logger: logger)
    }

    static func entry(_ connection: PostgresConnection, id: Int64, logger: Logger) async throws -> ReviewEntry {
        guard let entry = try await entries(connection, "WHERE r.id = \(id)", logger: logger).first else {
            throw StoreError.database("no review \(id)")
        }
        return entry
    }
}

extension PostgresBackend {
    func recordReview(_ write: ReviewWrite, maxStoreBytes: Int, at time: Date) async throws -> ReviewEntry {
        try await database.transaction { connection in
            var write = write
            let type = write.type?.rawValue
            if write.inputs != nil, !write.keepInputs {
                // Taken in turns: two failures at once do not both fit in the room left.
                try await connection.query("SELECT pg_advisory_xact_lock(7470720001)", logger: self.logger)
                let others =
                    try await Self.first(
                        connection,
                        """
                        SELECT COALESCE(sum(inputs_bytes), 0)::int8 FROM reviews WHERE inputs IS NOT NULL
                        AND NOT (transaction_id IS NOT DISTINCT FROM \(write.transactionId) AND document_type IS NOT DISTINCT FROM \(type))
                        """, Int64.self, self.logger) ?? 0
                if Int(others) + write.inputsBytes > maxStoreBytes { (write.inputs, write.inputsBytes, write.inputsState) = (nil, 0, .storeFull) }
            }
            let id: Int64?
            if write.transactionId != nil {
                id = try await Self.first(
                    connection,
                    """
                    INSERT INTO reviews (transaction_id, document_type, kind, code, message, field, source, failed_at, inputs, inputs_bytes,
                        inputs_state, document_id, attempt, state)
                    VALUES (\(write.transactionId), \(type), \(write.kind.rawValue), \(write.code), \(write.message), \(write.field),
                        \(write.source), \(time), \(write.inputs), \(Int64(write.inputsBytes)), \(write.inputsState.rawValue), \(write.documentId),
                        1, 'open')
                    ON CONFLICT (transaction_id, document_type) WHERE transaction_id IS NOT NULL DO UPDATE SET kind = EXCLUDED.kind,
                        code = EXCLUDED.code, message = EXCLUDED.message, field = EXCLUDED.field, source = EXCLUDED.source,
                        failed_at = EXCLUDED.failed_at,
                        inputs = CASE WHEN \(write.keepInputs) THEN reviews.inputs ELSE EXCLUDED.inputs END,
                        inputs_bytes = CASE WHEN \(write.keepInputs) THEN reviews.inputs_bytes ELSE EXCLUDED.inputs_bytes END,
                        inputs_state = CASE WHEN \(write.keepInputs) THEN reviews.inputs_state ELSE EXCLUDED.inputs_state END,
                        document_id = EXCLUDED.document_id, attempt = reviews.attempt + 1,
                        state = 'open', claim_owner = NULL, claim_expires_at = NULL, pending_state = NULL, resolved_by = NULL,
                        resolved_at = NULL, resolution = NULL, note = NULL
                    RETURNING id
                    """, Int64.self, self.logger)
            } else {
                id = try await Self.first(
                    connection,
                    """
                    INSERT INTO reviews (transaction_id, document_type, kind, code, message, field, source, failed_at, inputs_state, attempt,
                        state)
                    VALUES (NULL, \(type), 'unattached', \(write.code), \(write.message), \(write.field), \(write.source), \(time), 'none', 1,
                        'open')
                    RETURNING id
                    """, Int64.self, self.logger)
            }
            guard let id else { throw StoreError.database("the review could not be written") }
            try await PostgresReviews.history(
                connection, transactionId: write.transactionId, type: write.type, at: time, reason: write.history, logger: self.logger)
            return try await PostgresReviews.entry(connection, id: id, logger: self.logger)
        }
    }

    func reviews(_ filter: ReviewFilter, limit: Int, offset: Int) async throws -> [ReviewEntry] {
        let states = filter.states.map { $0.map(\.rawValue).sorted() }
        return try await database.withConnection { connection in
            try await PostgresReviews.entries(
                connection,
                """
                WHERE (\(states)::text[] IS NULL OR r.state = ANY(\(states)::text[])) AND (\(filter.code)::text IS NULL OR r.code = \(filter.code))
                AND (\(filter.transactionId)::text IS NULL OR r.transaction_id = \(filter.transactionId))
                ORDER BY t.expires_at ASC NULLS LAST, r.id LIMIT \(Int64(limit)) OFFSET \(Int64(offset))
                """, logger: self.logger)
        }
    }

    func review(id: Int64) async throws -> ReviewEntry? {
        try await database.withConnection { connection in
            try await PostgresReviews.entries(connection, "WHERE r.id = \(id)", logger: self.logger).first
        }
    }

    func review(transactionId: String, type: DocumentType) async throws -> ReviewEntry? {
        try await database.withConnection { connection in
            try await PostgresReviews.entries(
                connection, "WHERE r.transaction_id = \(transactionId) AND r.document_type = \(type.rawValue)", logger: self.logger
            ).first
        }
    }

    func reviewInputs(id: Int64) async throws -> String? {
        try await database.withConnection { connection in
            try await Self.first(connection, "SELECT inputs FROM reviews WHERE id = \(id)", String?.self, self.logger) ?? nil
        }
    }

    func claimReview(
        id: Int64, owner: String, action: ReviewAction, operator name: String, until expiry: Date, at time: Date, history: String?
    ) async throws -> ReviewClaim {
        try await database.transaction { connection in
            let taken = try await connection.query(
                """
                UPDATE reviews SET claim_owner = \(owner), claim_expires_at = \(expiry), pending_state = \(action.closes.rawValue),
                    resolved_by = \(name)
                WHERE id = \(id) AND state = 'open' AND (claim_owner IS NULL OR claim_owner = \(owner) OR claim_expires_at <= \(time))
                RETURNING id
                """, logger: self.logger
            ).collect()
            let entry = try await PostgresReviews.entry(connection, id: id, logger: self.logger)
            if !taken.isEmpty {
                if let history {
                    try await PostgresReviews.history(
                        connection, transactionId: entry.transactionId, type: entry.documentType, at: time, reason: history, logger: self.logger)
                }
                return .taken(entry)
            }
            if entry.state != .open { return .closed(entry) }
            let until = try await Self.first(connection, "SELECT claim_expires_at FROM reviews WHERE id = \(id)", Date?.self, self.logger)
            return .held(entry, until: (until ?? nil) ?? time)
        }
    }

    func resolveReview(
        id: Int64, owner: String, state: ReviewState, resolution: String?, note: String?, at time: Date, history: String
    ) async throws -> Bool {
        try await database.transaction { connection in
            let resolved = try await connection.query(
                """
                UPDATE reviews SET state = \(state.rawValue), resolved_at = \(time), resolution = \(resolution), note = \(note),
                    claim_owner = NULL, claim_expires_at = NULL, pending_state = NULL
                WHERE id = \(id) AND state = 'open' AND claim_owner = \(owner)
                RETURNING id
                """, logger: self.logger
            ).collect()
            guard !resolved.isEmpty else { return false }
            let entry = try await PostgresReviews.entry(connection, id: id, logger: self.logger)
            try await PostgresReviews.history(
                connection, transactionId: entry.transactionId, type: entry.documentType, at: time, reason: history, logger: self.logger)
            return true
        }
    }

    func releaseReview(id: Int64, owner: String) async throws {
        try await database.withConnection { connection in
            try await connection.query(
                "UPDATE reviews SET claim_owner = NULL, claim_expires_at = NULL, pending_state = NULL WHERE id = \(id) AND claim_owner = \(owner)",
                logger: self.logger)
        }
    }

    func recordReviewEvent(id: Int64, at time: Date, history: String) async throws {
        try await database.transaction { connection in
            let entry = try await PostgresReviews.entry(connection, id: id, logger: self.logger)
            try await PostgresReviews.history(
                connection, transactionId: entry.transactionId, type: entry.documentType, at: time, reason: history, logger: self.logger)
        }
    }

    func openReviewTypes(of transactionId: String) async throws -> Set<DocumentType> {
        try await database.withConnection { connection in
            var types: Set<DocumentType> = []
            for try await type in try await connection.query(
                "SELECT document_type FROM reviews WHERE transaction_id = \(transactionId) AND state = 'open'", logger: self.logger
            ).decode(String.self) {
                if let type = DocumentType(rawValue: type) { types.insert(type) }
            }
            return types
        }
    }

    func reviewCounts() async throws -> ReviewCounts {
        try await database.withConnection { connection in
            var counts = ReviewCounts()
            for try await (code, failed, open) in try await connection.query(
                "SELECT code, sum(attempt)::int8, count(*) FILTER (WHERE state = 'open') FROM reviews GROUP BY code ORDER BY code",
                logger: self.logger
            ).decode((String, Int64, Int64).self) {
                counts.failed[code] = Int(failed)
                if open > 0 { counts.open[code] = Int(open) }
            }
            return counts
        }
    }

    func expireReviewInputs(failedBefore time: Date) async throws -> Int {
        try await database.withConnection { connection in
            try await connection.query(
                """
                UPDATE reviews SET inputs = NULL, inputs_bytes = 0, inputs_state = 'expired' WHERE inputs IS NOT NULL AND failed_at < \(time)
                RETURNING id
                """, logger: self.logger
            ).collect().count
        }
    }
}
