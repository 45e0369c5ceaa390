import BarcodeScanning
import Foundation
import Logging
import Protect
import Submission
import TransactionStore
import VerifyModel

/// What a run reads.
public enum PipelineInput: Sendable {
    /// A batch folder (SPEC §6): at its end, missing optional documents become SKIPPED.
    case folder(URL)
    /// NDJSON documents, one a line, from a file descriptor (standard input).
    case lines(fileDescriptor: Int32)
    /// Documents claimed from the shared work queue (`verify-pipeline worker`).
    case queue(QueueInput)
}

/// How a run went, for the closing summary line.
public struct RunSummary: Sendable, Equatable {
    public var documents = 0
    public var failed = 0
    public var alreadySubmitted = 0
    public var transactions = 0
    public var completed = 0
    public var elapsed: TimeInterval = 0
}

/// Progress, for the bar: documents done so far, and how many there are when that is known.
public struct RunProgress: Sendable {
    public var done: Int
    public var failed: Int
    public var total: Int?
}

/// The staged pipeline: ingest → decode → scan → parse → track → submit → report, joined by bounded queues.
/// Each stage runs the number of workers its configuration names; a failed document passes through the
/// remaining stages untouched so that it is still reported, in its turn.
public struct PipelineRunner: Sendable {
    let configuration: PipelineConfiguration
    let store: any TransactionStore
    let submitter: any DocumentSubmitter
    let logger: Logger
    let omitImages: Bool
    let riskEvaluator: RiskEvaluator?
    let now: @Sendable () -> Date

    public init(configuration: PipelineConfiguration, store: any TransactionStore, submitter: any DocumentSubmitter,
                logger: Logger, omitImages: Bool = false, riskEvaluator: RiskEvaluator? = nil,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.store = store
        self.submitter = submitter
        self.logger = logger
        self.riskEvaluator = riskEvaluator
        self.omitImages = omitImages
        self.now = now
    }

