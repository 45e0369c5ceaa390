import Application
import ArgumentParser
import DocumentOutcomes
import Foundation
import Pipeline
import TransactionStore
import VerifyModel
import WorkQueues

extension VerifyPipeline {
    struct Enqueue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a batch folder's documents, or NDJSON documents from stdin ('-'), in the shared work queue.",
            discussion: """
                Needs a PostgreSQL store (--store postgres://USER@HOST:PORT/DATABASE). Workers on any machine then process \
                them with `verify-pipeline worker`; paths in the jobs must be readable at the same place on the workers. \
                Inputs that cannot be queued are printed as error lines; exits 1 when there were any.
                """
        )

        @Argument(help: "The batch folder, or '-' for NDJSON on stdin.", completion: .directory)
        var input: String

        @OptionGroup var options: ConfigurationOptions

        func run() async throws {
            let configuration = try options.configuration()
            let source: any DocumentSource = input == "-" ? LineSource(fileDescriptor: STDIN_FILENO) : FolderSource(URL(fileURLWithPath: input))
            if input != "-", !FileManager.default.fileExists(atPath: input) {
                throw CommandFailure("no folder at \(input)")
            }
            let output = try OutputWriter(path: nil)
            let encryption = try options.storeEncryption(configuration)
            let logger = options.makeLogger()
            let refused: Int = try await options.store.withWorkQueue(create: true, encryption: encryption, logger: logger) {
                store, queue in
                let enqueuer = Enqueuer(configuration: configuration, store: store, queue: queue, logger: logger)
                let (batch, queued, refused) = try await enqueuer.enqueue(source)
                for outcome in refused { await output.write(outcome) }
                CommandOutput.standardError(
                    "verify-pipeline: \(RunSummary.count(queued, "document")) queued in batch \(batch), \(refused.count) refused\n")
                return refused.count
            }
            try await output.finish()
            if refused > 0 { throw ExitCode(1) }
        }
    }

    struct Worker: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Process documents from the shared work queue; run any number of workers, on any machine.",
            discussion: """
                Claims documents with SELECT ... FOR UPDATE SKIP LOCKED and holds them with a lease it renews; a document \
                whose worker died is claimed again once its lease runs out. Writes one result line per document it \
                processed. Runs until SIGINT/SIGTERM, or with --exit-when-empty until every queued document is done.
                """
        )

        @Flag(help: "Exit once every document in the queue is done.")
        var exitWhenEmpty = false

        @Option(help: ArgumentHelp("Seconds a claim lasts without a heartbeat before others may take the document.", valueName: "seconds"))
        var leaseSeconds: Int = 30

        @OptionGroup var options: PipelineOptions

        func validate() throws {
            guard leaseSeconds >= 2 else { throw ValidationError("--lease-seconds must be at least 2") }
        }

        func run() async throws {
            let owner = "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
            let writer = try OutputWriter(path: nil, format: .resolved(options.format, output: nil))
            let summary = try await options.execute(
                .queue(owner: owner, lease: .seconds(leaseSeconds), exitWhenEmpty: exitWhenEmpty), output: writer, progress: nil)
            if await writer.readerGone { throw ExitCode(141) }
            CommandOutput.standardError(summary.line + "\n")
            if summary.failed > 0 { throw ExitCode(1) }
        }
    }
}
