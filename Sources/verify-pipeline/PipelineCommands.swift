import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import OperatorView
import OutboundHTTP
import Pipeline
import Protect
import ServiceLifecycle
import Submission
import Synchronization
import TransactionStore
import UnixSignals
import VerifyModel

/// Options of every command that reads a pipeline file and writes to the store: `enqueue`, `run`, `stream`, `worker`.
struct ConfigurationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The pipeline file (YAML, see Pipelines/); built-in defaults when omitted.", valueName: "file"))
    var pipeline: String?

    @OptionGroup var store: StoreOptions

    @Option(
        help: ArgumentHelp(
            "Log level on stderr: trace, debug, info, notice, warning, error, critical. Logs never hold document data.", valueName: "level"))
    var logLevel: Logger.Level = .warning

    @Option(
        name: .customLong("allow-path"),
        help: ArgumentHelp(
            "A directory whose image files stream lines may name (frontImagePath, backImagePath, selfiePath); repeat for more. Adds to ingest.allowedPaths.",
            valueName: "dir"))
    var allowedPaths: [String] = []

    func validate() throws {
        for path in allowedPaths where !FileManager.default.isReadableDirectory(path) {
            throw ValidationError("--allow-path \(path) is not a directory")
        }
    }

    /// The pipeline file's settings; with `cores`, its unset stage sizes follow them, and the sizes are logged at
    /// info level. A problem with the file is a configuration error (exit 2).
    func configuration(sizedFor cores: Int? = nil) throws -> PipelineConfiguration {
        var configuration = try Self.load(pipeline)
        if let cores {
            configuration = configuration.sized(forCores: cores)
            let plan = configuration.stagePlan.map { "\($0.stage) \($0.workers)/\($0.queue)" }.joined(separator: ", ")
            makeLogger().info("stages (workers/queue)", metadata: ["stages": "\(plan)", "cores": "\(cores)"])
        }
        configuration.allowedPaths += allowedPaths
        return configuration
    }

    /// The pipeline file at `path`, or the built-in defaults; a file that cannot be used is exit 2 with its reason.
    static func load(_ path: String?) throws -> PipelineConfiguration {
        guard let path else { return PipelineConfiguration() }
        do {
            return try PipelineConfiguration(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CommandFailure(error.description)
        }
    }

    func makeLogger() -> Logger {
        var logger = Logger(label: "verify-pipeline")
        logger.logLevel = logLevel
        return logger
    }

    /// How the command opens the store: sealing what it writes unless the pipeline turns encryption off (an encrypted
    /// store then still opens with its key). The key comes from the variable the pipeline names, never from the file.
    func storeEncryption(_ configuration: PipelineConfiguration) throws -> StoreEncryption {
        let settings = configuration.storeEncryption
        guard settings.enabled else { return .ifEncrypted(try store.key(default: settings.keyEnv)) }
        guard let key = try store.key(default: settings.keyEnv) else {
            let variable = store.keyEnv ?? settings.keyEnv
            throw CommandFailure(
                """
                the store seals identity data (store.encryption) and \(variable) is not set: set it to a key-encryption key, \
                32 random bytes in base64 (openssl rand -base64 32) kept outside the repository, or set store.encryption.enabled: false
                """)
        }
        return .required(key)
    }
}

/// Options of the commands that run the pipeline: `run`, `stream` and `worker`.
struct PipelineOptions: ParsableArguments {
    @OptionGroup var common: ConfigurationOptions

    @Flag(help: "Leave the base64 images (frontImage, backImage, selfie) out of the printed results.")
    var omitImages = false

    @Option(
        help: ArgumentHelp(
            "Seconds the documents in flight get to finish after SIGINT or SIGTERM; a second signal ends the run at once.",
            valueName: "seconds"))
    var shutdownGrace: Double = 10

    @Option(
        name: .customLong("metrics-bind"),
        help: ArgumentHelp(
            "Serve /metrics, /healthz and /readyz on HOST:PORT while the command runs (Prometheus text).", valueName: "host:port"))
    var metricsBind: String?

    @OptionGroup var listen: ListenOptions

    @Option(
        help: ArgumentHelp(
            "Cores to size the stages for, where the pipeline file does not set their workers (default: the cores this process may use).",
            valueName: "n"))
    var jobs: Int?

