import Foundation
import VerifyModel

/// What a backend reads for a decision: the transaction, with the version its row had, and what it holds of a
/// document about to be collected.
struct TransactionRead: Sendable {
    var transaction: StoredTransaction
    var probe: ProbeResult?
    /// A write names the version it was decided on.
    var version: Int64 { transaction.version }
}

/// How inserting a transaction went.
enum InsertOutcome: Sendable {
    case inserted
    /// It existed already: as it stands.
    case existing(TransactionRow)
    /// Another writer inserted it while this insert ran, too late to be seen by it: read it.
    case concurrent
}

/// A status change decided by the model, for a backend to write in one database transaction: the changed
/// statuses, the history rows, and the document or submission row that goes with them.
struct StatusChange: Sendable {
    var transactionId: String
    /// The version the change was decided on: the write is refused when the row has moved on.
    var version: Int64
    /// The transaction's state after the change, as the model decided it.
    var next: TransactionState
    /// The document statuses that differ from the state the change was decided on.
    var statuses: [(DocumentType, DocumentStatus)]
    var submissionStatus: DocumentSubmissionStatus { next.submissionStatus }
    var time: Date
    var transitions: [StatusTransition]
    var reason: String
    /// A new document, stored with its move to COLLECTED, and its columns as stored.
    var document: DocumentRecord?
    var stored: StoredDocument?
    /// A submission's end, recorded with the document's move (one more attempt).
    var submission: SubmissionEnd?
}

/// A new document's columns as stored: its fields and content digest as their columns hold them (sealed in an encrypted
/// store), and its revision.
struct StoredDocument: Sendable {
    var fields: String
    var contentDigest: String?
    var revision: Int
}

struct SubmissionEnd: Sendable {
    var documentId: String
    var outcome: SubmissionOutcome
    var error: String?
    /// With a status change: the moved type. The write then checks the document is the transaction's, of this
    /// type, so a change decided on a caller's snapshot cannot move another document.
    var documentType: DocumentType? = nil
}

/// What the backend wrote: the history rows' sequence numbers, in the change's order, and the submission row.
struct WrittenChange: Sendable {
    var sequences: [Int64]
    var submission: SubmissionRecord?
}

/// Status changes, decided once for every backend: the model decides every change, the backend writes it. Writes
/// are optimistic: a change names the version it was decided on, and when another writer (a task, or another process
/// on the same store) got there first, the store reads again and decides afresh. No database
/// transaction spans a decision, so a change costs PostgreSQL one statement and SQLite one `write { }`. A change
/// to a transaction this process has just read or written is decided on that state, without reading it again.
extension TransactionStore {
    /// How often a decision is retried against writers that keep moving the transaction on.
    static var maximumAttempts: Int { 64 }

    /// Creates the transaction, or returns it unchanged when it exists with the same verification code; another
    /// code is refused (`verificationCodeMismatch`). A transaction this process has seen is checked against its
    /// memory, without a round trip.
    package func openTransaction(_ new: NewTransaction) async throws -> StoredTransaction {
        if let known = recent[new.id]?.transaction { return try Self.sameCode(known, new) }
        let state = TransactionState(policy: new.policy, expiresAt: new.expiresAt)
        let opened: StoredTransaction
        var sealed = new
        sealed.verificationCode = try sealing.seal(new.verificationCode, .verificationCode, row: new.id)
        sealed.signals = try sealing.seal(optional: new.signals, .signals, row: new.id)
        switch try await backend.insert(sealed, state: state) {
        case .inserted:
            opened = StoredTransaction(
                id: new.id, verificationCode: new.verificationCode, envId: new.envId, state: state,
                createdAt: new.createdAt, updatedAt: new.createdAt, signals: new.signals, version: 0)
        case .existing(let row):
            opened = try transactionRead(row).transaction
        case .concurrent:
            guard let created = try await readRow(transaction: new.id, probe: nil) else { throw StoreError.unknownTransaction(new.id) }
            opened = created.transaction
        }
        recent.remember(opened)
        return try Self.sameCode(opened, new)
    }

    /// A QR for a known transaction must carry the code it was opened with: anyone who saw a transaction's id
    /// could otherwise add documents to it.
    static func sameCode(_ transaction: StoredTransaction, _ new: NewTransaction) throws -> StoredTransaction {
        guard transaction.purgedAt == nil else { throw StoreError.purged(new.id) }
        guard transaction.verificationCode == new.verificationCode else { throw StoreError.verificationCodeMismatch(new.id) }
        return transaction
    }