    /// Runs until the input ends or `stop` is set, handing each document's outcome to `emit` as soon as it
    /// is done. Throws only when the input itself cannot be read (a missing folder).
    public func run(_ input: PipelineInput, stop: StopSignal,
                    emit: @escaping @Sendable (DocumentOutcome, RunProgress) async -> Void) async throws(DocumentFailure) -> RunSummary {
        let started = Date()
        let touched = TouchedTransactions()
        let channel = if case .folder = input { "folder" } else { "stream" }
        let signals = SignalsCollector(configuration: configuration.protect, store: store, channel: channel, logger: logger)
        let stages = Stages(configuration: configuration, store: store, submitter: submitter, resolver: QRResolver(),
                            touched: touched, signals: signals,
                            risk: riskEvaluator.map { RiskEvaluations(evaluator: $0, store: store) },
                            now: now, omitImages: omitImages, logger: logger)
        let folderJobs: [Result<DocumentJob, IngestFailure>]?
        if case .folder(let url) = input {
            guard FolderIngest.isDirectory(url) else {
                throw DocumentFailure(.noDocumentToSubmitError, "\(url.path) is not a folder")
            }
            folderJobs = try FolderIngest(root: url).jobs()
        } else {
            folderJobs = nil
        }
        let total = folderJobs?.count
        logger.info("run started", metadata: ["pipeline": "\(configuration.name)", "documents": "\(total.map(String.init) ?? "stream")"])

        let toDecode = BoundedQueue<WorkItem>(capacity: configuration.decode.queue)
        let toScan = BoundedQueue<WorkItem>(capacity: configuration.scan.queue)
        let toParse = BoundedQueue<WorkItem>(capacity: configuration.scan.queue)
        let toTrack = BoundedQueue<WorkItem>(capacity: configuration.track.queue)
        let toSubmit = BoundedQueue<WorkItem>(capacity: configuration.submit.queue)
        let toReport = BoundedQueue<WorkItem>(capacity: configuration.submit.queue)
        let scannerConfiguration = stages.scannerConfiguration

        let reported = StopSignal()
        // Folders whose last document has been reported, for their own task: their skips must not hold up reporting.
        let (endedFolders, folderEnded) = AsyncStream.makeStream(of: (folder: String, transactions: [String]).self)
        let summary = await withTaskGroup(of: RunSummary?.self) { group -> RunSummary in
            group.addTask {
                for await (folder, ids) in endedFolders {
                    await self.skipMissingOptionalDocuments(ids, reason: "end of \(folder)", signals: signals)
                    await touched.ended(ids)
                }
                return nil
            }
            if case .queue(let queueInput) = input {
                // Renew the leases until the last claimed document has been reported.
                group.addTask {
                    var last = ContinuousClock.now
                    while !reported.isStopped {
                        try? await Task.sleep(for: .milliseconds(100))
                        guard ContinuousClock.now - last >= queueInput.lease / 3 else { continue }
                        try? await queueInput.queue.heartbeat(owner: queueInput.owner, lease: queueInput.lease)
                        last = ContinuousClock.now
                    }
                    return nil
                }
            }
            group.addTask {
                await self.ingest(input, jobs: folderJobs, stop: stop, touched: touched, signals: signals, into: toDecode)
                return nil
            }
            group.addTask {
                await Self.stage(workers: self.configuration.decode.workers, from: toDecode, to: toScan) { { stages.decode($0) } }
                return nil
            }
            group.addTask {
                await Self.stage(workers: self.configuration.scan.workers, from: toScan, to: toParse) {
                    // ZBar scanners are not thread-safe: one per worker.
                    let scanner = BarcodeScanner(configuration: scannerConfiguration)
                    return { await stages.scan($0, with: scanner) }
                }
                return nil
            }
            group.addTask {
                await Self.stage(workers: 1, from: toParse, to: toTrack) { { stages.parse($0) } }
                return nil
            }
            group.addTask {
                await Self.stage(workers: self.configuration.track.workers, from: toTrack, to: toSubmit) { { await stages.track($0) } }
                return nil
            }
            group.addTask {
                await Self.stage(workers: self.configuration.submit.workers, from: toSubmit, to: toReport) { { await stages.submit($0) } }
                return nil
            }
            group.addTask {
                var summary = RunSummary()
                var folderEnds = FolderEnds(folderJobs ?? [])
                while let item = await toReport.receive() {
                    let outcome = item.finalOutcome()
                    summary.documents += 1
                    if let failure = outcome.failure {
                        summary.failed += 1
                        if failure.code == DocumentSubmissionErrorCode.documentCaptureError.rawValue, let id = outcome.transactionId {
                            await signals.decodeFailed(id)
                        }
                        self.logger.debug("document failed", metadata: ["input.sequence": "\(outcome.sequence)", "error.code": "\(failure.code)"])
                    }
                    if outcome.alreadySubmitted { summary.alreadySubmitted += 1 }
                    await emit(outcome, RunProgress(done: summary.documents, failed: summary.failed, total: total))
                    if let ended = folderEnds.reported(item.job, transactionId: outcome.transactionId) {
                        folderEnded.yield(ended)
                    }
                    if case .queue(let queueInput) = input, let id = item.job.queueItem {
                        await self.complete(id, outcome: outcome, queue: queueInput.queue)
                    }
                }
                reported.stop()
                folderEnded.finish()
                return summary
            }
            var summary = RunSummary()
            for await result in group { if let result { summary = result } }
            return summary
        }

        var result = summary
        if case .folder = input, !stop.isStopped {
            await skipMissingOptionalDocuments(await touched.notEnded, reason: "end of batch", signals: signals)
        }
        let ids = await touched.ids
        result.transactions = ids.count
        result.completed = (try? await store.count(of: ids, status: .completed)) ?? 0
        result.elapsed = Date().timeIntervalSince(started)
        logger.info("run finished", metadata: ["documents": "\(result.documents)", "failed": "\(result.failed)"])
        return result
    }