    func validate() throws {
        guard (jobs ?? 1) >= 1, (jobs ?? 1) <= 1024 else { throw ValidationError("--jobs must be from 1 to 1024") }
        guard shutdownGrace >= 0, shutdownGrace <= 3600 else {
            throw ValidationError("--shutdown-grace must be from 0 to 3600 seconds")
        }
        if let metricsBind { _ = try listen.address(metricsBind, option: "--metrics-bind") }
        _ = try listen.token()
    }

    var store: StoreOptions { common.store }
    var shutdownGraceDuration: Duration { .milliseconds(Int64(shutdownGrace * 1000)) }

    /// The pipeline file's settings, its unset stage sizes following `--jobs` or the cores this process may use.
    func configuration() throws -> PipelineConfiguration {
        try common.configuration(sizedFor: jobs ?? MachineCores.allowed())
    }

    func storeEncryption(_ configuration: PipelineConfiguration) throws -> StoreEncryption {
        try common.storeEncryption(configuration)
    }

    /// The metrics endpoint beside the run, when `--metrics-bind` asks for one.
    func metricsServer(_ store: TransactionStore, logger: Logger) throws -> [any Service] {
        guard let metricsBind else { return [] }
        let address = try listen.address(metricsBind, option: "--metrics-bind")
        do {
            return [
                try OperatorServer.make(
                    .metrics, store: store, bind: address, token: try listen.token(), logger: logger,
                    option: "--metrics-bind", limits: listen.limits
                ) { port in
                    ListenOptions.announce("metrics", address, port: port)
                }
            ]
        } catch let error as OperatorViewError {
            throw CommandFailure(error.description)
        }
    }

    /// Applies the pipeline's retention policy (at the end of a run, and periodically in a worker); a failure is
    /// reported, and the data stays for the next time.
    static func applyRetention(_ retention: Retention, to store: TransactionStore, logger: Logger) async {
        guard retention.mode != .none else { return }
        do {
            let outcome = try await store.purge(retention, at: Date(), dryRun: false)
            guard !outcome.transactions.isEmpty else { return }
            logger.notice(
                "identity data purged",
                metadata: [
                    "retention": "\(retention.label)", "transactions": "\(outcome.transactions.count)",
                    "documents": "\(outcome.documents)"
                ])
            CommandOutput.standardError(
                """
                verify-pipeline: purged the identity data of \(outcome.transactions.count) transactions (\(outcome.documents) documents) under \(retention.label)\n
                """)
        } catch {
            CommandOutput.fail("the retention policy could not be applied: \(error.message)")
        }
    }

