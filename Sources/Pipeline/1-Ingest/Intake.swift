import Foundation
import Logging
import Synchronization
import TransactionStore
import VerifyModel
import WorkQueues

/// The ingest stage: turns the input (a folder's jobs, NDJSON lines, claimed queue items) into documents for
/// the decode stage, until the input ends or the run stops taking input.
struct Intake: Sendable {
    let configuration: PipelineConfiguration
    let store: TransactionStore
    let touched: TouchedTransactions
    let inputEnds: InputEnds
    let logger: Logger
    let now: @Sendable () -> Date

    /// Documents taken in so far: the run compares them with the documents reported, to tell a run cut short.
    let taken = TakenDocuments()

    /// Where ingested documents go: the decode queue, or (for inputs that already failed) the report.
    struct Outlets: Sendable {
        let decode: StageQueue<InFlight<DocumentJob>>
        let report: StageQueue<DocumentOutcome>
    }

    private func send(_ document: InFlight<DocumentJob>, weight: Int, into outlets: Outlets) async throws {
        try await outlets.decode.send(document, weight: weight)
        taken.add()
    }

    private func report(_ outcome: DocumentOutcome, into outlets: Outlets) async throws {
        try await outlets.report.send(outcome)
        taken.add()
    }

    /// Returns when the input is exhausted, or throws `CancellationError` when the task is cancelled.
    func feed(_ input: PipelineInput, folderJobs: [Result<DocumentJob, IngestFailure>], into outlets: Outlets) async throws {
        switch input {
        case .folder, .reviews:
            for job in folderJobs {
                try await admit(job, into: outlets)
            }
        case .lines(let descriptor):
            try await ByteInput.withChunks(fileDescriptor: descriptor) { chunks in
                try await StreamLine.inputs(in: chunks, maxLineBytes: configuration.maxLineBytes) { try await admit($0, into: outlets) }
            }
        case .queue(let queueInput):
            try await claim(from: queueInput, into: outlets)
        }
    }

    /// Claims work until the queue is empty (with `exitWhenEmpty`) or the task is cancelled. With nothing to
    /// claim, it waits for the queue to say that work may have arrived (`waitForWork`).
    private func claim(from input: QueueInput, into outlets: Outlets) async throws {
        while true {
            try Task.checkCancellation()
            let items: [WorkItem]
            do {
                items = try await input.queue.claim(owner: input.owner, limit: QueueInput.claimSize, lease: input.lease)
            } catch {
                logger.warning("could not claim work", metadata: ["error.code": "\(error.failureCode)", "error": "\(error.message)"])
                try await Task.sleep(for: .seconds(1))  // a pause before trying the database again, not a poll
                continue
            }
            if items.isEmpty {
                if input.exitWhenEmpty {
                    do {
                        if try await input.queue.openItems() == 0 { return }
                    } catch {
                        logger.warning("could not count the open work", metadata: ["error": "\(error.message)"])
                    }
                }
                do {
                    try await input.queue.waitForWork()
                } catch let error as StoreError {
                    logger.warning("could not wait for work", metadata: ["error.code": "\(error.failureCode)", "error": "\(error.message)"])
                    try await Task.sleep(for: .seconds(1))  // a pause before trying the database again, not a poll
                }
                continue
            }
            input.held.add(items.map(\.id))
            // Group ends are a few database writes each: run a claim's worth of them side by side.
            await withTaskGroup(of: Void.self) { group in
                for item in items where item.kind == .groupEnd {
                    group.addTask { await inputEnds.endGroup(item, queueInput: input) }
                }
            }
            for item in items where item.kind == .document {
                guard !item.job.isEmpty else {
                    var failure = IngestFailure(
                        sequence: Int(item.id), inputId: "queue-\(item.id)", source: "queue:\(item.id)",
                        failure: DocumentFailure(
                            .initiateDocumentTransactionError,
                            "its transaction's data was purged while it waited in the queue"))
                    failure.input.queueItem = item.id
                    try await report(failure.outcome, into: outlets)
                    continue
                }
                do {
                    var job = try QueueInput.decode(item.job)
                    job.sequence = Int(item.id)
                    try await admit(.success(job), queueItem: item, into: outlets)
                } catch let error as CancellationError {
                    throw error
                } catch {
                    var failure = IngestFailure(
                        sequence: Int(item.id), inputId: "queue-\(item.id)", source: "queue:\(item.id)",
                        failure: DocumentFailure(.invalidKeyMap, "queue item \(item.id) is not a document job"))
                    failure.input.queueItem = item.id
                    try await report(failure.outcome, into: outlets)
                }
            }
        }
    }

    /// Hands one input on. A transaction named by its QR text is opened here, before later lines that name it
    /// by `transactionId` can overtake this one in the parallel stages.
    private func admit(_ job: Result<DocumentJob, IngestFailure>, queueItem: WorkItem? = nil, into outlets: Outlets) async throws {
        switch job {
        case .failure(let failure):
            try await report(failure.outcome, into: outlets)
        case .success(let job):
            var input = job.input(queueItem: queueItem?.id)
            input.queueClaims = queueItem?.claims ?? 1
            if case .qr(let qr) = job.identity {
                do {
                    _ = try await store.openTransaction(try job.newTransaction(qr, configuration: configuration, now: now()))
                    await touched.add(qr.transactionId)
                } catch {
                    try await report(DocumentOutcome(input: input, transactionId: nil, failure: DocumentFailure(any: error)), into: outlets)
                    return
                }
            }
            try await send(InFlight(input: input, value: job), weight: job.byteCount, into: outlets)
        }
    }
}

/// A count of the documents the intake handed on.
final class TakenDocuments: Sendable {
    private let count = Atomic(0)

    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
