import Foundation
import Logging
import PostgresNIO
import VerifyModel

// The writes, each one statement where it can be: PostgreSQL states the submission rules as upserts
// (`SubmissionRules` states them in Swift; a test runs every case on both backends).
extension PostgresBackend {
    func insert(_ new: NewTransaction, state: TransactionState) async throws -> InsertOutcome {
        try await database.withConnection { connection in
            for try await (inserted, existing) in try await connection.execute(InsertTransaction(new: new, state: state), logger: self.logger) {
                if inserted == 1 { return .inserted }
                return try existing.map { .existing(try transactionRow($0)) } ?? .concurrent
            }
            return .concurrent
        }
    }

    func write(_ change: StatusChange) async throws -> WrittenChange? {
        let statement = StatusChangeStatement.prepared(change)
        return try await database.withConnection { connection in try await statement.write(on: connection, logger: self.logger) }
    }

    func saveSubmission(_ end: SubmissionEnd, at time: Date) async throws -> SubmissionRecord {
        let increment = end.outcome == .pending ? 0 : 1
        return try await database.withConnection { connection in
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
                    documentId: end.documentId, attempts: attempts, outcome: try EnumColumn.decode(stored), error: message, updatedAt: updated)
            }
            throw StoreError.unknownDocument(end.documentId)
        }
    }

    /// One statement: the claim is taken, or renewed, unless the submission was accepted or another owner's claim has
    /// not expired; when it is not taken, one read says why. The upsert locks the row it did not update, so that read
    /// sees what the upsert saw.
    func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws -> SubmissionClaim {
        try await database.transaction { connection in
            let taken = try await connection.query(
                """
                INSERT INTO submissions (document_id, attempts, outcome, updated_at, claim_owner, claim_expires_at)
                SELECT id, 0, 'PENDING', \(time), \(owner), \(expiry) FROM documents WHERE id = \(documentId)
                ON CONFLICT (document_id) DO UPDATE SET claim_owner = EXCLUDED.claim_owner,
                    claim_expires_at = EXCLUDED.claim_expires_at, updated_at = EXCLUDED.updated_at
                WHERE submissions.outcome <> 'ACCEPTED' AND (submissions.claim_owner IS NULL
                    OR submissions.claim_owner = EXCLUDED.claim_owner OR submissions.claim_expires_at <= EXCLUDED.updated_at)
                RETURNING submissions.attempts
                """, logger: self.logger
            ).collect()
            if let row = taken.first { return SubmissionClaim.claimed(attempts: try row.decode(Int.self)) }
            for try await (outcome, until, attempts) in try await connection.query(
                "SELECT outcome, claim_expires_at, attempts FROM submissions WHERE document_id = \(documentId)", logger: self.logger
            ).decode((String, Date?, Int).self) {
                if outcome == SubmissionOutcome.accepted.rawValue { return .accepted }
                if let until { return .held(until: until, attempts: attempts) }
            }
            throw StoreError.unknownDocument(documentId)
        }
    }

    func releaseSubmission(documentId: String, owner: String) async throws {
        try await database.transaction { connection in
            try await connection.query(
                """
                DELETE FROM submissions WHERE document_id = \(documentId) AND claim_owner = \(owner) AND attempts = 0 AND outcome = 'PENDING'
                """, logger: self.logger)
            try await connection.query(
                """
                UPDATE submissions SET claim_owner = NULL, claim_expires_at = NULL WHERE document_id = \(documentId) AND claim_owner = \(owner)
                """, logger: self.logger)
        }
    }

    func setSignals(_ sealed: String, of transactionId: String) async throws -> String?? {
        try await database.transaction { connection in
            try await connection.query(
                "UPDATE transactions SET signals = \(sealed) WHERE id = \(transactionId) AND signals IS NULL AND purged_at IS NULL",
                logger: self.logger)
            // A statement of its own: its snapshot holds what another process set first.
            let rows = try await connection.query("SELECT signals FROM transactions WHERE id = \(transactionId)", logger: self.logger).collect()
            guard let row = rows.first else { return nil }
            return .some(try row.decode(String?.self))
        }
    }

    func updateProtectState<T: Sendable>(
        of transactionId: String, _ body: @escaping @Sendable (Bool, String?) throws -> (ProtectStateWrite, T)
    ) async throws -> T? {
        try await database.transaction { connection in
            // The transaction's row lock makes updates of its Protect state take turns, the first one included. The
            // state is read by a statement of its own, after the lock: its snapshot then holds the previous update.
            guard
                let purged = try await Self.first(
                    connection, "SELECT purged_at IS NOT NULL FROM transactions WHERE id = \(transactionId) FOR UPDATE", Bool.self, self.logger)
            else { return nil }
            let stored = try await Self.first(
                connection, "SELECT state::text FROM protect_states WHERE transaction_id = \(transactionId)", String.self, self.logger)
            let (change, result) = try body(purged, stored)
            switch change {
            case .keep: break
            case .delete:
                try await connection.query("DELETE FROM protect_states WHERE transaction_id = \(transactionId)", logger: self.logger)
            case .save(let text):
                try await connection.query(
                    """
                    INSERT INTO protect_states (transaction_id, state) VALUES (\(transactionId), \(text)::jsonb)
                    ON CONFLICT (transaction_id) DO UPDATE SET state = EXCLUDED.state
                    """, logger: self.logger)
            }
            return result
        }
    }

    // MARK: - Retention

    func purgeCandidates(keepNewest: Int?, createdBefore: Date?) async throws -> [PurgeCandidate] {
        try await database.withConnection { connection in
            var candidates: [PurgeCandidate] = []
            // NULL parameters switch their condition off.
            for try await (id, version, status, expires, collecting, documents) in try await connection.query(
                """
                SELECT id, version, submission_status, expires_at,
                    EXISTS (SELECT 1 FROM document_statuses d WHERE d.transaction_id = t.id AND d.status = 'COLLECTED'),
                    (SELECT count(*) FROM documents WHERE transaction_id = t.id)
                FROM transactions t WHERE purged_at IS NULL
                AND ((\(keepNewest)::int8 IS NOT NULL AND id NOT IN (SELECT id FROM transactions ORDER BY created_at DESC, id DESC LIMIT \(keepNewest)))
                    OR (\(createdBefore)::timestamptz IS NOT NULL AND created_at < \(createdBefore)))
                ORDER BY created_at, id
                """, logger: self.logger
            ).decode((String, Int64, String, Date, Bool, Int).self) {
                candidates.append(
                    PurgeCandidate(
                        id: id, version: version, submissionStatus: try EnumColumn.decode(status), expiresAt: expires, collecting: collecting,
                        documents: documents))
            }
            return candidates
        }
    }

    func purge(_ transactions: [(id: String, version: Int64)], at time: Date, reason: String) async throws -> [String] {
        let ids = transactions.map(\.id), versions = transactions.map(\.version), neighbours = neighbours
        return try await database.transaction(answerWithin: nil) { connection in
            var purged: [String] = []
            for try await id in try await connection.query(
                """
                UPDATE transactions t SET verification_code = '', signals = NULL, purged_at = \(time), version = t.version + 1
                FROM unnest(\(ids)::text[], \(versions)::int8[]) AS p(id, version)
                WHERE t.id = p.id AND t.version = p.version AND t.purged_at IS NULL RETURNING t.id
                """, logger: self.logger
            ).decode(String.self) {
                purged.append(id)
            }
            guard !purged.isEmpty else { return [] }
            // Nothing that verifies a guess at what was removed stays: neither the fingerprint nor the digest.
            try await connection.query(
                "UPDATE documents SET fields = '', content_hash = '', content_digest = NULL WHERE transaction_id = ANY(\(purged))",
                logger: self.logger)
            try await connection.query("DELETE FROM protect_states WHERE transaction_id = ANY(\(purged))", logger: self.logger)
            try await connection.query(
                """
                UPDATE reviews SET inputs = NULL, note = NULL, inputs_bytes = 0,
                    inputs_state = CASE WHEN inputs_state = 'kept' THEN 'purged' ELSE inputs_state END
                WHERE transaction_id = ANY(\(purged))
                """, logger: self.logger)
            try await connection.query(
                """
                INSERT INTO transitions (transaction_id, document_type, from_status, to_status, at, reason)
                SELECT id, NULL, submission_status, submission_status, \(time), \(reason) FROM transactions
                WHERE id = ANY(\(purged)) ORDER BY created_at, id
                """, logger: self.logger)
            for neighbour in neighbours { try await neighbour.purge(transactions: purged, on: connection, logger: self.logger) }
            return purged
        }
    }
}