    /// The pipeline's submitter. The bearer token comes from the variable the file names, never from the file.
    func submitter(_ configuration: PipelineConfiguration, client: HTTPClient, logger: Logger) throws -> any DocumentSubmitter {
        let settings = configuration.submitter
        guard settings.kind == .http, let endpoint = settings.endpoint else { return LocalSubmitter() }
        var token: String?
        if let variable = settings.tokenEnv {
            guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
                throw CommandFailure("\(common.pipeline ?? "pipeline"): 'submitter.tokenEnv' names \(variable), which is not set")
            }
            token = value
        }
        return HTTPSubmitter(
            client: client,
            configuration: .init(
                endpoint: endpoint, bearerToken: token, timeoutSeconds: settings.timeoutSeconds,
                maxAttempts: settings.retry.maxAttempts, initialBackoffMs: settings.retry.initialBackoffMs,
                maxBackoffMs: settings.retry.maxBackoffMs), logger: logger)
    }

    func riskEvaluator(_ configuration: PipelineConfiguration, client: HTTPClient) -> RiskEvaluator? {
        let protect = configuration.protect
        guard protect.enabled, let host = protect.customHost.flatMap(URL.init(string:)), let envId = protect.envId else { return nil }
        return RiskEvaluator(client: client, host: host, envId: envId, timeoutSeconds: configuration.submitter.timeoutSeconds)
    }

    /// The command's logger at the chosen level (the logging system itself is set up once, in `main`).
    func makeLogger() -> Logger { common.makeLogger() }

    /// Runs `body` with the HTTP client that submissions and Protect's calls go through (no redirects followed,
    /// certificates verified, `submitter.caFile` trusted), shut down when `body` returns.
    func withHTTPClient<T>(_ configuration: PipelineConfiguration, _ body: (HTTPClient) async throws -> T) async throws -> T {
        let settings: HTTPClient.Configuration
        do {
            settings = try OutboundHTTP.configuration(caFile: configuration.submitter.caFile)
        } catch {
            throw CommandFailure("\(common.pipeline ?? "pipeline"): 'submitter.caFile': \(error.description)")
        }
        return try await HTTPClient.withHTTPClient(configuration: settings) { client in try await body(client) }
    }

    /// Runs the pipeline over `input` with the pipeline file's settings, the store open for the whole run.
    func execute(_ input: PipelineInput, output: OutputWriter, showProgress: Bool) async throws -> RunSummary {
        let configuration = try configuration()
        let encryption = try storeEncryption(configuration)
        let logger = makeLogger()
        return try await withHTTPClient(configuration) { client in
            let submitter = try submitter(configuration, client: client, logger: logger)
            let riskEvaluator = riskEvaluator(configuration, client: client)
            let omitImages = omitImages, shutdownGrace = self.shutdownGraceDuration
            let run: @Sendable (TransactionStore) async throws -> RunSummary = { store in
                let runner = PipelineRunner(
                    configuration: configuration, store: store, submitter: submitter, logger: logger,
                    omitImages: omitImages, riskEvaluator: riskEvaluator)
                let summary = try await PipelineOptions.serve(
                    runner, input: input, output: output, showProgress: showProgress,
                    shutdownGrace: shutdownGrace, logger: logger,
                    alongside: try metricsServer(store, logger: logger))
                await PipelineOptions.applyRetention(configuration.retention, to: store, logger: logger)
                return summary
            }
            return try await store.withStore(create: true, encryption: encryption, logger: logger, run)
        }
    }

    /// Runs the pipeline as a service: SIGINT or SIGTERM stops the intake and gives the documents in flight
    /// `--shutdown-grace` seconds to finish; then, or at a second signal, the run is cancelled: whatever was not
    /// finished is left unrecorded for a later run. The output is flushed and the summary printed either way.
    static func serve(
        _ runner: PipelineRunner, input: PipelineInput, output: OutputWriter, showProgress: Bool,
        shutdownGrace: Duration, logger: Logger, alongside: [any Service] = []
    ) async throws -> RunSummary {
        let progress = showProgress ? ProgressBar() : nil
        let stop = StopSignal()
        // A server beside the run listens before any input is read: a busy port ends the command at once.
        let listeners = alongside.compactMap { $0 as? ListeningServer }
        let service = PipelineService(runner: runner, input: input, stop: stop, listeners: listeners, logger: logger) { outcome, state in
            // A result that cannot be written (a full disk) stops the intake as SIGTERM would: documents in flight
            // finish, and `finish()` reports the error with exit 2.
            if await !output.write(outcome) { stop.stop() }
            progress?.update(state)
        }
        // The group shuts its services down one at a time, last listed first: the pipeline drains while the metrics
        // server (`/metrics`, `/readyz`) still answers and a second signal can still cut the drain short.
        var configuration = ServiceGroupConfiguration(
            services: alongside.map { .init(service: $0) } + [
                .init(service: SecondSignal(), failureTerminationBehavior: .cancelGroup),
                .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownGrace
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch {
            logger.notice("the run was cut short", metadata: ["reason": "\(error)"])
        }
        progress?.finish()
        do {
            try await output.finish()
        } catch {
            throw CommandFailure(error.description)
        }
        guard let summary = service.summary else {
            throw CommandFailure(listeners.lazy.compactMap(\.failure).first?.description ?? service.inputFailure ?? "the run did not finish")
        }
        return summary
    }
}

/// Applies the retention policy every `interval` while a worker runs, until it shuts down.
struct RetentionService: Service {
    let retention: Retention
    let interval: TimeInterval
    let store: TransactionStore
    let logger: Logger

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
                await PipelineOptions.applyRetention(retention, to: store, logger: logger)
            }
        }
    }
}

/// Exits at once, as safely as a graceful shutdown, when SIGINT or SIGTERM arrives a second time: the first
/// starts the graceful shutdown (the service group's own signals); this one throws at the second, and the
/// group then cancels the pipeline. (service-lifecycle's own `cancellationSignals` cannot say this: a signal may
/// be a graceful-shutdown signal or a cancellation signal, not the first and then the second.)
struct SecondSignal: Service {
    struct Received: Error, CustomStringConvertible {
        var description: String { "a second signal" }
    }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        try await cancelWhenGracefulShutdown {
            var count = 0
            for await _ in signals {
                count += 1
                if count == 2 { throw Received() }
            }
        }
    }
}

