import AsyncAlgorithms
import DocumentOutcomes
import Foundation
import Logging
import Protect
import Synchronization
import TransactionStore
import VerifyModel
import WorkQueues

/// A worker's view of the shared work queue.
package struct QueueInput: Sendable {
    package var queue: any WorkQueue
    /// Who holds the leases: unique per worker process.
    package var owner: String
    package var lease: Duration
    /// Stop once every item of the queue is done (including other workers' items), instead of waiting for more.
    package var exitWhenEmpty: Bool
    /// The items this worker is working on: the heartbeat renews these leases and no others.
    let held = HeldWorkItems()

    package init(queue: any WorkQueue, owner: String, lease: Duration, exitWhenEmpty: Bool) {
        self.queue = queue
        self.owner = owner
        self.lease = lease
        self.exitWhenEmpty = exitWhenEmpty
    }

    /// Items claimed at a time: few, so that a worker never sits on work others could do.
    static let claimSize = 8

    /// Claims of one document after which a store that keeps failing it is taken as the document's own failure, and
    /// reported, instead of giving it back to the queue once more.
    static let maximumClaims = 8

    /// Writes an item's end (done, or given back) to the queue, trying again while the database is away for a moment
    /// (a session ended, a server restarted). Whatever the outcome, the worker stops renewing the item's lease: an end
    /// that could not be written leaves the item to expire, and another worker (or this one) redoes it.
    func end(_ item: Int64, logger: Logger, _ write: @Sendable () async throws -> Void) async {
        defer { held.remove(item) }
        var pauses = Self.endRetryPauses[...]
        while true {
            do throws {
                try await write()
                return
            } catch {
                guard let pause = pauses.popFirst(), !Task.isCancelled else {
                    logger.warning(
                        "could not write a queue item's end; its lease will expire and another worker will redo it",
                        metadata: ["queue.item": "\(item)", "error.code": "\(FailureCode(of: error))"])
                    return
                }
                try? await Task.sleep(for: pause)  // a pause before asking the database again, not a poll
            }
        }
    }

    /// Pauses between the tries of `end`: about 7 s in all, what a PostgreSQL restart takes.
    static let endRetryPauses: [Duration] = [.milliseconds(250), .seconds(1), .seconds(2), .seconds(4)]

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static func decode(_ job: String) throws -> DocumentJob {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(DocumentJob.self, from: Data(job.utf8))
    }
}

/// The work queue as a worker reads it: claimed items, their leases renewed while they are held, each marked done when
/// its document is reported (or given back when the store failed it), and the queue's group ends taken as they come.
extension QueueInput: DocumentSource {
    package var channel: String { "stream" }
    package var total: Int? { nil }

    /// Claims work until the queue is empty (with `exitWhenEmpty`) or the task is cancelled. With nothing to
    /// claim, it waits for the queue to say that work may have arrived (`waitForWork`).
    package func feed(_ context: SourceContext, admit: @escaping @Sendable (SourceItem) async throws -> Void) async throws {
        let logger = context.logger
        while true {
            try Task.checkCancellation()
            let items: [WorkItem]
            do {
                items = try await queue.claim(owner: owner, limit: Self.claimSize, lease: lease)
            } catch {
                logger.warning("could not claim work", metadata: ["error.code": "\(FailureCode(of: error))"])
                try await Task.sleep(for: .seconds(1))  // a pause before trying the database again, not a poll
                continue
            }
            if items.isEmpty {
                if try await isDone(logger) { return }
                continue
            }
            held.add(items.map(\.id))
            // Group ends are a few database writes each: run a claim's worth of them side by side.
            await withTaskGroup(of: Void.self) { group in
                for item in items where item.kind == .groupEnd {
                    group.addTask { await context.inputEnds.endGroup(item, queueInput: self) }
                }
            }
            for item in items where item.kind == .document { try await admit(Self.job(of: item)) }
        }
    }

    /// With nothing claimed: whether the queue is done (with `exitWhenEmpty`), else waits for work to arrive.
    private func isDone(_ logger: Logger) async throws -> Bool {
        if exitWhenEmpty {
            do {
                if try await queue.openItems() == 0 { return true }
            } catch {
                logger.warning("could not count the open work", metadata: ["error.code": "\(FailureCode(of: error))"])
            }
        }
        do {
            try await queue.waitForWork()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.warning("could not wait for work", metadata: ["error.code": "\(FailureCode(of: error))"])
            try await Task.sleep(for: .seconds(1))  // a pause before trying the database again, not a poll
        }
        return false
    }

    /// A claimed document's job, or its failure: its transaction's data purged while it waited, or not a job at all.
    static func job(of item: WorkItem) -> SourceItem {
        func failed(_ failure: DocumentFailure) -> SourceItem {
            var failure = IngestFailure(sequence: Int(item.id), inputId: "queue-\(item.id)", source: "queue:\(item.id)", failure: failure)
            failure.input.queueItem = item.id
            return SourceItem(job: .failure(failure), queueItem: item)
        }
        guard !item.job.isEmpty else {
            return failed(DocumentFailure(.initiateDocumentTransactionError, "its transaction's data was purged while it waited in the queue"))
        }
        guard var job = try? decode(item.job) else {
            return failed(DocumentFailure(.invalidKeyMap, "queue item \(item.id) is not a document job"))
        }
        job.sequence = Int(item.id)
        return SourceItem(job: .success(job), queueItem: item)
    }

    /// Renews the leases of the claimed documents until the run cancels this.
    package func sustain(_ context: SourceContext) async {
        for await _ in AsyncTimerSequence(interval: lease / 3, clock: .continuous) {
            do {
                try await queue.heartbeat(owner: owner, items: held.all, lease: lease)
            } catch {
                context.logger.warning("could not renew the work leases", metadata: ["error.code": "\(FailureCode(of: error))"])
            }
        }
    }

