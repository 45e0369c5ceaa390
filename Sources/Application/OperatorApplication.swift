import Foundation
import Logging
import OperatorView
import ServiceLifecycle
import TransactionStore
import WorkQueues

/// `serve` assembled: the operator's view of the store (dashboard, JSON API, metrics, health checks) as one service
/// group — the store's PostgreSQL connection pool first, so that it is shut down last, then the server over the store
/// — until SIGINT or SIGTERM. Without a token the store is opened as by every command that only reads (its schema
/// must be up to date, nothing is written); with one, the browser sessions are kept in it, so it is opened as by a
/// command that writes (an earlier version's schema is brought up to date).
package struct OperatorApplication: Sendable {
    package var store: StoreLocation
    package var encryption: StoreEncryption
    package var bind: BindAddress
    package var token: String?
    package var limits: ConnectionLimits
    package var logger: Logger
    /// Called once it listens, with the port.
    package var announce: @Sendable (Int) async -> Void

    package init(
        store: StoreLocation, encryption: StoreEncryption, bind: BindAddress, token: String?, limits: ConnectionLimits, logger: Logger,
        announce: @escaping @Sendable (Int) async -> Void
    ) {
        self.store = store
        self.encryption = encryption
        self.bind = bind
        self.token = token
        self.limits = limits
        self.logger = logger
        self.announce = announce
    }

    /// Serves until the group shuts down. A store that cannot be opened or a port that cannot be taken is
    /// `CommandFailure` with a one-line reason. `started` gets the group, to shut it down from the outside (tests).
    package func run(started: @escaping @Sendable (ServiceGroup) -> Void = { _ in }) async throws {
        let connection = try await StoreConnection.reaching(store, logger: logger)
        let view = ServiceOverStore { [self] in
            let (store, _) = try await connection.open(
                create: false, readOnly: token == nil, encryption: encryption, logger: logger, neighbours: WorkItems.neighbours)
            let server = try OperatorServer.make(.all, store: store, bind: bind, token: token, logger: logger, limits: limits, running: announce)
            do {
                try await server.run()
            } catch {
                // A port in use or not ours to take: one line, exit 2, as every configuration error.
                guard let failure = server.failure else { throw error }
                throw CommandFailure(failure.description)
            }
        }
        let group = connection.group(running: view, logger: logger)
        started(group)
        do {
            try await group.run()
        } catch let error as StoreError {
            throw CommandFailure(error.description)
        }
    }
}
