import Application
import ArgumentParser
import DocumentOutcomes
import Foundation
import Logging
import Pipeline
import TransactionStore

/// Options of every command that reads a pipeline file and writes to the store: `enqueue`, `run`, `stream`, `worker`.
struct ConfigurationOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("The pipeline file (YAML, see Pipelines/); built-in defaults when omitted.", valueName: "file"),
        completion: .file(extensions: ["yaml", "yml"]))
    var pipeline: String?

    @OptionGroup var store: StoreOptions

    @OptionGroup var log: LogOptions

    @Option(
        name: .customLong("allow-path"),
        help: ArgumentHelp(
            "A directory whose image files stream lines may name (frontImagePath, backImagePath, selfiePath); repeat for more. Adds to ingest.allowedPaths.",
            valueName: "dir"),
        completion: .directory)
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
        // `--key-env` names this run's key variable: the bearer token must not come from it either.
        if let variable = configuration.submitter.tokenEnv, variable == store.keyEnv {
            throw CommandFailure(
                "'submitter.tokenEnv' names \(variable), which holds a secret of the store (--key-env): give the token a variable of its own"
            )
        }
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

    func makeLogger() -> Logger { log.makeLogger() }

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

    @Flag(help: "Print the base64 images (frontImage, backImage, selfie) in the NDJSON results (left out by default).")
    var includeImages = false

    /// The default since images are left out unless asked for; kept for the scripts that pass it.
    @Flag(help: .hidden)
    var omitImages = false

    @Option(
        help: ArgumentHelp(
            "text (a readable line per document, no values) or ndjson (CONTRACT §6); default: text on a terminal, ndjson to a pipe or a file.",
            valueName: "format"))
    var format: ResultFormat?

    @Option(
        help: ArgumentHelp(
            "Seconds the documents in flight get to finish after SIGINT or SIGTERM; SIGQUIT ends the run at once.",
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
        guard !(includeImages && omitImages) else { throw ValidationError("--include-images and --omit-images contradict each other") }
        guard shutdownGrace >= 0, shutdownGrace <= 3600 else {
            throw ValidationError("--shutdown-grace must be from 0 to 3600 seconds")
        }
        if let metricsBind { _ = try listen.address(metricsBind, option: "--metrics-bind") }
        _ = try listen.token(storeKeyVariable: store.keyEnv)
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

    /// The application these options describe, reading from `source`.
    func application() throws -> PipelineApplication {
        let configuration = try configuration()
        var application = PipelineApplication(
            configuration: configuration, store: try store.location(), encryption: try storeEncryption(configuration),
            logger: common.makeLogger())
        application.omitImages = !includeImages || omitImages
        application.shutdownGrace = shutdownGraceDuration
        application.pipelineName = common.pipeline ?? "pipeline"
        application.notices = { CommandOutput.standardError("verify-pipeline: \($0.escapingControls)\n") }
        if let metricsBind {
            let address = try listen.address(metricsBind, option: "--metrics-bind")
            application.metrics = .init(bind: address, token: try listen.token(storeKeyVariable: store.keyEnv), limits: listen.limits) { port in
                ListenOptions.announce("metrics", address, port: port)
            }
        }
        return application
    }

    /// Runs the application over `source`, writing each result as it is done (a result that cannot be written stops
    /// the intake, and `finish` reports it with exit 2), a progress bar on stderr when asked.
    func execute(
        _ source: PipelineApplication.Source, output: OutputWriter, progress: ProgressBar?
    ) async throws -> RunSummary {
        let application = try application()
        let outcome: Result<RunSummary, any Error>
        do {
            outcome = .success(
                try await application.run(source) { outcome, state in
                    defer { progress?.update(state) }
                    return await output.write(outcome)
                })
        } catch {
            outcome = .failure(error)
        }
        progress?.finish()
        try await output.finish()
        return try outcome.get()
    }
}

extension VerifyPipeline {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Process a batch folder: one subfolder per transaction (or a flat folder of images with their own QR).",
            discussion: """
                Writes one result per document to stdout or --output as each is done (a readable line on a terminal, \
                NDJSON to a pipe or a file: --format; images only with --include-images), a progress bar on stderr \
                when it is a terminal, and a one-line summary at the end. Re-running the same folder submits \
                nothing twice. Exits 0 when every document succeeded, 1 when some failed, 2 on usage or configuration errors.
                """
        )

        @Argument(help: "The batch folder.", completion: .directory)
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
            let progress = isatty(STDERR_FILENO) == 1 ? ProgressBar() : nil
            let writer = try OutputWriter(path: output, format: .resolved(options.format, output: output), progress: progress)
            let summary: RunSummary
            do {
                summary = try await options.execute(.input(FolderSource(URL(fileURLWithPath: folder))), output: writer, progress: progress)
            } catch {
                await writer.discard()
                throw error
            }
            try await summary.report(readerGone: writer.readerGone)
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
            let writer = try OutputWriter(path: nil, format: .resolved(options.format, output: nil))
            let summary = try await options.execute(.input(LineSource(fileDescriptor: STDIN_FILENO)), output: writer, progress: nil)
            try await summary.report(readerGone: writer.readerGone)
        }
    }
}

extension RunSummary {
    var line: String {
        "verify-pipeline: \(Self.count(documents, "document")) (\(failed) failed, \(alreadySubmitted) already submitted), "
            + "\(Self.count(transactions, "transaction")) (\(completed) completed) in \(String(format: "%.1f", elapsed)) s"
            + (unfinished > 0 ? "; stopped before \(unfinished) more were done: run it again to finish them" : "")
    }

    /// 0 when every document of the input succeeded; 1 when some failed or were left unfinished by a stop.
    var exitCode: ExitCode? { failed > 0 || unfinished > 0 ? ExitCode(1) : nil }

    static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    /// The summary on stderr and the exit status; where the results' reader went away (`run … | head`), neither: the
    /// command ends quietly with 141, as a process a closed pipe ends (128 + SIGPIPE).
    func report(readerGone: Bool) throws {
        if readerGone { throw ExitCode(141) }
        CommandOutput.standardError(line + "\n")
        if let exitCode { throw exitCode }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension FileManager {
    func isReadableDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
