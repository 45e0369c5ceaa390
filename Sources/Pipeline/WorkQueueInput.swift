import Foundation
import Logging
import TransactionStore
import VerifyModel

/// A worker's view of the shared work queue.
public struct QueueInput: Sendable {
    public var queue: PostgresWorkQueue
    /// Who holds the leases: unique per worker process.
    public var owner: String
    public var lease: Duration
    /// Stop once every item of the queue is done (including other workers' items), instead of waiting for more.
    public var exitWhenEmpty: Bool

    public init(queue: PostgresWorkQueue, owner: String, lease: Duration, exitWhenEmpty: Bool) {
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

    static func decode(_ job: String) -> DocumentJob? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(DocumentJob.self, from: Data(job.utf8))
    }
}

/// Registers documents in the work queue (`verify-pipeline enqueue`): a folder's jobs or NDJSON lines,
/// as one batch. Transactions named by QR text are opened now, so that workers may take documents in
/// any order. Inputs that cannot become jobs are returned as failures and not queued.
public struct Enqueuer: Sendable {
    let configuration: PipelineConfiguration
    let store: any TransactionStore
    let queue: PostgresWorkQueue

    public init(configuration: PipelineConfiguration, store: any TransactionStore, queue: PostgresWorkQueue) {
        self.configuration = configuration
        self.store = store
        self.queue = queue
    }

    public func enqueue(_ input: PipelineInput) async throws -> (batch: Int64, queued: Int, refused: [DocumentOutcome]) {
        var results: [Result<DocumentJob, IngestFailure>] = []
        let kind: PostgresWorkQueue.BatchKind
        switch input {
        case .folder(let url):
            guard FolderIngest.isDirectory(url) else { throw DocumentFailure(.noDocumentToSubmitError, "\(url.path) is not a folder") }
            results = try FolderIngest(root: url).jobs()
            kind = .folder
        case .lines(let descriptor):
            let reader = LineReader(fileDescriptor: descriptor, stop: StopSignal())
            var number = 0
            for await line in reader.lines {
                reader.taken()
                guard case .text(let text) = line, !text.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
                number += 1
                results.append(StreamLine.parse(text, number: number))
            }
            kind = .stream
        case .queue:
            throw DocumentFailure(.noDocumentToSubmitError, "enqueue reads a folder or standard input")
        }
        var jobs: [PostgresWorkQueue.NewItem] = []
        var refused: [DocumentOutcome] = []
        for result in results {
            switch result {
            case .failure(let failure):
                refused.append(DocumentOutcome(sequence: failure.sequence, inputId: failure.inputId, source: failure.source,
                                               documentType: failure.type, failure: failure.failure))
            case .success(let job):
                if case .qr(let qr) = job.identity {
                    _ = try await store.openTransaction(job.newTransaction(qr, configuration: configuration, now: Date()))
                }
                jobs.append(.init(job: String(decoding: try QueueInput.encoder.encode(job), as: UTF8.self), group: job.inputGroup))
            }
        }
        let batch = try await queue.createBatch(kind)
        try await queue.enqueue(jobs, batch: batch)
        return (batch, jobs.count, refused)
    }
}
