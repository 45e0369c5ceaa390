import Foundation
import Logging
import Metrics
import Protect
import TransactionStore
import VerifyModel
import WorkQueues

/// The report stage: hands each document's outcome to the caller as soon as it is done, counts the run,
/// ends transaction folders whose last document is in, and marks claimed queue items done.
struct Reporter: Sendable {
    let input: PipelineInput
    let folderJobs: [Result<DocumentJob, IngestFailure>]
    let total: Int?
    let signals: SignalsCollector
    let touched: TouchedTransactions
    let inputEnds: InputEnds
    let reviews: ReviewRecorder
    let logger: Logger
    let emit: @Sendable (DocumentOutcome, RunProgress) async -> Void

    func report(from queue: StageQueue<DocumentOutcome>) async -> RunSummary {
        var summary = RunSummary()
        var folderEnds = FolderEnds(folderJobs)
        // Folders whose last document has been reported, ended in a task of their own: their skips must not hold
        // up reporting.
        let (endedFolders, folderEnded) = AsyncStream.makeStream(of: (folder: String, transactions: [String]).self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await (folder, ids) in endedFolders {
                    await inputEnds.skipMissingOptionalDocuments(ids, reason: "end of \(folder)")
                    await touched.ended(ids)
                }
            }
            while let outcome = await queue.receive() {
                if case .queue(let queueInput) = input, let item = outcome.input.queueItem,
                    let failure = outcome.failure, failure.storeUnavailable, outcome.input.queueClaims < QueueInput.maximumClaims
                {
                    // Not the document's failure: it goes back to the queue, is redone, and is reported then.
                    await giveBack(item, queueInput: queueInput)
                    summary.givenBack += 1
                    continue
                }
                // Recorded for review before it is reported, and before its folder's end can skip its type.
                if outcome.failure != nil, await !reviews.record(outcome, at: Date()), case .queue(let queueInput) = input,
                    let item = outcome.input.queueItem, outcome.input.queueClaims < QueueInput.maximumClaims
                {
                    await giveBack(item, queueInput: queueInput)
                    summary.givenBack += 1
                    continue
                }
                summary.documents += 1
                Self.count(outcome)
                if let failure = outcome.failure {
                    summary.failed += 1
                    if failure.code == .document(.documentCaptureError), let id = outcome.transactionId {
                        await signals.decodeFailed(id)
                    }
                    logger.debug("document failed", metadata: ["input.sequence": "\(outcome.sequence)", "error.code": "\(failure.code)"])
                }
                if outcome.alreadySubmitted { summary.alreadySubmitted += 1 }
                await emit(outcome, RunProgress(done: summary.documents, failed: summary.failed, total: total))
                if let ended = folderEnds.reported(outcome.input, transactionId: outcome.transactionId) {
                    folderEnded.yield(ended)
                }
                if case .queue(let queueInput) = input, let item = outcome.input.queueItem {
                    await complete(item, outcome: outcome, queueInput: queueInput)
                }
            }
            folderEnded.finish()
        }
        return summary
    }

    /// `verify_documents_total{type, outcome}`: processed, already_submitted, skipped or failed (its code's name is
    /// not a label: labels stay few).
    static func count(_ outcome: DocumentOutcome) {
        let kind = outcome.failure != nil ? "failed" : outcome.alreadySubmitted ? "already_submitted" : outcome.skipped ? "skipped" : "processed"
        let type = outcome.response?.documentType.rawValue ?? outcome.input.type?.rawValue ?? "unknown"
        Counter(label: "verify_documents_total", dimensions: [("type", type), ("outcome", kind)]).increment()
    }

    /// Marks a queue item done (the queue notes when it was the last of its group).
    private func complete(_ item: Int64, outcome: DocumentOutcome, queueInput: QueueInput) async {
        var result: [String: String] = [:]
        result["documentId"] = outcome.documentId
        result["error"] = outcome.failure?.code.rawValue
        let text: String
        do {
            text = String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self)
        } catch {
            text = "{}"  // a dictionary of strings always serialises
        }
        let queue = queueInput.queue, transactionId = outcome.transactionId
        await queueInput.end(item, logger: logger) { () throws(StoreError) in
            try await queue.complete(item, transactionId: transactionId, result: text)
        }
    }

    /// Gives back a document whose store could not be written: the queue hands it out again (its lease expires if
    /// even that cannot be written), and the redo finds whatever was recorded of it before.
    private func giveBack(_ item: Int64, queueInput: QueueInput) async {
        logger.warning("the store failed a queue item; it goes back to the queue", metadata: ["queue.item": "\(item)"])
        let queue = queueInput.queue
        await queueInput.end(item, logger: logger) { () throws(StoreError) in try await queue.release(item, owner: queueInput.owner) }
    }
}
