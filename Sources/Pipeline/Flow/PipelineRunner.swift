import AsyncAlgorithms
import BarcodeScanning
import Foundation
import ImageDecoding
import Logging
import Metrics
import Protect
import Submission
import TransactionStore
import VerifyModel

/// What a run reads.
package enum PipelineInput: Sendable {
    /// A batch folder (CONTRACT §6): at its end, missing optional documents become SKIPPED.
    case folder(URL)
    /// NDJSON documents, one a line, from a file descriptor (standard input).
    case lines(fileDescriptor: Int32)
    /// Documents claimed from the shared work queue (`verify-pipeline worker`).
    case queue(QueueInput)
    /// Failed documents an operator sends through again from their reviews (`review accept`, `review replay`).
    case reviews(ReviewBatch)
}

/// How a run went, for the closing summary line.
package struct RunSummary: Sendable, Equatable {
    package var documents = 0
    package var failed = 0
    package var alreadySubmitted = 0
    package var transactions = 0
    package var completed = 0
    package var elapsed: TimeInterval = 0
    /// Documents of the input that were taken in, or were still to read, but not reported: the run was stopped (a
    /// signal, a drain cut short by its grace) before they were done. Nothing of them is lost: a later run finishes them.
    package var unfinished = 0
    /// A worker's documents given back to the queue because the store failed them: redone, and reported, then.
    package var givenBack = 0
}

/// Progress, for the bar: documents done so far, and how many there are when that is known.
package struct RunProgress: Sendable {
    package var done: Int
    package var failed: Int
    package var total: Int?
}

