import DocumentOutcomes
import Foundation
import Pipeline
import TransactionStore
import VerifyModel
import WorkQueues

/// What became of one review an operator acted on.
package struct ReviewResult: Sendable {
    package var entry: ReviewEntry
    /// Done: the document was processed (accept, replay) or the review closed (reject).
    package var done: Bool
    /// Why not, when it was not: closed already, held by another operator, no inputs to read, or the document's new
    /// failure (its review is open again with it).
    package var reason: String?
}

/// The operator's actions on the review queue (CONTRACT §12), over the application's store, submitter and Protect.
/// Each review is taken first (`TransactionStore.claimReview`), so that two operators acting at once never both
/// carry an action out.
extension PipelineApplication {
    /// Sends documents through the line again from their reviews: `fields` given, the operator's fields (accept);
    /// else each read again from its kept inputs (replay). Returns each review's result, in order.
    package func resend(_ entries: [ReviewEntry], fields: DocumentFields?, operator name: String) async throws -> [ReviewResult] {
        let action: ReviewAction = fields == nil ? .replay : .accept
        let owner = "review-\(UUID().uuidString.lowercased())"
        // Taken, and their batch made, in one opening of the store; what cannot be sent is answered at once.
        let (batch, refused) = try await withStore { store in
            var batch = ReviewBatch(), refused: [ReviewResult] = []
            for entry in entries {
                guard entry.kind != .unattached else {
                    refused.append(
                        ReviewResult(entry: entry, done: false, reason: "it belongs to no transaction it could prove: it can only be rejected"))
                    continue
                }
                if fields == nil, entry.inputs != .kept {
                    refused.append(
                        ReviewResult(entry: entry, done: false, reason: "its inputs were not kept (\(entry.inputs.rawValue)): nothing to read again"))
                    continue
                }
                switch try await store.claimReview(entry, for: action, operator: name, owner: owner, at: Date()) {
                case .closed(let closed):
                    refused.append(ReviewResult(entry: closed, done: false, reason: "its review is \(closed.state.rawValue) already"))
                case .held(let held, let until):
                    refused.append(
                        ReviewResult(entry: held, done: false, reason: "another operator is acting on it until \(Timestamp.string(until))"))
                case .taken(let taken):
                    let inputs = try await store.reviewInputs(of: taken).map { json throws in try RetainedInputs(json: json) }
                    if let fields {
                        try batch.accept(taken, fields: fields, inputs: inputs)
                    } else if let inputs {
                        try batch.replay(taken, inputs: inputs)
                    }
                }
            }
            return (batch, refused)
        }
        guard !batch.isEmpty else { return refused }
        let outcomes = Outcomes()
        _ = try await run(.input(batch)) { outcome, _ in
            await outcomes.add(outcome)
            return true
        }
        let results = await outcomes.all
        return try await withStore { store in
            var done: [ReviewResult] = []
            for (sequence, entry) in batch.reviews.sorted(by: { $0.key < $1.key }) {
                let outcome = results[sequence]
                if let failure = outcome?.failure {
                    // The recorder opened the review again with this failure, and ended the claim.
                    done.append(ReviewResult(entry: entry, done: false, reason: "\(failure.code.rawValue): \(failure.message)"))
                    continue
                }
                guard outcome != nil else {
                    try await store.releaseReview(entry, owner: owner)
                    done.append(ReviewResult(entry: entry, done: false, reason: "the run stopped before it was done"))
                    continue
                }
                // Processed: its review closed with the document's move; one submitted before is closed here.
                _ = try await store.resolveReview(
                    entry, action: action, owner: owner, operator: name, resolution: nil, note: nil, at: Date())
                done.append(ReviewResult(entry: try await store.review(id: entry.id) ?? entry, done: true, reason: nil))
            }
            return refused + done
        }
    }

    /// Closes a review without a document, with a reason and, optionally, a note (sealed): an OPTIONAL document becomes
    /// SKIPPED, a REQUIRED one stays REQUIRED.
    package func reject(_ entry: ReviewEntry, reason: RejectReason, note: String?, operator name: String) async throws -> ReviewResult {
        let owner = "review-\(UUID().uuidString.lowercased())"
        return try await withStore { store in
            switch try await store.claimReview(entry, for: .reject, operator: name, owner: owner, at: Date()) {
            case .closed(let closed):
                return ReviewResult(entry: closed, done: false, reason: "its review is \(closed.state.rawValue) already")
            case .held(let held, let until):
                return ReviewResult(entry: held, done: false, reason: "another operator is acting on it until \(Timestamp.string(until))")
            case .taken(let taken):
                let time = Date()
                guard
                    try await store.resolveReview(
                        taken, action: .reject, owner: owner, operator: name, resolution: reason.rawValue, note: note, at: time)
                else {
                    return ReviewResult(entry: try await store.review(id: taken.id) ?? taken, done: false, reason: "it was closed meanwhile")
                }
                if let transactionId = taken.transactionId, let type = taken.documentType,
                    try await store.transaction(id: transactionId)?.state.documents[type] == .optional
                {
                    _ = try await store.apply(.skip, to: type, of: transactionId, reason: "review reject by \(name)", at: time)
                }
                return ReviewResult(entry: try await store.review(id: taken.id) ?? taken, done: true, reason: nil)
            }
        }
    }

    /// `body` with the application's store open (as `run` opens it, without creating one).
    package func withStore<T: Sendable>(_ body: @escaping @Sendable (TransactionStore) async throws -> T) async throws -> T {
        do {
            return try await store.withStore(
                create: false, encryption: encryption, logger: logger, neighbours: WorkItems.neighbours, body)
        } catch let error as StoreError {
            throw CommandFailure(error.description)
        } catch let error as DocumentFailure {
            throw CommandFailure("\(error.code.rawValue): \(error.message)")
        }
    }
}

/// The outcomes of a review batch, by sequence.
private actor Outcomes {
    private(set) var all: [Int: DocumentOutcome] = [:]

    func add(_ outcome: DocumentOutcome) { all[outcome.sequence] = outcome }
}
