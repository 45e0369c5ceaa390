import Logging
import ServiceLifecycle
import TransactionStore

extension StoreConnection {
    /// `connect`, where a store that cannot be reached is the command's failure (exit 2, one line).
    static func reaching(_ location: StoreLocation, logger: Logger) async throws -> StoreConnection {
        do {
            return try await connect(to: location, logger: logger)
        } catch let error as StoreError {
            throw CommandFailure(error.description)
        }
    }

    /// The application's group: the store's PostgreSQL connection pool first, so that it is shut down last, then
    /// `service`, which opens the store over it and whose end ends the group. SIGINT or SIGTERM shut it down
    /// gracefully, within `grace`; SIGQUIT cancels it.
    func group(running service: some Service, grace: Duration? = nil, logger: Logger) -> ServiceGroup {
        let first: [ServiceGroupConfiguration.ServiceConfiguration] = pool.map { [.init(service: $0)] } ?? []
        var settings = ServiceGroupConfiguration(
            services: first + [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: PipelineApplication.drainSignals, cancellationSignals: PipelineApplication.stopSignals,
            logger: logger)
        settings.maximumGracefulShutdownDuration = grace
        return ServiceGroup(configuration: settings)
    }
}

/// A service that uses the store, beside its connection pool in one group: `body` opens the store once the pool runs.
struct ServiceOverStore: Service {
    let body: @Sendable () async throws -> Void

    init(_ body: @escaping @Sendable () async throws -> Void) {
        self.body = body
    }

    func run() async throws {
        try await body()
    }
}
