import Foundation
import VerifyModel

// Identity data at rest: retention's purge, encryption, key rotation. Decided here for every backend.
extension TransactionStore {
    /// Removes the identity data (document fields, verification code, Protect payload and state) of the transactions
    /// `retention` selects among those that are finished: COMPLETED, or past their expiry with no document waiting to
    /// be submitted. Their statuses and history stay, and the purge is added to the history. A dry run only says
    /// which. The files are rewritten afterwards (SQLite) so the purged bytes leave them. A transaction that changes
    /// between the selection and the purge is left for the next one.
    ///
    /// Failed documents' inputs kept for review longer than `reviewInputsMaxAge` are removed whatever the retention
    /// mode, `none` included (counted in `reviewInputs`).
    package func purge(
        _ retention: Retention, reviewInputsMaxAge: TimeInterval? = nil, at time: Date, dryRun: Bool
    ) async throws -> PurgeOutcome {
        var expired = 0
        if let age = reviewInputsMaxAge, !dryRun {
            expired = try await backend.expireReviewInputs(failedBefore: time.addingTimeInterval(-age))
        }
        guard retention.mode != .none else {
            if expired > 0 { try await backend.reclaim(resealed: false) }
            return PurgeOutcome(transactions: [], documents: 0, reviewInputs: expired)
        }
        let candidates = try await backend.purgeCandidates(
            keepNewest: retention.byCount ? retention.keep : nil,
            createdBefore: retention.byAge ? time.addingTimeInterval(-retention.maxAge) : nil)
        let finished = candidates.filter { Self.isFinished($0, at: time) }
        guard !dryRun, !finished.isEmpty else {
            if expired > 0 { try await backend.reclaim(resealed: false) }
            return PurgeOutcome(transactions: finished.map(\.id), documents: finished.reduce(0) { $0 + $1.documents }, reviewInputs: expired)
        }
        let purged = Set(try await backend.purge(finished.map { ($0.id, $0.version) }, at: time, reason: retention.reason))
        let taken = finished.filter { purged.contains($0.id) }
        recent.forget(taken.map(\.id))
        if !taken.isEmpty || expired > 0 { try await backend.reclaim(resealed: false) }
        return PurgeOutcome(transactions: taken.map(\.id), documents: taken.reduce(0) { $0 + $1.documents }, reviewInputs: expired)
    }

    /// Nothing more will happen to it: COMPLETED, or expired with no document waiting for its submission.
    static func isFinished(_ candidate: PurgeCandidate, at time: Date) -> Bool {
        candidate.submissionStatus == .completed || (candidate.expiresAt < time && !candidate.collecting)
    }

    /// Seals every value of a store in clear under a new data key wrapped by `key`, in one database transaction;
    /// returns how many values it sealed. A store encrypted already is refused.
    package func encrypt(with key: KeyEncryptionKey, at time: Date) async throws -> Int {
        let dataKey = DataKey.generate()
        return try await changeKey(from: (.clear, nil), to: (.sealed(dataKey), try key.wrap(dataKey)), at: time)
    }

    /// Replaces the data key with a new one wrapped by `key`: every sealed value is sealed again under it in one
    /// database transaction, then the tables are rewritten so the old values and wrapping leave their files. Returns
    /// how many values. The key the store was opened with opens nothing of it afterwards. Other processes must be
    /// stopped first (PostgreSQL refuses while any is connected; on SQLite their next write is refused).
    package func rotateKey(to key: KeyEncryptionKey, at time: Date) async throws -> Int {
        let current = keys.withLock { $0 }
        guard current.sealing.isSealed, current.wrapped != nil else {
            throw StoreError.cannotOpen("\(location) is not encrypted: encrypt it with `verify-pipeline store encrypt`")
        }
        let dataKey = DataKey.generate()
        return try await changeKey(from: current, to: (.sealed(dataKey), try key.wrap(dataKey)), at: time)
    }

    /// Every sealed value opened with the old sealing and sealed with the new one, under a new document secret whose
    /// fingerprints are made from the documents' sealed digests; then the files rewritten. Whoever holds the retired key
    /// and a copy taken before has the retired secret: it matches no fingerprint of what is written after.
    private func changeKey(
        from old: (sealing: StoreSealing, wrapped: String?), to new: (sealing: StoreSealing, wrapped: String),
        at time: Date
    ) async throws -> Int {
        let secret = DocumentIdentity.generate()
        let count = try await backend.changeKey(from: old.wrapped, to: new.wrapped, at: time) { stored, column, row throws in
            switch column {
            case .documentIdentity:
                return try new.sealing.seal(secret.stored, column, row: row)
            case .protectState:
                // Protect's state stays JSON in its column: sealed, a JSON string holding the sealed value.
                let json = try ProtectStateColumn.open(json: stored, old.sealing, row: row)
                return try ProtectStateColumn.seal(json: json, new.sealing, row: row)
            default:
                return try new.sealing.seal(try old.sealing.open(stored, column, row: row), column, row: row)
            }
        } refingerprint: { storedDigest, documentId throws in
            secret.fingerprint(contentDigest: try old.sealing.open(storedDigest, .contentDigest, row: documentId))
        }
        keys.withLock { $0 = (new.sealing, new.wrapped) }
        identity.withLock { $0 = secret }
        backend.expectKey(new.wrapped)
        try await backend.reclaim(resealed: true)
        return count
    }
}
