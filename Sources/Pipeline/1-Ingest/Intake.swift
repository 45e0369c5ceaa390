import DocumentOutcomes
import Foundation
import Logging
import Synchronization
import TransactionStore
import VerifyModel
import WorkQueues

/// The ingest stage: hands what a source feeds it (documents, and inputs that failed already) to the decode stage,
/// opening the transactions their QR text names, until the source ends or the run stops taking input.
struct Intake: Sendable {
    let configuration: PipelineConfiguration
    let store: TransactionStore
    let touched: TouchedTransactions
    let logger: Logger
    let now: @Sendable () -> Date

    /// Documents taken in so far: the run compares them with the documents reported, to tell a run cut short.
    let taken = TakenDocuments()

    /// Where ingested documents go: the decode queue, or (for inputs that already failed) the report.
    struct Outlets: Sendable {
        let decode: StageQueue<InFlight<DocumentJob>>
        let report: StageQueue<FinishedDocument>
    }

    /// Returns when the source is exhausted, or throws `CancellationError` when the task is cancelled.
    func feed(_ source: some DocumentSource, context: SourceContext, into outlets: Outlets) async throws {
        try await source.feed(context) { item in try await admit(item, into: outlets) }
    }

    /// Hands one input on. A transaction named by its QR text is opened here, before later lines that name it
    /// by `transactionId` can overtake this one in the parallel stages.
    private func admit(_ item: SourceItem, into outlets: Outlets) async throws {
        switch item.job {
        case .failure(let failure):
            try await report(failure.outcome, into: outlets)
        case .success(let job):
            var input = job.input(queueItem: item.queueItem?.id)
            input.queueClaims = item.queueItem?.claims ?? 1
            if case .qr(let qr) = job.identity {
                do {
                    try await job.openTransaction(qr, on: store, configuration: configuration, now: now())
                    await touched.add(qr.transactionId)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    try await report(DocumentOutcome(input: input, transactionId: nil, failure: DocumentFailure(any: error)), into: outlets)
                    return
                }
            }
            try await outlets.decode.send(InFlight(input: input, value: job), weight: job.byteCount)
            taken.add()
        }
    }

    private func report(_ outcome: DocumentOutcome, into outlets: Outlets) async throws {
        try await outlets.report.send(FinishedDocument(outcome))
        taken.add()
    }
}

/// A count of the documents the intake handed on.
final class TakenDocuments: Sendable {
    private let count = Atomic(0)

    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