/// The pipeline run as a long-running service.
final class PipelineService: Service, Sendable {
    let runner: PipelineRunner
    let input: PipelineInput
    let emit: @Sendable (DocumentOutcome, RunProgress) async -> Void
    /// Ends the intake: on SIGINT/SIGTERM, or when the caller says so.
    let stop: StopSignal
    /// Servers that must listen before the intake reads anything.
    let listeners: [ListeningServer]
    let logger: Logger
    private let result = Mutex<(RunSummary?, String?)>((nil, nil))

    init(
        runner: PipelineRunner, input: PipelineInput, stop: StopSignal, listeners: [ListeningServer] = [], logger: Logger,
        emit: @escaping @Sendable (DocumentOutcome, RunProgress) async -> Void
    ) {
        self.runner = runner
        self.input = input
        self.stop = stop
        self.listeners = listeners
        self.logger = logger
        self.emit = emit
    }

    var summary: RunSummary? { result.withLock { $0.0 } }
    var inputFailure: String? { result.withLock { $0.1 } }

    func run() async throws {
        for listener in listeners {
            if case .failure(let error) = await listener.listening() {
                result.withLock { $0.1 = error.description }
                return
            }
        }
        let stop = stop
        await withGracefulShutdownHandler {
            do throws(DocumentFailure) {
                let summary = try await runner.run(input, stop: stop, emit: emit)
                result.withLock { $0.0 = summary }
            } catch {
                result.withLock { $0.1 = error.message }
            }
        } onGracefulShutdown: { [logger] in
            logger.notice("shutting down: the intake is stopped; the documents in flight have the grace period to finish")
            stop.stop()
        }
    }
}

extension VerifyPipeline {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Process a batch folder: one subfolder per transaction (or a flat folder of images with their own QR).",
            discussion: """
                Writes one JSON result per document (NDJSON) to stdout or --output as each is done, a progress bar on \
                stderr when it is a terminal, and a one-line summary at the end. Re-running the same folder submits \
                nothing twice. Exits 0 when every document succeeded, 1 when some failed, 2 on usage or configuration errors.
                """
        )

        @Argument(help: "The batch folder.")
        var folder: String

        @Option(
            help: ArgumentHelp(
                "Write the NDJSON results to this file (a regular file, replaced when the run ends) instead of stdout; - is stdout.",
                valueName: "file"))
        var output: String?

        @OptionGroup var options: PipelineOptions

        func run() async throws {
            guard FileManager.default.fileExists(atPath: folder) else {
                throw CommandFailure("no folder at \(folder)")
            }
            let writer: OutputWriter
            do {
                writer = try OutputWriter(path: output)
            } catch {
                throw CommandFailure(error.description)
            }
            let summary: RunSummary
            do {
                summary = try await options.execute(
                    .folder(URL(fileURLWithPath: folder)), output: writer,
                    showProgress: isatty(STDERR_FILENO) == 1)
            } catch {
                await writer.discard()
                throw error
            }
            CommandOutput.standardError(summary.line + "\n")
            if summary.failed > 0 { throw ExitCode(1) }
        }
    }

    struct Stream: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Process NDJSON documents from stdin, writing one result line per input line as soon as it is done.",
            discussion: """
                Each line: {"id", "qr" or "transactionId", "type", "frontImage"/"backImage"/"selfie" (base64) or \
                "frontImagePath"/"backImagePath"/"selfiePath", "mrz", "email", "phone", "fields", "skip"}. A malformed \
                line yields an error line and the stream goes on.
                """
        )

        @OptionGroup var options: PipelineOptions

        func run() async throws {
            let summary = try await options.execute(
                .lines(fileDescriptor: STDIN_FILENO), output: try OutputWriter(path: nil),
                showProgress: false)
            CommandOutput.standardError(summary.line + "\n")
            if summary.failed > 0 { throw ExitCode(1) }
        }
    }
}

extension RunSummary {
    var line: String {
        "verify-pipeline: \(documents) documents (\(failed) failed, \(alreadySubmitted) already submitted), "
            + "\(transactions) transactions (\(completed) completed) in \(String(format: "%.1f", elapsed)) s"
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension FileManager {
    func isReadableDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
