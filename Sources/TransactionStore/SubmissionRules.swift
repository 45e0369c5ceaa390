import Foundation

/// A submission's row as the rules read and write it.
struct SubmissionRow: Sendable, Equatable {
    var documentId: String
    var attempts: Int
    var outcome: SubmissionOutcome
    var error: String?
    var updatedAt: Date
    var claimOwner: String?
    var claimExpiresAt: Date?

    var record: SubmissionRecord {
        SubmissionRecord(documentId: documentId, attempts: attempts, outcome: outcome, error: error, updatedAt: updatedAt)
    }
}

/// Who sends a document, and how an attempt is counted (CONTRACT §8), stated once. The SQLite backend applies them
/// to the row it read; PostgreSQL states them as one upsert each (`PostgresBackend`), and a test runs every case on
/// both.
enum SubmissionRules {
    /// A claim by `owner` until `expiry`: refused when the submission was accepted, or while another owner's claim
    /// has not expired at `time`; taken or renewed otherwise. Returns the answer and the row to write (nil: none).
    static func claim(_ current: SubmissionRow?, documentId: String, owner: String, until expiry: Date, at time: Date)
        -> (SubmissionClaim, SubmissionRow?)
    {
        var row = current ?? SubmissionRow(documentId: documentId, attempts: 0, outcome: .pending, updatedAt: time)
        if row.outcome == .accepted { return (.accepted, nil) }
        if let holder = row.claimOwner, holder != owner, let until = row.claimExpiresAt, until > time {
            return (.held(until: until, attempts: row.attempts), nil)
        }
        (row.claimOwner, row.claimExpiresAt, row.updatedAt) = (owner, expiry, time)
        return (.claimed(attempts: row.attempts), row)
    }

    /// An attempt's end: one more attempt unless it is PENDING; an attempt that ended ends the claim too.
    static func ended(_ current: SubmissionRow?, _ end: SubmissionEnd, at time: Date) -> SubmissionRow {
        var row = current ?? SubmissionRow(documentId: end.documentId, attempts: 0, outcome: .pending, updatedAt: time)
        if end.outcome != .pending {
            row.attempts += 1
            (row.claimOwner, row.claimExpiresAt) = (nil, nil)
        }
        row.outcome = end.outcome
        row.error = end.error
        row.updatedAt = time
        return row
    }
}
