import AsyncAlgorithms
import BarcodeScanning
import DocumentOutcomes
import Foundation
import ImageDecoding
import Logging
import Metrics
import Protect
import Submission
import TransactionStore
import VerifyModel

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

    /// Runs until the source ends or `stop` is set, handing each document's outcome to `emit` as soon as it is done.
    /// Throws only when the input itself cannot be read (a missing folder) or the store cannot be asked for its secret.
    package func run(
        _ source: some DocumentSource, stop: StopSignal, emit: @escaping @Sendable (DocumentOutcome, RunProgress) async -> Void
    ) async throws -> RunSummary {
        let started = Date()
        let identity = try store.documentIdentity()
        try source.open()
        logger.info("run started", metadata: ["pipeline": "\(configuration.name)", "documents": "\(source.total.map(String.init) ?? "stream")"])

        let touched = TouchedTransactions()
        let signals = SignalsCollector(configuration: configuration.protect, store: store, channel: source.channel, logger: logger)
        let context = SourceContext(
            configuration: configuration, inputEnds: InputEnds(store: store, signals: signals, logger: logger, now: now), touched: touched,
            logger: logger)
        let line = Line(
            configuration: configuration, store: store, identity: identity, touched: touched, signals: signals,
            risk: riskEvaluator.map { RiskEvaluations(evaluator: $0, store: store, logger: logger) }, submitter: submitter,
            responses: ResponseBuilder(omitImages: omitImages), logger: logger, now: now)
        let reporter = Reporter(
            source: source, context: context, signals: signals,
            reviews: ReviewRecorder(
                store: store, limits: configuration.review, allowedPaths: FileConfinement(directories: configuration.allowedPaths), logger: logger),
            logger: logger, emit: emit)

        var summary = await withTaskGroup(of: RunSummary?.self) { group -> RunSummary in
            group.addTask {
                await source.sustain(context)
                return nil
            }
            group.addTask {
                await line.feed(source, context: context, stop: stop)
                return nil
            }
            group.addTask {
                await line.runStages()
                return nil
            }
            group.addTask { await reporter.report(from: line.toReport) }
            var summary = RunSummary()
            while let result = await group.next() {
                guard let result else { continue }
                summary = result
                group.cancelAll()  // everything reported: what runs beside the line (a heartbeat) stops
            }
            return summary
        }

        if !stop.isStopped, !Task.isCancelled { await source.ended(context) }
        let reported = summary.documents + summary.givenBack
        summary.unfinished = max(0, (source.total ?? 0) - reported, line.intake.taken.value - reported)
        let ids = await touched.ids
        summary.transactions = ids.count
        // Asked even when the run was cancelled (a drain cut short): the summary says what the store holds.
        let counted = await Task.detached { [store] () async -> Result<Int, any Error> in
            do { return .success(try await store.count(of: ids, status: .completed)) } catch { return .failure(error) }
        }.value
        switch counted {
        case .success(let completed): summary.completed = completed
        case .failure(let error): logger.warning("could not count the completed transactions", metadata: ["error.code": "\(FailureCode(of: error))"])
        }
        summary.elapsed = Date().timeIntervalSince(started)
        logger.info("run finished", metadata: ["documents": "\(summary.documents)", "failed": "\(summary.failed)"])
        return summary
    }

    /// The line: the stages of one run, in order, and the queues between them, each bounded in documents and bytes.
    /// This is the one place the stages are assembled.
    struct Line: Sendable {
        let intake: Intake
        let decode: DecodeStage
        let scan: ScanStage
        let parse: ParseStage
        let track: TrackStage
        let submit: SubmitStage
        let logger: Logger
        let toDecode: StageQueue<InFlight<DocumentJob>>
        let toScan: StageQueue<InFlight<DecodedDocument>>
        let toParse: StageQueue<InFlight<ScannedDocument>>
        let toTrack: StageQueue<InFlight<ParsedDocument>>
        let toSubmit: StageQueue<InFlight<DocumentToSubmit>>
        let toReport: StageQueue<FinishedDocument>

        init(
            configuration: PipelineConfiguration, store: TransactionStore, identity: DocumentIdentity, touched: TouchedTransactions,
            signals: SignalsCollector, risk: RiskEvaluations?, submitter: any DocumentSubmitter, responses: ResponseBuilder, logger: Logger,
            now: @escaping @Sendable () -> Date
        ) {
            let scanner = BarcodeScanner.Configuration(symbologies: configuration.symbologies, decoder: .init(maxPixels: configuration.maxPixels))
            let allowedPaths = FileConfinement(directories: configuration.allowedPaths)
            intake = Intake(configuration: configuration, store: store, touched: touched, logger: logger, now: now)
            decode = DecodeStage(scanner: scanner, allowedPaths: allowedPaths, workers: configuration.decode.workers)
            scan = ScanStage(
                symbologies: configuration.symbologies, resolver: QRResolver(),
                scanners: ScannerPool(count: configuration.scan.workers, configuration: scanner))
            parse = ParseStage(configuration: configuration, identity: identity, now: now)
            track = TrackStage(
                configuration: configuration, store: store, touched: touched, signals: signals, risk: risk, responses: responses,
                workers: configuration.track.workers, now: now)
            submit = SubmitStage(
                store: store, submitter: submitter, signals: signals, risk: risk, responses: responses,
                claims: SubmissionClaims(lease: configuration.submitter.claimLease), workers: configuration.submit.workers, now: now)
            self.logger = logger
            toDecode = StageQueue(limits: configuration.decode.limits)
            toScan = StageQueue(limits: configuration.scan.limits)
            toParse = StageQueue(limits: configuration.parse.limits)
            toTrack = StageQueue(limits: configuration.track.limits)
            toSubmit = StageQueue(limits: configuration.submit.limits)
            toReport = StageQueue(limits: configuration.report.limits)
        }

        /// Takes input until it ends or `stop` is set, then closes the line's entrance.
        func feed(_ source: some DocumentSource, context: SourceContext, stop: StopSignal) async {
            await PipelineRunner.stopOnSignal(stop) {
                do {
                    try await intake.feed(source, context: context, into: .init(decode: toDecode, report: toReport))
                } catch {
                    logger.info("intake ended early", metadata: ["reason": "\(type(of: error))"])
                }
            }
            toDecode.finish()
        }

        /// Every stage side by side; each closes the queue after it when its input is drained, the last the report's.
        func runStages() async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await decode.drive(from: toDecode, to: toScan, report: toReport) }
                group.addTask { await scan.drive(from: toScan, to: toParse, report: toReport) }
                group.addTask { await parse.drive(from: toParse, to: toTrack, report: toReport) }
                group.addTask { await track.drive(from: toTrack, to: toSubmit, report: toReport) }
                group.addTask {
                    await submit.drive(from: toSubmit, to: nil, report: toReport)
                    toReport.finish()
                }
            }
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
}
