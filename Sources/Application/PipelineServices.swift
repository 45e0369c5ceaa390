import DocumentOutcomes
import Foundation
import Logging
import OperatorView
import Pipeline
import ServiceLifecycle
import Synchronization
import TransactionStore
import VerifyModel

/// Applies the retention policy every `interval` while a worker runs, until it shuts down.
struct RetentionService: Service {
    let retention: Retention
    /// Failed documents' inputs kept for review go after this, whatever the retention mode.
    let reviewInputsMaxAge: TimeInterval
    let interval: TimeInterval
    let store: TransactionStore
    let logger: Logger
    let notices: @Sendable (String) -> Void

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
                await PipelineApplication.applyRetention(
                    retention, reviewInputsMaxAge: reviewInputsMaxAge, to: store, logger: logger, notices: notices)
            }
        }
    }
}

/// The run over the store, as a service beside the store's connection pool: `body` opens the store once the pool runs
/// and runs the pipeline; its summary, or why there is none, is kept for the caller.
final class RunOverStore: Service, Sendable {
    let body: @Sendable () async throws -> RunSummary
    private let outcome = Mutex<Result<RunSummary, any Error>?>(nil)

    init(_ body: @escaping @Sendable () async throws -> RunSummary) {
        self.body = body
    }

    func run() async {
        let result: Result<RunSummary, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
    }

    /// The run's summary, or the error that ended it; `CommandFailure` when it never finished.
    func summary() throws -> RunSummary {
        guard let outcome = outcome.withLock({ $0 }) else { throw CommandFailure("the run did not finish") }
        return try outcome.get()
    }
}

/// The pipeline run as a long-running service.
final class PipelineService: Service, Sendable {
    let runner: PipelineRunner
    let input: any DocumentSource
    let emit: @Sendable (DocumentOutcome, RunProgress) async -> Void
    /// Ends the intake: on SIGINT/SIGTERM, or when the caller says so.
    let stop: StopSignal
    /// Servers that must listen before the intake reads anything.
    let listeners: [ListeningServer]
    let logger: Logger
    private let result = Mutex<(RunSummary?, String?)>((nil, nil))

    init(
        runner: PipelineRunner, input: any DocumentSource, stop: StopSignal, listeners: [ListeningServer] = [], logger: Logger,
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
            do {
                let summary = try await runner.run(input, stop: stop, emit: emit)
                result.withLock { $0.0 = summary }
            } catch {
                let message = (error as? any CodedError)?.message ?? "the run could not start"
                result.withLock { $0.1 = message }
            }
        } onGracefulShutdown: { [logger] in
            logger.notice("shutting down: the intake is stopped; the documents in flight have the grace period to finish")
            stop.stop()
        }
    }
}
