import Application
import DocumentOutcomes
import Foundation
import Logging
import Pipeline
import Protect
import Synchronization
import TransactionStore
import TransactionViews

/// The parts of a test that set a store up or read what it holds, done in-process through the code the commands
/// themselves call: the composition root for a run, the presentation module for what `status` prints. A subprocess
/// stays where the command line is what is tested (exit codes, messages, signals, several processes).
enum InProcess {
    /// `run FOLDER --store STORE [--pipeline FILE] --omit-images` through `PipelineApplication`, with the tests' store
    /// key: the summary and the result lines, byte for byte as the command prints them.
    static func run(_ folder: String, store: String, pipeline: String? = nil) async throws -> (summary: RunSummary, lines: [String]) {
        let configuration = try pipeline.map { try PipelineConfiguration(contentsOf: URL(fileURLWithPath: $0)) } ?? PipelineConfiguration()
        // The tests' key is a valid one: `from` returns it.
        let key = try KeyEncryptionKey.from(
            variable: "VERIFY_PIPELINE_STORE_KEY", environment: ["VERIFY_PIPELINE_STORE_KEY": CLIRunner.testStoreKey])!
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var application = PipelineApplication(
            configuration: configuration, store: try StoreLocation(parsing: store),
            encryption: configuration.storeEncryption.enabled ? .required(key) : .ifEncrypted(key), logger: logger)
        application.omitImages = true
        let lines = Mutex<[String]>([])
        let summary = try await application.run(.input(FolderSource(URL(fileURLWithPath: folder)))) { outcome, _ in
            let line = String(decoding: TransactionViews.ResultLine(outcome).json(), as: UTF8.self)
            lines.withLock { $0.append(line) }
            return true
        }
        return (summary, lines.withLock { $0 })
    }

    /// `run` in-process as `CLIRunner` reports a command: the exit status the command would give (1 when a document
    /// failed), the result lines it would print, no stderr.
    static func outcome(_ folder: String, store: String, pipeline: String? = nil) async throws -> CLIRunner.Outcome {
        let run = try await run(folder, store: store, pipeline: pipeline)
        return CLIRunner.Outcome(status: run.summary.failed > 0 ? 1 : 0, stdout: run.lines.joined(separator: "\n"), stderr: "")
    }

    /// What `status ID` and `status ID --json` print for each of `transactions`, then what `status` prints: rendered by
    /// the presentation module the command prints with, over the store read in-process.
    static func statuses(
        _ store: String, _ transactions: some Sequence<String>, encryption: StoreEncryption = CLIRunner.storeEncryption
    ) async throws -> [String] {
        let ids = Array(transactions)
        return try await StoreLocation(parsing: store).withStore(create: false, readOnly: true, encryption: encryption) { reader in
            var shown: [String] = []
            for id in ids {
                guard let report = try await reader.report(id: id) else { throw MissingTransaction(id: id) }
                shown += [StatusText.text(report, now: Date()), StatusJSON.report(report)]
            }
            shown.append(StatusText.text(try await reader.transactions(status: nil)))
            return shown
        }
    }

    /// What `status ID --signals --json` prints, rendered in-process.
    static func signals(_ store: String, _ id: String) async throws -> String {
        try await StoreLocation(parsing: store).withStore(create: false, readOnly: true, encryption: CLIRunner.storeEncryption) { reader in
            guard let transaction = try await reader.transaction(id: id) else { throw MissingTransaction(id: id) }
            return StatusText.signals(transaction, state: try await reader.protectState(of: id, as: ProtectState.self), json: true)
        }
    }

    /// The transactions as the store lists them (most recently updated first).
    static func summaries(_ store: String, encryption: StoreEncryption = CLIRunner.storeEncryption) async throws -> [TransactionSummary] {
        try await StoreLocation(parsing: store).withStore(create: false, readOnly: true, encryption: encryption) { reader in
            try await reader.transactions(status: nil)
        }
    }

    struct MissingTransaction: Error, CustomStringConvertible {
        var id: String
        var description: String { "no transaction '\(id)' in the store" }
    }
}
