import Foundation
import VerifyModel

// The review loop (CONTRACT §12), decided here for every backend: which failures are attached to a transaction and
// keep their inputs, who may act on a review, and what a purge takes of it.
extension TransactionStore {
    /// How long an operator's action holds a review against another's (the longest a run of one document takes).
    package static var reviewClaimLease: TimeInterval { 600 }

    /// Records a failed document. It is attached to its transaction, with its inputs sealed, only when the transaction
    /// exists, is not purged, and the document carries the transaction's verification code (or names it by id, as a
    /// stream line may): nobody plants a document in a transaction by knowing its id. Anything else is recorded
    /// unattached, without inputs.
    @discardableResult
    package func recordFailure(_ report: FailureReport, limits: ReviewLimits, at time: Date) async throws -> ReviewEntry {
        var attachedTo: String?
        if let id = report.transactionId, report.kind != .unattached, report.type != nil,
            let transaction = try await opening({ () throws in try await backend.read(transaction: id, probe: nil) })
                .map({ row, _ throws in try transactionRead(row).transaction }),
            transaction.purgedAt == nil, report.verificationCode.map({ $0 == transaction.verificationCode }) ?? true
        {
            attachedTo = id
        }
        var write = ReviewWrite(
            transactionId: attachedTo, type: report.type, kind: attachedTo == nil ? .unattached : report.kind, code: report.code.rawValue,
            message: report.message, field: report.field, source: report.source, inputs: nil, inputsBytes: 0, inputsState: .none,
            documentId: attachedTo == nil ? nil : report.documentId,
            history: "failed with \(report.code.rawValue): review open")
        write.keepInputs = report.keepInputs && attachedTo != nil
        if let transactionId = attachedTo, let type = report.type, let inputs = report.inputs, !write.keepInputs {
            let bytes = inputs.utf8.count
            if bytes > limits.maxInputBytes {
                write.inputsState = .tooLarge
            } else {
                write.inputs = try sealing.seal(inputs, .reviewInputs, row: ReviewWrite.sealingRow(transactionId, type))
                write.inputsBytes = bytes
                write.inputsState = .kept
            }
        }
        return try await backend.recordReview(write, maxStoreBytes: limits.maxStoreBytes, at: time)
    }

    package func reviews(_ filter: ReviewFilter, limit: Int, offset: Int = 0) async throws -> ReviewPage {
        let rows = try await backend.reviews(filter, limit: limit + 1, offset: offset)
        return ReviewPage(entries: Array(rows.prefix(limit)), next: rows.count > limit ? Int64(offset + limit) : nil)
    }

    package func review(id: Int64) async throws -> ReviewEntry? {
        try await backend.review(id: id)
    }

    package func review(transactionId: String, type: DocumentType) async throws -> ReviewEntry? {
        try await backend.review(transactionId: transactionId, type: type)
    }

    /// The review's inputs, opened; nil when none are kept (see its `inputs`).
    package func reviewInputs(of entry: ReviewEntry) async throws -> String? {
        guard entry.inputs == .kept, let transactionId = entry.transactionId, let type = entry.documentType else { return nil }
        let sealing = sealing
        return try await opening { () throws -> String? in
            try await backend.reviewInputs(id: entry.id).map { stored throws in
                try sealing.open(stored, .reviewInputs, row: ReviewWrite.sealingRow(transactionId, type))
            }
        }
    }

    /// Takes the review for `action` by `operator`, for `reviewClaimLease`: the one who takes it carries the action
    /// out; another operator acting at once is told it is held, or closed. An action on an unattached review other than
    /// a rejection is refused.
    package func claimReview(
        _ entry: ReviewEntry, for action: ReviewAction, operator name: String, owner: String, at time: Date
    ) async throws -> ReviewClaim {
        try await backend.claimReview(
            id: entry.id, owner: owner, action: action, operator: name, until: time.addingTimeInterval(Self.reviewClaimLease), at: time,
            history: action == .reject ? nil : "review \(action.rawValue) by \(name)")
    }

    /// Closes the review the caller took as its action's state; a rejection's note is sealed. False when it is no
    /// longer the caller's to close (closed by a later document meanwhile).
    package func resolveReview(
        _ entry: ReviewEntry, action: ReviewAction, owner: String, operator name: String, resolution: String?, note: String?,
        at time: Date
    ) async throws -> Bool {
        var sealedNote: String?
        if let note, let transactionId = entry.transactionId, let type = entry.documentType {
            sealedNote = try sealing.seal(note, .reviewNote, row: ReviewWrite.sealingRow(transactionId, type))
        }
        let reason = ["review \(action.rawValue) by \(name)", resolution].compactMap { $0 }.joined(separator: ": ")
        return try await backend.resolveReview(
            id: entry.id, owner: owner, state: action.closes, resolution: resolution, note: entry.transactionId == nil ? nil : sealedNote,
            at: time, history: reason)
    }

    package func releaseReview(_ entry: ReviewEntry, owner: String) async throws {
        try await backend.releaseReview(id: entry.id, owner: owner)
    }

    /// Records that the review's inputs left the store (`review export`): by whom, when, where to.
    package func recordExport(_ entry: ReviewEntry, operator name: String, path: String, at time: Date) async throws {
        try await backend.recordReviewEvent(id: entry.id, at: time, history: "review export by \(name) to \(path)")
    }

    package func reviewCounts() async throws -> ReviewCounts {
        try await backend.reviewCounts()
    }
}
