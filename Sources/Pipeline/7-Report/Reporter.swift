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
                    await complete(item, outcome: outcome, queue: queueInput.queue)
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
    private func complete(_ item: Int64, outcome: DocumentOutcome, queue: any WorkQueue) async {
        var result: [String: String] = [:]
        result["documentId"] = outcome.documentId
        result["error"] = outcome.failure?.code.rawValue
        let text: String
        do {
            text = String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self)
        } catch {
            text = "{}"  // a dictionary of strings always serialises
        }
        do {
            try await queue.complete(item, transactionId: outcome.transactionId, result: text)
        } catch {
            logger.warning(
                "could not mark a queue item done; its lease will expire and another worker will redo it",
                metadata: ["queue.item": "\(item)", "error.code": "\(error.failureCode)"])
        }
    }
}
