import DocumentOutcomes
import Foundation
import Logging
import Metrics
import Protect
import TransactionStore
import VerifyModel
import WorkQueues

/// The report stage: records each failed document for review, hands each outcome to the caller as soon as it is
/// done, counts the run, and lets the source complete it (a folder's end, a worker's queue item).
struct Reporter: Sendable {
    let source: any DocumentSource
    let context: SourceContext
    let signals: SignalsCollector
    let reviews: ReviewRecorder
    let logger: Logger
    let emit: @Sendable (DocumentOutcome, RunProgress) async -> Void

    func report(from queue: StageQueue<FinishedDocument>) async -> RunSummary {
        var summary = RunSummary()
        // What completes a document beside the report (a folder's end: its skips must not hold up reporting), in order.
        let (followUps, followUp) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await work in followUps { await work() }
            }
            while let document = await queue.receive() {
                let outcome = document.outcome
                // Not the document's failure: it goes back to its input, is redone, and is reported then.
                if outcome.failure?.storeUnavailable == true, await source.giveBack(document, context) {
                    summary.givenBack += 1
                    continue
                }
                // Recorded for review before it is reported, and before its folder's end can skip its type.
                if outcome.failure != nil, await !reviews.record(document, at: Date()), await source.giveBack(document, context) {
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
                await emit(outcome, RunProgress(done: summary.documents, failed: summary.failed, total: source.total))
                if let work = await source.reported(document, context) { followUp.yield(work) }
            }
            followUp.finish()
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
}