    /// Stores a new document and moves its type to COLLECTED. A document its transaction holds already, under its id
    /// or its content fingerprint (the same input run again), changes nothing: the one recorded is returned. A new one is
    /// its type's next revision in the transaction. Always reads: what is recorded is part of the decision.
    package func collect(_ document: DocumentRecord, at time: Date) async throws -> CollectOutcome {
        let probe = DocumentProbe(id: document.id, fingerprint: document.contentHash, type: document.type)
        return try await retrying(document.transactionId, known: false) { _ throws -> CollectOutcome? in
            guard let read = try await readRow(transaction: document.transactionId, probe: probe) else {
                throw StoreError.unknownTransaction(document.transactionId)
            }
            if let recorded = read.probe?.recorded {
                return .alreadyRecorded(
                    read.transaction,
                    RecordedDocument(id: recorded.id, transactionId: document.transactionId, type: document.type, revision: recorded.revision))
            }
            let revision = (read.probe?.documentsOfType ?? 0) + 1
            var change = try Self.change(.collect, to: document.type, of: read, reason: "document \(document.id) collected", at: time)
            change.document = document
            change.stored = StoredDocument(
                fields: try FieldsColumn.encode(document, sealing),
                contentDigest: try sealing.seal(optional: document.contentDigest, .contentDigest, row: document.id), revision: revision)
            guard let written = try await backend.write(change) else { return nil }
            let (updated, records) = result(of: change, read.transaction, written)
            let recorded = RecordedDocument(id: document.id, transactionId: document.transactionId, type: document.type, revision: revision)
            return .collected(updated, records, recorded)
        }
    }

    /// Applies any other event (process, skip, reject) to a transaction's document type.
    package func apply(
        _ event: DocumentEvent, to type: DocumentType, of transactionId: String, reason: String,
        at time: Date
    ) async throws -> (StoredTransaction, [TransitionRecord]) {
        try await retrying(transactionId) { known throws -> (StoredTransaction, [TransitionRecord])? in
            guard let read = try await readTransaction(transactionId, unless: known) else { throw StoreError.unknownTransaction(transactionId) }
            let change = try Self.change(event, to: type, of: read, reason: reason, at: time)
            guard let written = try await backend.write(change) else { return nil }
            return result(of: change, read.transaction, written)
        }
    }

    /// The transaction's input ended (CONTRACT §1): every document still OPTIONAL becomes SKIPPED, in one write, but
    /// one under review (CONTRACT §12: it holds its transaction open until resolved). nil for an unknown transaction.
    package func endInput(of transactionId: String, reason: String, at time: Date) async throws
        -> (StoredTransaction, [TransitionRecord])?
    {
        let underReview = try await backend.openReviewTypes(of: transactionId)
        return try await retrying(transactionId) { known throws -> (StoredTransaction, [TransitionRecord])?? in
            guard let read = try await readTransaction(transactionId, unless: known) else { return .some(nil) }
            let missing = read.transaction.state.documents.filter { $0.value == .optional && !underReview.contains($0.key) }.keys
                .sorted { $0.rawValue < $1.rawValue }
            guard !missing.isEmpty else {
                // "Nothing to skip" writes nothing, so no version check would catch a stale guess: confirm it on a read.
                return known == nil ? .some((read.transaction, [])) : nil
            }
            let change = try Self.change(missing.map { (.skip, $0) }, of: read, reason: reason, at: time)
            guard let written = try await backend.write(change) else { return nil }
            return result(of: change, read.transaction, written)
        }
    }

    /// Records a submission's end and moves the document in the same database transaction: accepted -> PROCESSED;
    /// failed permanently -> back to its policy status. A crash cannot separate the two. Ends any claim. Without a
    /// known state, reads the document's owner: the document must be the transaction's, of `type`. The write checks
    /// that too, so a change decided on a known state cannot move another document.
    package func finishSubmission(
        documentId: String, type: DocumentType, of transactionId: String, accepted: Bool, error: String?,
        at time: Date
    ) async throws -> (StoredTransaction, SubmissionRecord, [TransitionRecord]) {
        try await retrying(transactionId) { known throws -> (StoredTransaction, SubmissionRecord, [TransitionRecord])? in
            let read: TransactionRead
            if let known {
                read = known
            } else {
                guard let (row, ownedType) = try await backend.read(ownerOf: documentId), row.id == transactionId, ownedType == type
                else {
                    throw StoreError.unknownDocument(documentId)
                }
                let owner = try transactionRead(row)
                recent.remember(owner.transaction)
                read = owner
            }
            var change = try Self.change(
                accepted ? .process : .reject, to: type, of: read,
                reason: accepted ? "submission of \(documentId) accepted" : "submission of \(documentId) failed",
                at: time)
            change.submission = SubmissionEnd(
                documentId: documentId, outcome: accepted ? .accepted : .failed, error: error,
                documentType: type)
            guard let written = try await backend.write(change), let submission = written.submission else { return nil }
            let (updated, records) = result(of: change, read.transaction, written)
            return (updated, submission, records)
        }
    }

