import Foundation
import Logging
import TransactionStore
import WorkQueues
import VerifyModel

/// A worker's view of the shared work queue.
public struct QueueInput: Sendable {
    public var queue: any WorkQueue
    /// Who holds the leases: unique per worker process.
    public var owner: String
    public var lease: Duration
    /// Stop once every item of the queue is done (including other workers' items), instead of waiting for more.
    public var exitWhenEmpty: Bool

    public init(queue: any WorkQueue, owner: String, lease: Duration, exitWhenEmpty: Bool) {
        self.queue = queue
        self.owner = owner
        self.lease = lease
        self.exitWhenEmpty = exitWhenEmpty
    }

    /// Items claimed at a time: few, so that a worker never sits on work others could do.
    static let claimSize = 8

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

/// Registers documents in the work queue (`verify-pipeline enqueue`): a folder's jobs or NDJSON lines,
/// as one batch. Transactions named by QR text are opened now, so that workers may take documents in
/// any order. Inputs that cannot become jobs are returned as failures and not queued.
public struct Enqueuer: Sendable {
    let configuration: PipelineConfiguration
    let store: any TransactionStore
    let queue: any WorkQueue

    public init(configuration: PipelineConfiguration, store: any TransactionStore, queue: any WorkQueue) {
        self.configuration = configuration
        self.store = store
        self.queue = queue
    }

    public func enqueue(_ input: PipelineInput) async throws -> (batch: Int64, queued: Int, refused: [DocumentOutcome]) {
        var results: [Result<DocumentJob, IngestFailure>] = []
        let kind: WorkBatchKind
        switch input {
        case .folder(let url):
            guard FolderIngest.isDirectory(url) else { throw DocumentFailure(.noDocumentToSubmitError, "\(url.path) is not a folder") }
            results = try FolderIngest(root: url).jobs()
            kind = .folder
        case .lines(let descriptor):
            results = try await ByteInput.withChunks(fileDescriptor: descriptor) { chunks in
                var results: [Result<DocumentJob, IngestFailure>] = []
                try await StreamLine.inputs(in: chunks, maxLineBytes: configuration.maxLineBytes) { results.append($0) }
                return results
            }
            kind = .stream
        case .queue:
            throw DocumentFailure(.noDocumentToSubmitError, "enqueue reads a folder or standard input")
        }
        var jobs: [NewWorkItem] = []
        var refused: [DocumentOutcome] = []
        for result in results {
            switch result {
            case .failure(let failure):
                refused.append(failure.outcome)
            case .success(let job):
                if case .qr(let qr) = job.identity {
                    _ = try await store.openTransaction(job.newTransaction(qr, configuration: configuration, now: Date()))
                }
                jobs.append(NewWorkItem(job: String(decoding: try QueueInput.encoder.encode(job), as: UTF8.self), group: job.inputGroup))
            }
        }
        let batch = try await queue.createBatch(kind)
        try await queue.enqueue(jobs, batch: batch)
        return (batch, jobs.count, refused)
    }
}