    /// A document the store failed goes back to the queue, to be redone (and reported then), until it has been
    /// claimed `maximumClaims` times: then the failure is taken as its own.
    package func giveBack(_ document: FinishedDocument, _ context: SourceContext) async -> Bool {
        let input = document.outcome.input
        guard let item = input.queueItem, input.queueClaims < Self.maximumClaims else { return false }
        context.logger.warning("the store failed a queue item; it goes back to the queue", metadata: ["queue.item": "\(item)"])
        await end(item, logger: context.logger) { try await queue.release(item, owner: owner) }
        return true
    }

    /// Marks the document's queue item done (the queue notes when it was the last of its group).
    package func reported(_ document: FinishedDocument, _ context: SourceContext) async -> (@Sendable () async -> Void)? {
        let outcome = document.outcome
        guard let item = outcome.input.queueItem else { return nil }
        var result: [String: String] = [:]
        result["documentId"] = outcome.documentId
        result["error"] = outcome.failure?.code.rawValue
        let text = (try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let transactionId = outcome.transactionId
        await end(item, logger: context.logger) { try await queue.complete(item, transactionId: transactionId, result: text) }
        return nil
    }
}

/// The ids of the queue items a worker holds, from its claim to the write of their end.
final class HeldWorkItems: Sendable {
    private let ids = Mutex(Set<Int64>())

    func add(_ items: some Sequence<Int64>) { ids.withLock { $0.formUnion(items) } }
    func remove(_ item: Int64) { _ = ids.withLock { $0.remove(item) } }
    var all: [Int64] { ids.withLock { $0.sorted() } }
}

/// Registers documents in the work queue (`verify-pipeline enqueue`): a folder's jobs or NDJSON lines, as one
/// batch. Transactions named by QR text are opened now, so that workers may take documents in any order. Inputs
/// that cannot become jobs (a bad line, a QR with another verification code) are returned as failures and not
/// queued; the rest go on.
package struct Enqueuer: Sendable {
    let configuration: PipelineConfiguration
    let store: TransactionStore
    let queue: any WorkQueue
    let logger: Logger

    /// Lines are queued as they are read, in database transactions of at most this many jobs or bytes, so that a
    /// long standard input is never held whole. A folder's jobs (paths, not images) go in one, with their groups.
    static let flushJobs = 256
    static let flushBytes = 64 << 20

    package init(configuration: PipelineConfiguration, store: TransactionStore, queue: any WorkQueue, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.queue = queue
        self.logger = logger
    }

    /// Queues every document of `source` as one batch; a source that cannot be queued (a worker's, reviews') is refused.
    package func enqueue(_ source: some DocumentSource) async throws -> (batch: Int64, queued: Int, refused: [DocumentOutcome]) {
        guard let kind = source.queueBatch else { throw DocumentFailure(.noDocumentToSubmitError, "enqueue reads a folder or standard input") }
        try source.open()
        let batch = try await queue.createBatch(kind)
        let pending = Pending()
        let context = SourceContext(
            configuration: configuration,
            inputEnds: InputEnds(
                store: store, signals: SignalsCollector(configuration: configuration.protect, store: store, channel: source.channel, logger: logger),
                logger: logger, now: { Date() }),
            touched: TouchedTransactions(), logger: logger)
        try await source.feed(context) { item in
            let (job, refused) = await admit(item.job)
            let full = await pending.add(job, refused: refused)
            // A folder's jobs (paths, not images) go in one transaction, with their groups.
            if full, kind == .stream { try await flush(pending, batch: batch) }
        }
        try await flush(pending, batch: batch)
        return (batch, await pending.queued, await pending.refused)
    }

    /// The jobs read and not yet queued, and what was queued or refused so far.
    actor Pending {
        private var jobs: [NewWorkItem] = []
        private var bytes = 0
        private(set) var queued = 0
        private(set) var refused: [DocumentOutcome] = []

        /// Notes one input; true when the jobs held reach a flush's size.
        func add(_ job: NewWorkItem?, refused outcome: DocumentOutcome?) -> Bool {
            if let outcome { refused.append(outcome) }
            if let job {
                jobs.append(job)
                bytes += job.job.utf8.count
            }
            return jobs.count >= Enqueuer.flushJobs || bytes >= Enqueuer.flushBytes
        }

        /// The jobs held, handed over to be queued.
        func take() -> [NewWorkItem] {
            defer { (jobs, bytes) = ([], 0) }
            return jobs
        }

        func sent(_ count: Int) { queued += count }
    }

    /// The queue's item for a job, or the outcome of an input refused now.
    private func admit(_ result: Result<DocumentJob, IngestFailure>) async -> (NewWorkItem?, DocumentOutcome?) {
        switch result {
        case .failure(let failure):
            return (nil, failure.outcome)
        case .success(let job):
            do {
                if case .qr(let qr) = job.identity {
                    try await job.openTransaction(qr, on: store, configuration: configuration, now: Date())
                }
                let encoded = String(decoding: try QueueInput.encoder.encode(job), as: UTF8.self)
                return (NewWorkItem(job: encoded, group: job.inputGroup, transactionId: job.transactionId), nil)
            } catch {
                return (nil, DocumentOutcome(input: job.input(), transactionId: nil, failure: DocumentFailure(any: error)))
            }
        }
    }

    private func flush(_ pending: Pending, batch: Int64) async throws {
        let jobs = await pending.take()
        guard !jobs.isEmpty else { return }
        try await queue.enqueue(jobs, batch: batch)
        await pending.sent(jobs.count)
    }
}