/// The staged pipeline:
///
///     ingest → decode → scan → parse → track → submit → report
///
/// Each stage is a function of its own input type (`DocumentJob`, `DecodedDocument`, `ScannedDocument`,
/// `ParsedDocument`, `DocumentToSubmit`), run by the number of workers its configuration names, between queues
/// bounded in items and bytes. A document that fails leaves the line at once for the report, with its code.
///
/// Stopping: `stop` ends the intake and lets documents in flight finish; cancelling the calling task ends every
/// stage at its next suspension, records nothing that was not finished, and still returns the summary.
package struct PipelineRunner: Sendable {
    let configuration: PipelineConfiguration
    let store: TransactionStore
    let submitter: any DocumentSubmitter
    let logger: Logger
    let omitImages: Bool
    let riskEvaluator: RiskEvaluator?
    let now: @Sendable () -> Date

    package init(
        configuration: PipelineConfiguration, store: TransactionStore, submitter: any DocumentSubmitter,
        logger: Logger, omitImages: Bool = false, riskEvaluator: RiskEvaluator? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
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
    package func run(
        _ input: PipelineInput, stop: StopSignal,
        emit: @escaping @Sendable (DocumentOutcome, RunProgress) async -> Void
    ) async throws(DocumentFailure) -> RunSummary {
        let started = Date()
        let identity: DocumentIdentity
        do throws(StoreError) {
            identity = try store.documentIdentity()
        } catch {
            throw DocumentFailure(error)
        }
        let folderJobs: [Result<DocumentJob, IngestFailure>]
        if case .folder(let url) = input {
            guard FolderIngest.isDirectory(url) else {
                throw DocumentFailure(.noDocumentToSubmitError, "\(url.path) is not a folder")
            }
            folderJobs = try FolderIngest(root: url).jobs()
        } else if case .reviews(let batch) = input {
            folderJobs = batch.jobs.map { .success($0) }
        } else {
            folderJobs = []
        }
        let total: Int? =
            switch input {
            case .folder, .reviews: folderJobs.count
            case .lines, .queue: nil
            }
        logger.info("run started", metadata: ["pipeline": "\(configuration.name)", "documents": "\(total.map(String.init) ?? "stream")"])

        let touched = TouchedTransactions()
        let channel = if case .folder = input { "folder" } else { "stream" }
        let signals = SignalsCollector(configuration: configuration.protect, store: store, channel: channel, logger: logger)
        let risk = riskEvaluator.map { RiskEvaluations(evaluator: $0, store: store, logger: logger) }
        let responses = ResponseBuilder(omitImages: omitImages)
        let inputEnds = InputEnds(store: store, signals: signals, logger: logger, now: now)
        let scannerConfiguration = BarcodeScanner.Configuration(
            symbologies: configuration.symbologies, decoder: .init(maxPixels: configuration.maxPixels))

        let line = Line(
            intake: Intake(configuration: configuration, store: store, touched: touched, inputEnds: inputEnds, logger: logger, now: now),
            decode: DecodeStage(scanner: scannerConfiguration, allowedPaths: FileConfinement(directories: configuration.allowedPaths)),
            scan: ScanStage(symbologies: configuration.symbologies, resolver: QRResolver()),
            parse: ParseStage(configuration: configuration, identity: identity, now: now),
            track: TrackStage(
                configuration: configuration, store: store, touched: touched, signals: signals, risk: risk,
                responses: responses, now: now),
            submit: SubmitStage(
                store: store, submitter: submitter, signals: signals, risk: risk, responses: responses,
                claims: SubmissionClaims(lease: configuration.submitter.claimLease), now: now),
            reporter: Reporter(
                input: input, folderJobs: folderJobs, total: total, signals: signals, touched: touched,
                inputEnds: inputEnds,
                reviews: ReviewRecorder(
                    store: store, limits: configuration.review, allowedPaths: FileConfinement(directories: configuration.allowedPaths),
                    logger: logger),
                logger: logger, emit: emit),
            configuration: configuration, scanner: scannerConfiguration, logger: logger)

        let summary = await withTaskGroup(of: RunSummary?.self) { group -> RunSummary in
            if case .queue(let queueInput) = input {
                group.addTask {
                    await line.renewLeases(queueInput)
                    return nil
                }
            }
            group.addTask {
                await line.feed(input, folderJobs: folderJobs, stop: stop)
                return nil
            }
            group.addTask {
                await line.runStages()
                return nil
            }
            group.addTask {
                await line.reporter.report(from: line.toReport)
            }
            var summary = RunSummary()
            while let result = await group.next() {
                guard let result else { continue }
                summary = result
                group.cancelAll()  // everything reported: the heartbeat, if any, stops
            }
            return summary
        }

        var result = summary
        if case .folder = input, !stop.isStopped, !Task.isCancelled {
            await inputEnds.skipMissingOptionalDocuments(await touched.notEnded, reason: "end of batch")
        }
        let reported = summary.documents + summary.givenBack
        result.unfinished = max(0, (total ?? 0) - reported, line.intake.taken.value - reported)
        let ids = await touched.ids
        result.transactions = ids.count
        // Asked even when the run was cancelled (a drain cut short): the summary says what the store holds.
        let counted = await Task.detached { [store] () async -> Result<Int, StoreError> in
            do throws(StoreError) { return .success(try await store.count(of: ids, status: .completed)) } catch { return .failure(error) }
        }.value
        switch counted {
        case .success(let completed): result.completed = completed
        case .failure(let error): logger.warning("could not count the completed transactions", metadata: ["error": "\(error.message)"])
        }
        result.elapsed = Date().timeIntervalSince(started)
        logger.info("run finished", metadata: ["documents": "\(result.documents)", "failed": "\(result.failed)"])
        return result
    }

    /// The stages of one run and the queues between them, each bounded in documents and bytes.
    struct Line: Sendable {
        let intake: Intake
        let decode: DecodeStage
        let scan: ScanStage
        let parse: ParseStage
        let track: TrackStage
        let submit: SubmitStage
        let reporter: Reporter
        let configuration: PipelineConfiguration
        let scanner: BarcodeScanner.Configuration
        let logger: Logger
        let toDecode: StageQueue<InFlight<DocumentJob>>
        let toScan: StageQueue<InFlight<DecodedDocument>>
        let toParse: StageQueue<InFlight<ScannedDocument>>
        let toTrack: StageQueue<InFlight<ParsedDocument>>
        let toSubmit: StageQueue<InFlight<DocumentToSubmit>>
        let toReport: StageQueue<DocumentOutcome>

        init(
            intake: Intake, decode: DecodeStage, scan: ScanStage, parse: ParseStage, track: TrackStage, submit: SubmitStage,
            reporter: Reporter, configuration: PipelineConfiguration, scanner: BarcodeScanner.Configuration, logger: Logger
        ) {
            (self.intake, self.decode, self.scan, self.parse, self.track, self.submit) = (intake, decode, scan, parse, track, submit)
            (self.reporter, self.configuration, self.scanner, self.logger) = (reporter, configuration, scanner, logger)
            toDecode = StageQueue(limits: configuration.decode.limits)
            toScan = StageQueue(limits: configuration.scan.limits)
            toParse = StageQueue(limits: configuration.scan.limits)
            toTrack = StageQueue(limits: configuration.track.limits)
            toSubmit = StageQueue(limits: configuration.submit.limits)
            toReport = StageQueue(limits: configuration.submit.limits)
        }

        /// Takes input until it ends or `stop` is set, then closes the line's entrance.
        func feed(_ input: PipelineInput, folderJobs: [Result<DocumentJob, IngestFailure>], stop: StopSignal) async {
            await PipelineRunner.stopOnSignal(stop) {
                do {
                    try await intake.feed(input, folderJobs: folderJobs, into: .init(decode: toDecode, report: toReport))
                } catch {
                    logger.info("intake ended early", metadata: ["reason": "\(type(of: error))"])
                }
            }
            toDecode.finish()
        }

        /// Renews the leases of the claimed documents until the run cancels this.
        func renewLeases(_ queueInput: QueueInput) async {
            for await _ in AsyncTimerSequence(interval: queueInput.lease / 3, clock: .continuous) {
                do throws(StoreError) {
                    try await queueInput.queue.heartbeat(owner: queueInput.owner, items: queueInput.held.all, lease: queueInput.lease)
                } catch {
                    logger.warning("could not renew the work leases", metadata: ["error.code": "\(error.failureCode)"])
                }
            }
        }

        /// Every stage side by side; each closes the queue after it when its input is drained.
        func runStages() async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await decodeStage() }
                group.addTask { await scanStage() }
                group.addTask { await parseStage() }
                group.addTask { await trackStage() }
                group.addTask { await submitStage() }
            }
        }

        private func decodeStage() async {
            await PipelineRunner.stage("decode", workers: configuration.decode.workers, from: toDecode) {
                { item in
                    try await PipelineRunner.pass(
                        item,
                        through: { job throws(StageStop) in
                            do throws(DocumentFailure) { return try decode(job) } catch { throw .failed(error) }
                        }, to: toScan, report: toReport)
                }
            }
            toScan.finish()
        }

        private func scanStage() async {
            // The scanners bound the stage's CPU work; the stage holds more documents than that, so that documents
            // waiting for another's reading of their folder's QR do not keep the scanners from the rest.
            let scanners = ScannerPool(count: configuration.scan.workers, configuration: scanner)
            await PipelineRunner.stage("scan", workers: ScanStage.documentsInStage(scanners: scanners.count), from: toScan) {
                { item in
                    try await PipelineRunner.pass(
                        item,
                        through: { document throws(StageStop) in
                            try await scan(document, scanners: scanners)
                        }, to: toParse, report: toReport)
                }
            }
            toParse.finish()
        }

        private func parseStage() async {
            await PipelineRunner.stage("parse", workers: 1, from: toParse) {
                { item in
                    try await PipelineRunner.pass(
                        item,
                        through: { document throws(StageStop) in
                            do throws(DocumentFailure) { return try parse(document) } catch { throw .failed(error) }
                        }, to: toTrack, report: toReport)
                }
            }
            toTrack.finish()
        }

        private func trackStage() async {
            await PipelineRunner.stage("track", workers: configuration.track.workers, from: toTrack) {
                { item in
                    let tracked: TrackedDocument
                    do throws(DocumentFailure) {
                        tracked = try await track(item.value, input: item.input)
                    } catch {
                        try await toReport.send(item.failed(error))
                        return
                    }
                    switch tracked {
                    case .submit(let document): try await toSubmit.send(item.with(document), weight: document.byteCount)
                    case .finished(let outcome): try await toReport.send(outcome, weight: tracked.byteCount)
                    }
                }
            }
            toSubmit.finish()
        }

        private func submitStage() async {
            await PipelineRunner.stage("submit", workers: configuration.submit.workers, from: toSubmit) {
                { item in
                    do {
                        var outcome = try await submit(item.value, input: item.input)
                        // A refused submission is answered, not thrown: it leaves its inputs for review all the same.
                        if outcome.failure != nil { outcome.failedInput = item.value.failedInput }
                        try await toReport.send(outcome)
                    } catch StageStop.failed(let failure) {
                        try await toReport.send(item.failed(failure))
                    }
                }
            }
            toReport.finish()
        }
    }

    /// Runs `body` until it returns or `stop` is set, whichever comes first; then cancels the other.
    static func stopOnSignal(_ stop: StopSignal, _ body: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await body() }
            group.addTask { await stop.stopped() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Runs `workers` copies of a stage; `makeWork` is called once per worker, inside its task, so that a worker
    /// can own state that must not be shared (a ZBar scanner). A worker ends when its input queue is drained or
    /// when the run is cancelled.
    /// Each document's time in the stage and the depth of the queue before it are metrics, labelled by `name`.
    static func stage<In: StageValue>(
        _ name: String, workers: Int, from input: StageQueue<InFlight<In>>,
        makeWork: @escaping @Sendable () -> (InFlight<In>) async throws -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(workers, 1) {
                group.addTask {
                    let work = makeWork()
                    let duration = Metrics.Timer(label: "verify_stage_duration_seconds", dimensions: [("stage", name)])
                    let depth = Gauge(label: "verify_queue_depth", dimensions: [("stage", name)])
                    while let item = await input.receive() {
                        depth.record(input.depth)
                        let start = ContinuousClock.now
                        defer {
                            let elapsed = start.duration(to: .now).components
                            duration.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
                        }
                        do {
                            try await work(item)
                        } catch {
                            return  // cancelled: the document is dropped unrecorded, as the shutdown rules say
                        }
                    }
                }
            }
        }
    }

    /// One document through one stage: its next value goes to `next`, its failure to the report.
    static func pass<In: StageValue, Out: StageValue>(
        _ item: InFlight<In>, through stage: (In) async throws(StageStop) -> Out,
        to next: StageQueue<InFlight<Out>>, report: StageQueue<DocumentOutcome>
    ) async throws {
        do {
            let value = try await stage(item.value)
            try await next.send(item.with(value), weight: value.byteCount)
        } catch StageStop.failed(let failure) {
            try await report.send(item.failed(failure))
        }
    }
}