    /// The transaction as this process last wrote or read it, without a round trip when it has one; else as stored.
    /// A change another process made since may be missing: for what is sent or shown, never for a decision.
    package func latestKnown(id transactionId: String) async throws -> StoredTransaction? {
        try await readTransaction(transactionId, unless: recent[transactionId])?.transaction
    }

    /// Records an attempt to submit a document and where it stands.
    package func recordSubmission(documentId: String, outcome: SubmissionOutcome, error: String?, at time: Date) async throws
        -> SubmissionRecord
    {
        try await backend.saveSubmission(SubmissionEnd(documentId: documentId, outcome: outcome, error: error), at: time)
    }

    static func change(
        _ event: DocumentEvent, to type: DocumentType, of read: TransactionRead, reason: String,
        at requested: Date
    ) throws -> StatusChange {
        try change([(event, type)], of: read, reason: reason, at: requested)
    }

    /// The one place a status change is decided: the model applies the events in order; the change holds the
    /// statuses that differ at the end and every transition on the way.
    static func change(
        _ events: [(DocumentEvent, DocumentType)], of read: TransactionRead, reason: String,
        at requested: Date
    ) throws -> StatusChange {
        let transaction = read.transaction
        // Callers take the time before their write waits its turn: keep each transaction's history in time order.
        let time = max(requested, transaction.updatedAt)
        var next = transaction.state, transitions: [StatusTransition] = []
        do {
            for (event, type) in events {
                let (state, moves) = try next.applying(event, to: type, at: time)
                next = state
                transitions += moves
            }
        } catch {
            throw StoreError.transition(error)
        }
        let statuses = next.documents
            .filter { $0.value != transaction.state.documents[$0.key] }
            .sorted { $0.key.rawValue < $1.key.rawValue }
            .map { ($0.key, $0.value) }
        return StatusChange(
            transactionId: transaction.id, version: read.version, next: next, statuses: statuses,
            time: time, transitions: transitions, reason: reason)
    }

    /// The transaction after a written change, remembered, and its new history rows.
    private func result(
        of change: StatusChange, _ transaction: StoredTransaction,
        _ written: WrittenChange
    ) -> (StoredTransaction, [TransitionRecord]) {
        let (updated, records) = Self.result(of: change, transaction, written)
        recent.remember(updated)
        return (updated, records)
    }

    static func result(
        of change: StatusChange, _ transaction: StoredTransaction,
        _ written: WrittenChange
    ) -> (StoredTransaction, [TransitionRecord]) {
        var updated = transaction
        updated.state = change.next
        updated.updatedAt = change.time
        updated.version = change.version + 1
        let records = zip(written.sequences, change.transitions).map { sequence, transition in
            let documentType: DocumentType? = if case .document(let type) = transition.subject { type } else { nil }
            return TransitionRecord(
                sequence: sequence, transactionId: transaction.id, documentType: documentType,
                from: transition.from, to: transition.to, at: change.time, reason: change.reason)
        }
        return (updated, records)
    }

    /// `known` when there is one, else the transaction as read now (and remembered).
    private func readTransaction(_ id: String, unless known: TransactionRead?) async throws -> TransactionRead? {
        if let known { return known }
        return try await readRow(transaction: id, probe: nil)
    }

    /// The transaction as stored, opened and remembered, and what it holds for `probe`.
    func readRow(transaction id: String, probe: DocumentProbe?) async throws -> TransactionRead? {
        guard let (row, found) = try await backend.read(transaction: id, probe: probe) else { return nil }
        var read = try transactionRead(row)
        read.probe = found
        recent.remember(read.transaction)
        return read
    }

    /// Runs a decide-and-write step in the transaction's turn until its write is not refused (the step returns nil
    /// when it was: another process wrote the transaction in between). The first attempt gets the state this
    /// process last saw (`known`), when it has one; a refusal decided on it, by the write or by the model, may only
    /// mean it went stale, so every later attempt gets nil and reads.
    private func retrying<T>(
        _ transactionId: String, known useKnown: Bool = true,
        _ step: (_ known: TransactionRead?) async throws -> T?
    ) async throws -> T {
        try await turns.withTurn(transactionId) { () throws -> T in
            var known = useKnown ? recent[transactionId] : nil
            for _ in 0..<Self.maximumAttempts {
                let guess = known
                known = nil
                do throws {
                    if let result = try await step(guess) { return result }
                } catch {
                    guard guess != nil, (error as? StoreError)?.code == .transition else { throw error }
                }
            }
            throw StoreError.database("the transaction kept changing under \(Self.maximumAttempts) attempts to write it")
        }
    }
}
