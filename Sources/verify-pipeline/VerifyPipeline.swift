import Application
import ArgumentParser
import Foundation
import ImageDecoding
import Logging
import Metrics
import OperatorView
import Pipeline
import Prometheus
import TransactionStore
import VerifyModel

@main
struct VerifyPipeline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-pipeline",
        abstract: "Turns document images into PingOne-Verify-style document submissions.",
        version: ToolVersion.current,
        subcommands: [Run.self, Stream.self, Status.self, Review.self, Scan.self, Enqueue.self, Worker.self, StoreCommand.self, Serve.self, Plan.self]
    )

    /// CONTRACT §6: usage and configuration errors exit 2 with a one-line reason (ArgumentParser's default is 64).
    static func main() async {
        ImageMemory.reuseImageBuffers()
        // A write past the file-size limit (ulimit -f) or to a closed pipe is an error the writer reports, with
        // exit 2, instead of a signal that kills the process mid-line.
        signal(SIGXFSZ, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // Metrics are set up once: the pipeline's counters, timers and gauges go to the registry /metrics writes out.
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: OperatorMetrics.registry))
        do {
            var command = try parseAsRoot()
            // Logging, once the command line says which format: libraries only take the Logger they are given.
            LogOptions.bootstrap((command as? any LoggingCommand)?.log.logFormat ?? .text)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as any Error & CustomStringConvertible where Self.isCommandError(error) {
            // One line, exit 2: a command that cannot do what it was asked (a store that does not open, a
            // configuration or a bind address that is wrong).
            CommandOutput.fail(error.description)
            Foundation.exit(2)
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure else { exit(withError: error) }
            CommandOutput.standardError("verify-pipeline: \(message(for: error))\n")
            Foundation.exit(2)
        }
    }

    /// The errors a command ends on with their own one-line description and exit 2.
    static func isCommandError(_ error: any Error) -> Bool {
        error is CommandFailure || error is StoreError || error is ConfigurationError || error is OperatorViewError
    }
}