    /// Feeds jobs to the first queue, stopping early when asked to.
    private func ingest(_ input: PipelineInput, jobs: [Result<DocumentJob, IngestFailure>]?, stop: StopSignal,
                        touched: TouchedTransactions, signals: SignalsCollector, into queue: BoundedQueue<WorkItem>) async {
        switch input {
        case .folder:
            for job in jobs ?? [] {
                if stop.isStopped { break }
                await queue.send(await workItem(job, touched: touched))
            }
        case .queue(let input):
            while !stop.isStopped {
                let items: [PostgresWorkQueue.Item]
                do {
                    items = try await input.queue.claim(owner: input.owner, limit: QueueInput.claimSize, lease: input.lease)
                } catch {
                    logger.warning("could not claim work", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                    continue
                }
                if items.isEmpty {
                    if input.exitWhenEmpty, (try? await input.queue.openItems()) == 0 { break }
                    try? await Task.sleep(for: .milliseconds(200))
                    continue
                }
                // Group ends are a few database writes each: run a claim's worth of them side by side.
                await withTaskGroup(of: Void.self) { group in
                    for item in items where item.kind == .groupEnd {
                        group.addTask { await self.endGroup(item, queue: input.queue, signals: signals) }
                    }
                }
                for item in items where item.kind == .document {
                    guard var job = QueueInput.decode(item.job) else {
                        let failure = IngestFailure(sequence: Int(item.id), inputId: "queue-\(item.id)", source: "queue:\(item.id)",
                                                    failure: DocumentFailure(.invalidKeyMap, "queue item \(item.id) is not a document job"))
                        var broken = WorkItem(job: failure.job, failure: failure.failure)
                        broken.job.queueItem = item.id
                        await queue.send(broken)
                        continue
                    }
                    job.sequence = Int(item.id)
                    job.queueItem = item.id
                    job.queueBatch = item.batch
                    await queue.send(await workItem(.success(job), touched: touched))
                }
            }
        case .lines(let descriptor):
            let reader = LineReader(fileDescriptor: descriptor, stop: stop)
            var number = 0
            for await line in reader.lines {
                reader.taken()
                number += 1
                switch line {
                case .text(let text) where text.trimmingCharacters(in: .whitespaces).isEmpty:
                    number -= 1
                case .text(let text):
                    await queue.send(await workItem(StreamLine.parse(text, number: number), touched: touched))
                case .tooLong(let bytes):
                    let failure = IngestFailure(sequence: number, inputId: "line-\(number)", source: "stdin:\(number)",
                                                failure: DocumentFailure(.invalidKeyMap, "line \(number) is \(bytes) bytes, more than the limit of \(LineReader.maxLineBytes)"))
                    await queue.send(WorkItem(job: failure.job, failure: failure.failure))
                }
            }
        }
        await queue.finish()
    }

    /// A job ready for the stages. A transaction named by its QR text is opened here, before later lines that
    /// name it by `transactionId` can overtake this one in the parallel stages.
    private func workItem(_ job: Result<DocumentJob, IngestFailure>, touched: TouchedTransactions) async -> WorkItem {
        switch job {
        case .failure(let failure):
            return WorkItem(job: failure.job, failure: failure.failure)
        case .success(let job):
            if case .qr(let qr) = job.identity {
                do {
                    _ = try await store.openTransaction(job.newTransaction(qr, configuration: configuration, now: now()))
                    await touched.add(qr.transactionId)
                } catch {
                    return WorkItem(job: job, failure: DocumentFailure(error.documentError))
                }
            }
            var item = WorkItem(job: job)
            switch job.identity {
            case .qr(let qr):
                item.transactionId = qr.transactionId
                item.transactionOpened = true
            case .known(let id): item.transactionId = id
            case .qrImage: break
            }
            return item
        }
    }

    /// Marks a queue item done (the queue notes when it was the last of its group).
    private func complete(_ id: Int64, outcome: DocumentOutcome, queue: PostgresWorkQueue) async {
        var result: [String: String] = [:]
        result["documentId"] = outcome.documentId
        result["error"] = outcome.failure?.code
        let text = (try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        do {
            try await queue.complete(id, transactionId: outcome.transactionId, result: text)
        } catch {
            logger.warning("could not mark a queue item done", metadata: ["queue.item": "\(id)", "error": "\(error)"])
        }
    }

    /// The end of a transaction folder (or of a batch's loose images) taken from the queue: its transactions'
    /// missing optional documents become SKIPPED. On failure the item goes back to the queue.
    private func endGroup(_ item: PostgresWorkQueue.Item, queue: PostgresWorkQueue, signals: SignalsCollector) async {
        let group = item.group ?? "" // never nil for a group end (the schema's CHECK)
        do {
            let ids = try await queue.transactions(ofGroup: group, batch: item.batch)
            let reason = group == FolderIngest.looseImagesGroup ? "end of batch" : "end of \(group)"
            guard await skipMissingOptionalDocuments(ids, reason: reason, signals: signals) else {
                try await queue.release(item.id)
                return
            }
            try await queue.complete(item.id, transactionId: nil, result: "{}")
        } catch {
            logger.warning("could not end a group of the queue", metadata: ["queue.item": "\(item.id)", "error": "\(error)"])
            try? await queue.release(item.id)
        }
    }

    /// Returns false when a transaction could not be read or a document not skipped.
    @discardableResult
    private func skipMissingOptionalDocuments(_ ids: [String], reason: String, signals: SignalsCollector) async -> Bool {
        var succeeded = true
        for id in ids {
            let transaction: StoredTransaction
            do {
                guard let stored = try await store.transaction(id: id) else { continue }
                transaction = stored
            } catch {
                succeeded = false
                continue
            }
            for (type, status) in transaction.state.documents where status == .optional {
                do {
                    let (updated, _) = try await store.apply(.skip, to: type, of: id, reason: reason, at: now())
                    await signals.statusChanged(updated)
                } catch {
                    succeeded = false
                    logger.warning("could not skip a missing optional document", metadata: ["transaction.id": "\(id)", "error": "\(error)"])
                }
            }
        }
        return succeeded
    }

    /// Runs `workers` copies of a stage; `makeWork` is called once per worker, inside its task, so that a
    /// worker can own state that must not be shared (a ZBar scanner).
    static func stage(workers: Int, from input: BoundedQueue<WorkItem>, to output: BoundedQueue<WorkItem>,
                      makeWork: @escaping @Sendable () -> (WorkItem) async -> WorkItem) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(workers, 1) {
                group.addTask {
                    let work = makeWork()
                    while let item = await input.receive() {
                        await output.send(item.isDone ? item : await work(item))
                    }
                }
            }
        }
        await output.finish()
    }
}

/// The transaction folders of a batch run: when a folder's last document has been reported, its transactions'
/// input has ended (SPEC §1), so their missing optional documents are skipped then rather than at the end of
/// the whole batch. The batch folder's loose images end with the batch.
struct FolderEnds {
    private var open: [String: Int] = [:]
    private var transactions: [String: Set<String>] = [:]

    init(_ jobs: [Result<DocumentJob, IngestFailure>]) {
        for case .success(let job) in jobs {
            guard let folder = job.inputGroup, folder != FolderIngest.looseImagesGroup else { continue }
            open[folder, default: 0] += 1
        }
    }

    /// Notes a reported document; when it was its folder's last, returns the folder and its transactions.
    mutating func reported(_ job: DocumentJob, transactionId: String?) -> (folder: String, transactions: [String])? {
        guard let folder = job.inputGroup, let remaining = open[folder] else { return nil }
        if let transactionId { transactions[folder, default: []].insert(transactionId) }
        guard remaining == 1 else {
            open[folder] = remaining - 1
            return nil
        }
        open[folder] = nil
        return (folder, (transactions.removeValue(forKey: folder) ?? []).sorted())
    }
}
