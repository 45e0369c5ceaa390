import Foundation
import Logging
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
    func end(_ item: Int64, logger: Logger, _ write: @Sendable () async throws(StoreError) -> Void) async {
        defer { held.remove(item) }
        var pauses = Self.endRetryPauses[...]
        while true {
            do throws(StoreError) {
                try await write()
                return
            } catch {
                guard let pause = pauses.popFirst(), !Task.isCancelled else {
                    logger.warning(
                        "could not write a queue item's end; its lease will expire and another worker will redo it",
                        metadata: ["queue.item": "\(item)", "error.code": "\(error.failureCode)"])
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

    /// Lines are queued as they are read, in database transactions of at most this many jobs or bytes, so that a
    /// long standard input is never held whole. A folder's jobs (paths, not images) go in one, with their groups.
    static let flushJobs = 256
    static let flushBytes = 64 << 20

    package init(configuration: PipelineConfiguration, store: TransactionStore, queue: any WorkQueue) {
        self.configuration = configuration
        self.store = store
        self.queue = queue
    }

    package func enqueue(_ input: PipelineInput) async throws -> (batch: Int64, queued: Int, refused: [DocumentOutcome]) {
        var pending = Pending()
        switch input {
        case .folder(let url):
            guard FolderIngest.isDirectory(url) else { throw DocumentFailure(.noDocumentToSubmitError, "\(url.path) is not a folder") }
            let results = try FolderIngest(root: url).jobs()
            let batch = try await queue.createBatch(.folder)
            for result in results { try await admit(result, to: &pending) }
            try await flush(&pending, batch: batch)
            return (batch, pending.queued, pending.refused)
        case .lines(let descriptor):
            let batch = try await queue.createBatch(.stream)
            try await ByteInput.withChunks(fileDescriptor: descriptor) { chunks in
                try await StreamLine.inputs(in: chunks, maxLineBytes: configuration.maxLineBytes) { result in
                    try await admit(result, to: &pending)
                    if pending.jobs.count >= Self.flushJobs || pending.bytes >= Self.flushBytes { try await flush(&pending, batch: batch) }
                }
            }
            try await flush(&pending, batch: batch)
            return (batch, pending.queued, pending.refused)
        case .queue, .reviews:
            throw DocumentFailure(.noDocumentToSubmitError, "enqueue reads a folder or standard input")
        }
    }

    struct Pending {
        var jobs: [NewWorkItem] = []
        var bytes = 0
        var queued = 0
        var refused: [DocumentOutcome] = []
    }

    private func admit(_ result: Result<DocumentJob, IngestFailure>, to pending: inout Pending) async throws {
        switch result {
        case .failure(let failure):
            pending.refused.append(failure.outcome)
        case .success(let job):
            if case .qr(let qr) = job.identity {
                do {
                    _ = try await store.openTransaction(try job.newTransaction(qr, configuration: configuration, now: Date()))
                } catch {
                    pending.refused.append(DocumentOutcome(input: job.input(), transactionId: nil, failure: DocumentFailure(any: error)))
                    return
                }
            }
            let encoded = String(decoding: try QueueInput.encoder.encode(job), as: UTF8.self)
            pending.jobs.append(NewWorkItem(job: encoded, group: job.inputGroup, transactionId: job.transactionId))
            pending.bytes += encoded.utf8.count
        }
    }

    private func flush(_ pending: inout Pending, batch: Int64) async throws {
        guard !pending.jobs.isEmpty else { return }
        try await queue.enqueue(pending.jobs, batch: batch)
        pending.queued += pending.jobs.count
        (pending.jobs, pending.bytes) = ([], 0)
    }
}
