import Foundation
import Logging
import Synchronization
import VerifyModel

/// Where transactions, documents, their status history and submissions live, durable across crashes. Every status
/// change goes through `TransactionState.applying` and is written with its history rows in one database transaction.
///
/// One type decides everything — how values are sealed and opened, the key, what a purge takes, who sends a
/// submission — over a `StoreBackend` that keeps rows: SQLite, the embedded default, or PostgreSQL, shared by several
/// processes (`StoreLocation.withStore` opens either).
package final class TransactionStore: Sendable {
    let backend: any StoreBackend
    /// Tasks of this process take turns per transaction instead of refusing each other's writes.
    let turns = TransactionTurns()
    /// What this process last saw of each transaction it works on.
    let recent = RecentTransactions()
    /// How values are sealed, and the data key as the store keeps it wrapped (nil in clear). `encrypt` and
    /// `rotateKey` change them.
    let keys: Mutex<(sealing: StoreSealing, wrapped: String?)>
    /// The document secret; made anew with each key change.
    let identity: Mutex<DocumentIdentity>

    package var sealing: StoreSealing { keys.withLock { $0.sealing } }
    /// Whether the values holding identity data are sealed.
    package var isEncrypted: Bool { sealing.isSealed }
    /// The file or the database, for messages.
    package var location: String { backend.location }
    /// The secret the pipeline fingerprints documents with (`DocumentIdentity`).
    package func documentIdentity() throws -> DocumentIdentity { identity.withLock { $0 } }

    /// Opens the store in `backend`: its data key is unwrapped with `encryption`'s key, or made for a new store that
    /// requires encryption (unless another process recorded one first: then that one must open); its document secret
    /// is read, or made for a store without one; documents an earlier release named from their content get random ids.
    init(
        backend: any StoreBackend, encryption: StoreEncryption, logger: Logger = Logger(label: "verify-pipeline.store")
    ) async throws {
        self.backend = backend
        let location = backend.location
        let (wrapped, holds) = try await backend.readKey()
        var (sealing, newWrapped) = try StoreSealing.decide(wrapped: wrapped, holdsTransactions: holds, encryption, location: location)
        var recorded = wrapped
        if let newWrapped {
            recorded = try await backend.recordKey(newWrapped, at: Date())
            if recorded != newWrapped {
                // Another process made the store's key first: it must open with this one too.
                sealing = try StoreSealing.decide(wrapped: recorded, holdsTransactions: true, encryption, location: location).0
            }
        }
        keys = Mutex((sealing, recorded))
        backend.expectKey(recorded)
        identity = Mutex(try await Self.openIdentity(backend, sealing, logger: logger))
    }

    private static func openIdentity(_ backend: any StoreBackend, _ sealing: StoreSealing, logger: Logger) async throws
        -> DocumentIdentity
    {
        if let (stored, randomIds) = try await backend.readDocumentSecret(), randomIds {
            return try DocumentIdentity(stored: try sealing.open(stored, .documentIdentity, row: "1"))
        }
        let made = DocumentIdentity.generate()
        let (secret, renamed) = try await backend.recordDocumentSecret(
            try sealing.seal(made.stored, .documentIdentity, row: "1"), at: Date()
        ) { secret, documents throws in
            try Self.renames(documents, try DocumentIdentity(stored: try sealing.open(secret, .documentIdentity, row: "1")), sealing)
        }
        if renamed > 0 {
            logger.notice("documents named by an earlier version were given random ids", metadata: ["documents": "\(renamed)"])
            // The ids made from content leave the files with the pages that held them.
            try await backend.reclaim(resealed: true)
        }
        return try DocumentIdentity(stored: try sealing.open(secret, .documentIdentity, row: "1"))
    }

    /// The documents an earlier release named from their content, renamed with random ids: their fields (and digest,
    /// when known) sealed to the new id, their fingerprint under `identity`, and the sealed texts that name them (other
    /// parts' results) rewritten. A purged document keeps no fingerprint.
    private static func renames(_ documents: [LegacyDocument], _ identity: DocumentIdentity, _ sealing: StoreSealing) throws
        -> DocumentRenames
    {
        var renames: [DocumentRename] = []
        for document in documents {
            let to = DocumentIdentity.newDocumentId()
            var opened: String?
            if !document.fields.isEmpty { opened = try sealing.open(document.fields, .documentFields, row: document.id) }
            let fields = try opened.map { json throws in
                do {
                    return try JSONDecoder().decode(DocumentFields.self, from: Data(json.utf8))
                } catch {
                    throw StoreError.database("document \(document.id) has fields this version cannot read")
                }
            }
            let (fingerprint, digest) = identity.rename(document, fields: fields)
            renames.append(
                DocumentRename(
                    from: document.id, to: to, contentHash: fingerprint,
                    fields: try opened.map { json throws in try sealing.seal(json, .documentFields, row: to) } ?? "",
                    contentDigest: try sealing.seal(optional: digest, .contentDigest, row: to)))
        }
        let map = Dictionary(uniqueKeysWithValues: renames.map { ($0.from, $0.to) })
        return DocumentRenames(renames: renames) { stored, column, row throws in
            let text = try sealing.open(stored, column, row: row)
            let renamed = DocumentIdentity.renaming(text, map)
            return renamed == text ? stored : try sealing.seal(renamed, column, row: row)
        }
    }

    // MARK: - Rows to records

    /// A transaction row with its values opened. A purged transaction's code and payload are gone: there is nothing
    /// to open.
    func transactionRead(_ row: TransactionRow) throws -> TransactionRead {
        let sealing = sealing, purged = row.purgedAt != nil
        let transaction = StoredTransaction(
            id: row.id, verificationCode: purged ? "" : try sealing.open(row.verificationCode, .verificationCode, row: row.id),
            envId: row.envId, state: row.state, createdAt: row.createdAt, updatedAt: row.updatedAt,
            signals: purged ? nil : try sealing.open(optional: row.signals, .signals, row: row.id),
            version: row.version, purgedAt: row.purgedAt)
        return TransactionRead(transaction: transaction)
    }

    private func summary(_ row: SummaryRow) -> TransactionSummary {
        TransactionSummary(
            id: row.id, status: row.status, documents: row.documents, updatedAt: row.updatedAt, expiresAt: row.expiresAt,
            data: DataState(purgedAt: row.purgedAt, sealing))
    }

    /// `body`, where a value that does not open may have been sealed again by a key rotation this process did not
    /// see: that is said as such.
    func opening<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError where error.code == .tampered {
            let wrapped = keys.withLock { $0.wrapped }
            if let current = try? await backend.readKey().wrapped, current != wrapped {
                throw StoreError.keyChangedElsewhere(wasEncrypted: wrapped != nil)
            }
            throw error
        }
    }

    // MARK: - Reads

    package func transaction(id: String) async throws -> StoredTransaction? {
        try await opening { () throws in
            try await backend.read(transaction: id, probe: nil).map { row, _ throws in try transactionRead(row).transaction }
        }
    }

    package func document(id: String) async throws -> DocumentRecord? {
        try await opening { () throws -> DocumentRecord? in
            guard let row = try await backend.document(id: id) else { return nil }
            return DocumentRecord(
                id: row.id, transactionId: row.transactionId, type: row.type,
                fields: try FieldsColumn.decode(row.fields, sealing, document: row.id),
                source: row.source, contentHash: row.contentHash, createdAt: row.createdAt)
        }
    }

    /// Everything `verify-pipeline status ID` shows, read in one statement.
    package func report(id: String) async throws -> TransactionReport? {
        try await opening { () throws -> TransactionReport? in
            guard let rows = try await backend.report(id: id) else { return nil }
            let transaction = try transactionRead(rows.transaction).transaction
            var documents: [TransactionReport.Document] = []
            for (row, submission) in rows.documents {
                let keys = try FieldsColumn.decode(row.fields, sealing, document: row.id).keys
                documents.append(.init(id: row.id, type: row.type, source: row.source, keys: keys, submission: submission))
            }
            return TransactionReport(
                transaction: transaction, documents: documents, history: rows.history,
                data: DataState(purgedAt: transaction.purgedAt, sealing), reviews: rows.reviews)
        }
    }

    package func submission(documentId: String) async throws -> SubmissionRecord? {
        try await backend.submission(documentId: documentId)
    }

    package func transactions(status: DocumentSubmissionStatus?) async throws -> [TransactionSummary] {
        try await backend.summaries(status: status).map(summary)
    }

    /// A page of the transaction list, the most recently changed first (then by id, descending): at most `limit`,
    /// after `cursor` when given, in `status` when given, with `search` in their id when given. Reads one page's
    /// rows, however many transactions there are.
    package func transactions(
        status: DocumentSubmissionStatus?, search: String?, limit: Int, after cursor: TransactionCursor?
    ) async throws -> TransactionPage {
        let (rows, next) = try await backend.page(status: status, search: search, limit: limit, after: cursor)
        return TransactionPage(transactions: rows.map(summary), next: next)
    }

    /// The list `status` prints, read a page at a time: the most recently changed first, in `status` when given, with
    /// `search` in their id when given (the dashboard's search), changed at or after `since` when given, at most
    /// `limit` (nil: every one). `next` is set when more match.
    package func transactions(
        status: DocumentSubmissionStatus?, search: String?, changedSince since: Date?, limit: Int?
    ) async throws -> TransactionPage {
        let wanted = limit ?? .max
        var listed: [TransactionSummary] = []
        var cursor: TransactionCursor?
        while true {
            let remaining = wanted - listed.count
            // One row past the limit tells whether more match.
            let page = try await transactions(
                status: status, search: search, limit: remaining >= Self.listPageSize ? Self.listPageSize : remaining + 1, after: cursor)
            // The newest first: the first row older than `since` ends the list.
            let recent = page.transactions.prefix { summary in since.map { summary.updatedAt >= $0 } ?? true }
            listed += recent
            if listed.count > wanted {
                let shown = Array(listed.prefix(wanted))
                return TransactionPage(transactions: shown, next: shown.last.map { TransactionCursor(updatedAt: $0.updatedAt, id: $0.id) })
            }
            guard recent.count == page.transactions.count, let next = page.next else { return TransactionPage(transactions: listed, next: nil) }
            cursor = next
        }
    }

    /// How many rows the list reads at a time.
    static let listPageSize = 500

    /// The counts the operator's view shows: transactions by status, and documents collected since `since`.
    package func overview(collectedSince since: Date) async throws -> StoreOverview {
        try await backend.overview(collectedSince: since)
    }

    /// Documents collected in each of the last `minutes` whole minutes up to `now`'s, oldest first (the dashboard's
    /// throughput chart).
    package func collectedPerMinute(minutes: Int, until now: Date) async throws -> [Int] {
        let minute = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 60).rounded(.down) * 60)
        let first = minute.addingTimeInterval(-Double(minutes - 1) * 60)
        let counts = try await backend.collectedByMinute(since: first)
        let style = Date.VerbatimFormatStyle(
            format:
                "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits)",
            timeZone: .gmt, calendar: Calendar(identifier: .gregorian))
        return (0..<minutes).map { counts[first.addingTimeInterval(Double($0) * 60).formatted(style)] ?? 0 }
    }

    /// How many of `ids` are at `status`, in one read however many there are (a run's closing summary).
    package func count(of ids: [String], status: DocumentSubmissionStatus) async throws -> Int {
        try await backend.count(of: ids, status: status)
    }

    // MARK: - Submissions, signals and Protect's state

    /// Claims the recorded document's submission for `owner` until `expiry` (`SubmissionRules.claim`), in one database
    /// transaction. Claiming again renews one's own claim.
    package func claimSubmission(documentId: String, owner: String, until expiry: Date, at time: Date) async throws
        -> SubmissionClaim
    {
        try await backend.claimSubmission(documentId: documentId, owner: owner, until: expiry, at: time)
    }

    /// Gives up `owner`'s claim without an outcome (its run was cancelled mid-send): others may claim it at once. A
    /// submission never tried before leaves no row, as if it had not been claimed.
    package func releaseSubmission(documentId: String, owner: String) async throws {
        try await backend.releaseSubmission(documentId: documentId, owner: owner)
    }

    /// Stores the transaction's signals payload unless it has one: the first one set is kept, and returned.
    package func setSignals(_ signals: String, of transactionId: String) async throws -> String {
        let sealing = sealing
        guard let stored = try await backend.setSignals(try sealing.seal(signals, .signals, row: transactionId), of: transactionId) else {
            throw StoreError.unknownTransaction(transactionId)
        }
        // A purged transaction holds none: it takes no more.
        guard let stored else { throw StoreError.purged(transactionId) }
        return try sealing.open(stored, .signals, row: transactionId)
    }

    /// Protect's state of the transaction (its behavioural data and risk evaluation), kept as JSON in a table of its
    /// own: the store keeps it, the Protect module defines `State`. nil until one is written.
    package func protectState<State: Codable & Sendable>(of transactionId: String, as type: State.Type) async throws -> State? {
        let sealing = sealing
        return try await opening { () throws -> State? in
            try await backend.protectState(of: transactionId).map { text throws in
                try ProtectStateColumn.decode(text, as: type, sealing, row: transactionId)
            }
        }
    }

    /// Replaces Protect's state with `transform` of it, read and written in one database transaction; returns what
    /// the transaction now holds. A purged transaction's state is gone for good: nothing after the purge brings it back.
    package func updateProtectState<State: Codable & Sendable>(
        of transactionId: String, as type: State.Type, _ transform: @escaping @Sendable (State?) -> State?
    ) async throws -> State? {
        let sealing = sealing
        let updated = try await backend.updateProtectState(of: transactionId) { purged, stored throws -> (ProtectStateWrite, State?) in
            if purged { return (.keep, nil) }
            let current = try stored.map { text throws in try ProtectStateColumn.decode(text, as: type, sealing, row: transactionId) }
            guard let updated = transform(current) else { return (.delete, nil) }
            return (.save(try ProtectStateColumn.encode(updated, sealing, row: transactionId)), updated)
        }
        guard let updated else { throw StoreError.unknownTransaction(transactionId) }
        return updated
    }
}
