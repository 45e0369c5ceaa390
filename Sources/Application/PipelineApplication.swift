import AsyncHTTPClient
import DocumentOutcomes
import Foundation
import Logging
import OperatorView
import OutboundHTTP
import Pipeline
import Protect
import ServiceLifecycle
import Submission
import TransactionStore
import UnixSignals
import WorkQueues

/// The one place the application is assembled: from a configuration to the services of one `ServiceGroup` — the
/// metrics server, retention, the pipeline — over the store (and, for a worker, the shared work queue) and the HTTP
/// client that submissions and Protect's calls go through. `run`, `stream` and `worker` are this with another
/// source; tests run it in-process.
package struct PipelineApplication: Sendable {
    package var configuration: PipelineConfiguration
    package var store: StoreLocation
    package var encryption: StoreEncryption
    package var logger: Logger
    /// Leave the base64 images out of the results.
    package var omitImages = false
    /// What the documents in flight get to finish after the first SIGINT or SIGTERM.
    package var shutdownGrace: Duration = .seconds(10)
    /// `/metrics`, `/healthz` and `/readyz` beside the run.
    package var metrics: MetricsEndpoint?
    /// Where the submitter's token variable is read.
    package var environment: [String: String] = ProcessInfo.processInfo.environment
    /// The pipeline file, as messages about its settings name it.
    package var pipelineName = "pipeline"
    /// Where what an operator must hear of is said (a purge, a failed one), one line each.
    package var notices: @Sendable (String) -> Void = { _ in }

    package struct MetricsEndpoint: Sendable {
        package var bind: BindAddress
        package var token: String?
        package var limits: ConnectionLimits
        /// Called once it listens, with the port.
        package var announce: @Sendable (Int) async -> Void

        package init(bind: BindAddress, token: String?, limits: ConnectionLimits, announce: @escaping @Sendable (Int) async -> Void) {
            self.bind = bind
            self.token = token
            self.limits = limits
            self.announce = announce
        }
    }

    /// Where the documents come from.
    package enum Source: Sendable {
        /// A folder or a stream of lines, into the store.
        case input(any DocumentSource)
        /// The shared work queue in the store's PostgreSQL database, as `owner`, with the retention applied every
        /// `retentionInterval` while it runs.
        case queue(owner: String, lease: Duration, exitWhenEmpty: Bool)
    }

    package init(configuration: PipelineConfiguration, store: StoreLocation, encryption: StoreEncryption, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.encryption = encryption
        self.logger = logger
    }

    /// The signals that stop the intake and let the documents in flight finish (service-lifecycle's graceful shutdown).
    package static let drainSignals: [UnixSignal] = [.sigterm, .sigint]
    /// The signal that ends a drain at once (service-lifecycle's cancellation): what was not finished is left for a
    /// later run, exactly as at the end of the grace.
    package static let stopSignals: [UnixSignal] = [.sigquit]

    /// Runs the pipeline over `source` as a service group: SIGINT or SIGTERM stops the intake and gives the documents
    /// in flight `shutdownGrace` to finish; then, or at SIGQUIT, the run is cancelled (whatever was not
    /// finished is left unrecorded for a later run). `emit` gets each outcome as it is done; false stops the intake
    /// as a signal would. `started` gets the group, to shut it down from the outside (tests). The retention policy is
    /// applied at the end. Returns the summary, or throws `CommandFailure` with why there is none.
    ///
    /// The group's first service is the store's PostgreSQL connection pool, so that it is shut down last; the second
    /// opens the store over it and runs the services beside the run and the pipeline as a group of their own, which
    /// drains when the outer one shuts down.
    package func run(
        _ source: Source, emit: @escaping @Sendable (DocumentOutcome, RunProgress) async -> Bool,
        started: @escaping @Sendable (ServiceGroup) -> Void = { _ in }
    ) async throws -> RunSummary {
        if case .queue = source, case .sqlite = store {
            throw CommandFailure(StoreError.cannotOpen(StoreLocation.workQueueRequirement).description)
        }
        return try await withHTTPClient { client in
            let submitter = try submitter(client: client)
            let riskEvaluator = riskEvaluator(client: client)
            let connection = try await StoreConnection.reaching(store, logger: logger)
            let application = RunOverStore { [self] in
                let (store, database) = try await connection.open(
                    create: true, encryption: encryption, logger: logger, neighbours: WorkItems.neighbours)
                let runner = PipelineRunner(
                    configuration: configuration, store: store, submitter: submitter, logger: logger,
                    omitImages: omitImages, riskEvaluator: riskEvaluator)
                let summary: RunSummary
                switch source {
                case .input(let input):
                    summary = try await serve(runner, input: input, emit: emit, alongside: try metricsServer(store))
                case .queue(let owner, let lease, let exitWhenEmpty):
                    guard let database else { throw StoreError.cannotOpen(StoreLocation.workQueueRequirement) }
                    let queue = try await database.workQueue(sealing: store.sealing, create: true)
                    let input = QueueInput(queue: queue, owner: owner, lease: lease, exitWhenEmpty: exitWhenEmpty)
                    let retention: [any Service] = [
                        RetentionService(
                            retention: configuration.retention, reviewInputsMaxAge: configuration.review.inputsMaxAge,
                            interval: configuration.retentionInterval, store: store, logger: logger, notices: notices)
                    ]
                    summary = try await serve(runner, input: input, emit: emit, alongside: try metricsServer(store) + retention)
                }
                await Self.applyRetention(
                    configuration.retention, reviewInputsMaxAge: configuration.review.inputsMaxAge, to: store, logger: logger,
                    notices: notices)
                return summary
            }
            // The run's own group cancels the drain at the end of the grace; this bound is for the pool's close.
            let group = connection.group(running: application, grace: shutdownGrace + .seconds(5), logger: logger)
            started(group)
            do {
                try await group.run()
            } catch {
                logger.notice("the run was cut short", metadata: ["reason": "\(error)"])
            }
            do {
                return try application.summary()
            } catch let error as StoreError {
                throw CommandFailure(error.description)
            }
        }
    }

    /// The run's group: the servers beside the run first, the pipeline last, so that it drains while they still answer.
    /// It drains when the application's group shuts down (SIGINT, SIGTERM), for `shutdownGrace` at most.
    private func serve(
        _ runner: PipelineRunner, input: any DocumentSource, emit: @escaping @Sendable (DocumentOutcome, RunProgress) async -> Bool,
        alongside: [any Service]
    ) async throws -> RunSummary {
        let stop = StopSignal()
        // A server beside the run listens before any input is read: a busy port ends the command at once.
        let listeners = alongside.compactMap { $0 as? ListeningServer }
        let service = PipelineService(runner: runner, input: input, stop: stop, listeners: listeners, logger: logger) { outcome, state in
            // A result that cannot be written (a full disk) stops the intake as SIGTERM would.
            if await !emit(outcome, state) { stop.stop() }
        }
        // The group shuts its services down one at a time, last listed first: the pipeline drains while the metrics
        // server (`/metrics`, `/readyz`) still answers. SIGQUIT (or the end of the grace) cuts the drain short.
        var settings = ServiceGroupConfiguration(
            services: alongside.map { .init(service: $0) } + [
                .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)
            ],
            logger: logger)
        settings.maximumGracefulShutdownDuration = shutdownGrace
        let group = ServiceGroup(configuration: settings)
        do {
            try await group.run()
        } catch {
            logger.notice("the run was cut short", metadata: ["reason": "\(error)"])
        }
        guard let summary = service.summary else {
            throw CommandFailure(listeners.lazy.compactMap(\.failure).first?.description ?? service.inputFailure ?? "the run did not finish")
        }
        return summary
    }

    /// The metrics endpoint beside the run, when one is asked for.
    private func metricsServer(_ store: TransactionStore) throws -> [any Service] {
        guard let metrics else { return [] }
        do {
            return [
                try OperatorServer.make(
                    .metrics, store: store, bind: metrics.bind, token: metrics.token, logger: logger, option: "--metrics-bind",
                    limits: metrics.limits, running: metrics.announce)
            ]
        } catch let error as OperatorViewError {
            throw CommandFailure(error.description)
        }
    }

    /// Applies the pipeline's retention policy (at the end of a run, and periodically in a worker); a failure is
    /// reported, and the data stays for the next time.
    static func applyRetention(
        _ retention: Retention, reviewInputsMaxAge: TimeInterval, to store: TransactionStore, logger: Logger, notices: (String) -> Void
    ) async {
        do {
            let outcome = try await store.purge(retention, reviewInputsMaxAge: reviewInputsMaxAge, at: Date(), dryRun: false)
            if outcome.reviewInputs > 0 {
                logger.notice("failed documents' inputs removed by their age", metadata: ["documents": "\(outcome.reviewInputs)"])
            }
            guard !outcome.transactions.isEmpty else { return }
            logger.notice(
                "identity data purged",
                metadata: [
                    "retention": "\(retention.label)", "transactions": "\(outcome.transactions.count)",
                    "documents": "\(outcome.documents)"
                ])
            notices(
                "purged the identity data of \(outcome.transactions.count) transaction\(outcome.transactions.count == 1 ? "" : "s") "
                    + "(\(outcome.documents) document\(outcome.documents == 1 ? "" : "s")) under \(retention.label)")
        } catch {
            notices("the retention policy could not be applied: \(error)")
        }
    }

    /// The pipeline's submitter. The bearer token comes from the variable the file names, never from the file.
    private func submitter(client: HTTPClient) throws -> any DocumentSubmitter {
        let settings = configuration.submitter
        guard settings.kind == .http, let endpoint = settings.endpoint else { return LocalSubmitter() }
        var token: String?
        if let variable = settings.tokenEnv {
            guard let value = environment[variable], !value.isEmpty else {
                throw CommandFailure("\(pipelineName): 'submitter.tokenEnv' names \(variable), which is not set")
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

    private func riskEvaluator(client: HTTPClient) -> RiskEvaluator? {
        let protect = configuration.protect
        guard protect.enabled, let host = protect.customHost.flatMap(URL.init(string:)), let envId = protect.envId else { return nil }
        return RiskEvaluator(client: client, host: host, envId: envId, timeoutSeconds: configuration.submitter.timeoutSeconds)
    }

    /// Runs `body` with the HTTP client that submissions and Protect's calls go through (no redirects followed,
    /// certificates verified, `submitter.caFile` trusted), shut down when `body` returns.
    private func withHTTPClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        let settings: HTTPClient.Configuration
        do {
            settings = try OutboundHTTP.configuration(caFile: configuration.submitter.caFile)
        } catch {
            throw CommandFailure("\(pipelineName): 'submitter.caFile': \(error)")
        }
        return try await HTTPClient.withHTTPClient(configuration: settings) { client in try await body(client) }
    }
}
