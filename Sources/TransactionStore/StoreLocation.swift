import Foundation
import Logging
import NIOPosix
import NIOSSL
import PostgresNIO

/// Where the store lives, from `--store URL` or `VERIFY_PIPELINE_STORE`.
package enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    /// The password comes from the URL or from `PGPASSWORD`; it is never part of `description`.
    case postgres(PostgresLocation)

    package static let environmentVariable = "VERIFY_PIPELINE_STORE"
    package static let defaultLocation = StoreLocation.sqlite(path: "./verify-pipeline.sqlite")

    /// `sqlite:PATH`, `sqlite://PATH`, a plain path, or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
    package init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw StoreError.cannotOpen("the store location is empty") }
        if text.hasPrefix("sqlite://") {
            self = .sqlite(path: String(text.dropFirst("sqlite://".count)))
        } else if text.hasPrefix("sqlite:") {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(parsing: text, environment: environment))
        } else if let scheme = text.range(of: "://").map({ text[..<$0.lowerBound] }) {
            throw StoreError.cannotOpen("unsupported store '\(scheme)://' (use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE)")
        } else {
            self = .sqlite(path: text)
        }
    }

    /// The `--store` value if given, else the environment's, else `./verify-pipeline.sqlite`.
    package static func resolve(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> StoreLocation
    {
        if let option { return try StoreLocation(parsing: option, environment: environment) }
        if let value = environment[environmentVariable], !value.isEmpty { return try StoreLocation(parsing: value, environment: environment) }
        return defaultLocation
    }

    /// Opens the store for the duration of `body` (a PostgreSQL connection pool runs only that long), its data key
    /// unwrapped with `encryption`'s key. `create` is false for commands that open an existing store: a missing store
    /// is then an error, not a new empty one. `readOnly` (commands that only read) opens only a store whose schema is
    /// this version's, migrating nothing; the others bring an older schema up to date. `neighbours`: what other
    /// modules keep sealed in a PostgreSQL store's database (the work queue), for its purges and key changes.
    package func withStore<T: Sendable>(
        create: Bool, readOnly: Bool = false, encryption: StoreEncryption = .ifEncrypted(nil),
        logger: Logger = Logger(label: "verify-pipeline.store"), neighbours: [any PostgresNeighbour] = [],
        _ body: @escaping @Sendable (TransactionStore) async throws -> T
    ) async throws -> T {
        switch self {
        case .sqlite(let path):
            return try await body(
                try await TransactionStore.sqlite(path: path, create: create && !readOnly, readOnly: readOnly, encryption: encryption, logger: logger)
            )
        case .postgres(let location):
            return try await location.withPostgresStore(
                create: create && !readOnly, readOnly: readOnly, encryption: encryption, logger: logger, neighbours: neighbours
            ) { store, _ in try await body(store) }
        }
    }

    /// Opens a PostgreSQL store for the duration of `body`, with its database, for the parts that keep their own tables
    /// beside it (the work queue). Other stores are refused with `requirement`, which says why PostgreSQL is needed.
    package func withPostgres<T: Sendable>(
        create: Bool, encryption: StoreEncryption = .ifEncrypted(nil),
        logger: Logger = Logger(label: "verify-pipeline.store"), neighbours: [any PostgresNeighbour] = [], requirement: String,
        _ body: @escaping @Sendable (TransactionStore, StoreDatabase) async throws -> T
    ) async throws -> T {
        guard case .postgres(let location) = self else { throw StoreError.cannotOpen(requirement) }
        return try await location.withPostgresStore(create: create, encryption: encryption, logger: logger, neighbours: neighbours, body)
    }

    package var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let location): location.description
        }
    }
}

/// A PostgreSQL database named by URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?OPTIONS]` with libpq's
/// `sslmode` (`disable`, `prefer` — the default —, `require`, `verify-ca`, `verify-full`) and `sslrootcert` (the CA
/// for the verify modes; the system's roots without it), and `connectTimeoutSeconds` (or libpq's `connect_timeout`,
/// 1 to 600, default 10).
package struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    package enum SSLMode: String, Sendable, CaseIterable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    package var host: String
    package var port: Int
    package var user: String
    package var database: String
    var password: String?
    package var sslMode = SSLMode.prefer
    package var rootCertificate: String?
    package var connectTimeoutSeconds = 10

    init(parsing text: String, environment: [String: String]) throws {
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty,
            let user = components.user, !user.isEmpty
        else {
            throw StoreError.cannotOpen("a PostgreSQL store is postgres://USER@HOST:PORT/DATABASE")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw StoreError.cannotOpen("the PostgreSQL store URL names no database") }
        self.host = host
        port = components.port ?? 5432
        self.user = user
        self.database = database
        password = components.password ?? environment["PGPASSWORD"]
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw StoreError.cannotOpen("sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                sslMode = mode
            case "sslrootcert":
                rootCertificate = value
            case "connectTimeoutSeconds", "connect_timeout":
                guard let seconds = Int(value), (1...600).contains(seconds) else {
                    throw StoreError.cannotOpen("\(item.name) must be a whole number of seconds from 1 to 600")
                }
                connectTimeoutSeconds = seconds
            default:
                throw StoreError.cannotOpen(
                    "the PostgreSQL store URL has an unknown option '\(item.name)' (known: sslmode, sslrootcert, connectTimeoutSeconds)")
            }
        }
        if rootCertificate != nil, sslMode != .verifyCA, sslMode != .verifyFull {
            throw StoreError.cannotOpen("sslrootcert needs sslmode=verify-ca or verify-full")
        }
    }

    /// The TLS settings `sslmode` asks for, as libpq reads them: `prefer` and `require` encrypt without checking
    /// whom they talk to; `verify-ca` checks the certificate's chain, `verify-full` its host name too.
    func tlsConfiguration() throws -> TLSConfiguration? {
        guard sslMode != .disable else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let rootCertificate {
            let certificates = (try? NIOSSLCertificate.fromPEMFile(rootCertificate)) ?? []
            guard !certificates.isEmpty else { throw StoreError.cannotOpen("cannot read sslrootcert \(rootCertificate) as PEM certificates") }
            tls.trustRoots = .certificates(certificates)
        }
        return tls
    }

    package var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    func withPostgresStore<T: Sendable>(
        create: Bool, readOnly: Bool = false, encryption: StoreEncryption, logger: Logger, neighbours: [any PostgresNeighbour],
        _ body: @escaping @Sendable (TransactionStore, StoreDatabase) async throws -> T
    ) async throws -> T {
        try await withClient(logger: logger) { client in
            let database = StoreDatabase(client: client, logger: logger, location: description)
            let store = try await openStore(
                in: database, create: create, readOnly: readOnly, encryption: encryption, logger: logger, neighbours: neighbours)
            return try await body(store, database)
        }
    }

    /// The store in `database`, whose pool must be running: its schema made this version's (`create`, or a store that
    /// is not `readOnly`) or required to be.
    func openStore(
        in database: StoreDatabase, create: Bool, readOnly: Bool, encryption: StoreEncryption, logger: Logger,
        neighbours: [any PostgresNeighbour]
    ) async throws -> TransactionStore {
        // A session ended or a server restarting while the store opens (a worker starting beside a failover) is tried
        // again, about 7 s in all; every step of the opening may be done again.
        var pauses = Self.openRetryPauses[...]
        while true {
            let failure: String
            do {
                return try await openOnce(
                    in: database, create: create, readOnly: readOnly, encryption: encryption, logger: logger, neighbours: neighbours)
            } catch let error as StoreError where error.code == .database {
                failure = error.detail
            }
            guard let pause = pauses.popFirst(), !Task.isCancelled else { throw StoreError.cannotOpen("\(description): \(failure)") }
            logger.notice("the store could not be opened; trying again", metadata: ["pause": "\(pause)"])
            try await Task.sleep(for: pause)
        }
    }

    private func openOnce(
        in database: StoreDatabase, create: Bool, readOnly: Bool, encryption: StoreEncryption, logger: Logger,
        neighbours: [any PostgresNeighbour]
    ) async throws -> TransactionStore {
        if create {
            try await PostgresSchema.migrate(database)
        } else {
            try await PostgresSchema.requireSchema(database, complete: readOnly)
            if !readOnly { try await PostgresSchema.migrate(database) }
        }
        return try await TransactionStore(
            backend: PostgresBackend(database: database, neighbours: neighbours), encryption: encryption, logger: logger)
    }

    static let openRetryPauses: [Duration] = [.milliseconds(250), .seconds(1), .seconds(2), .seconds(4)]

    /// Connects once, within the connect timeout, before the pool starts: the pool itself retries a refused connection
    /// or a wrong password for ever, so a command would hang without a word. Any failure is `cannotOpen` with the
    /// server's or the network's reason (never the password).
    func probe(tls configuration: TLSConfiguration?, logger: Logger) async throws {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch (sslMode, configuration) {
            case (.prefer, let configuration?): tls = .prefer(try NIOSSLContext(configuration: configuration))
            case (_, let configuration?): tls = .require(try NIOSSLContext(configuration: configuration))
            case (_, nil): tls = .disable
            }
        } catch {
            throw StoreError.cannotOpen("\(description): cannot set up TLS (\(error))")
        }
        var settings = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password,
            database: database, tls: tls)
        settings.options.connectTimeout = .seconds(Int64(connectTimeoutSeconds))
        // Named as the pool's sessions are: a key change in this process must not count this one, still closing, as
        // another process's.
        settings.options.additionalStartupParameters = [("application_name", Self.applicationName)]
        // The deadline runs on the connection's event loop, not as a sleeping task: a process whose task threads are
        // busy must not mistake its own slowness for the server's silence.
        let timeout = connectTimeoutSeconds
        let eventLoop = PostgresConnection.defaultEventLoopGroup.any()
        let outcome = eventLoop.makePromise(of: String?.self)
        let deadline = eventLoop.scheduleTask(in: .seconds(Int64(timeout))) {
            outcome.succeed(Self.silence(timeout))
        }
        PostgresConnection.connect(on: eventLoop, configuration: settings, id: 0, logger: logger).whenComplete { result in
            deadline.cancel()
            switch result {
            case .success(let connection):
                connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }  // alive until closed
                outcome.succeed(nil)
            case .failure(let error):
                outcome.succeed(Self.reason(error, timeout: timeout))
            }
        }
        // The first answer wins (a promise completes once); a log-in that ends after the deadline is closed unused.
        let failure = try? await outcome.futureResult.get()
        if let failure { throw StoreError.cannotOpen("\(description): \(failure)") }
    }

    static func silence(_ timeout: Int) -> String { "no answer within \(timeout) s (connectTimeoutSeconds)" }

    /// One line a user can act on. The server's own message when there is one ("password authentication failed for
    /// user ..."), else what the network said.
    static func reason(_ error: any Error, timeout: Int) -> String {
        guard let error = error as? PSQLError else { return "cannot connect (\(type(of: error)))" }
        if let message = error.serverInfo?[.message] { return message }
        switch error.code {
        case .sslUnsupported: return "the server does not offer TLS, which sslmode requires"
        case .authMechanismRequiresPassword: return "the server asks for a password: set PGPASSWORD (or put it in the store URL)"
        case .unsupportedAuthMechanism: return "the server asks for an authentication method this client does not speak (use scram-sha-256 or md5)"
        case .serverClosedConnection, .uncleanShutdown: return "the server closed the connection"
        default:
            if let underlying = error.underlying {
                if underlying is NIOSSLError {
                    return "\(underlying)".contains("CERTIFICATE_VERIFY_FAILED")
                        ? "the server's TLS certificate is not trusted (name its CA with sslrootcert=FILE)"
                        : "the TLS handshake failed"
                }
                if underlying is NIOSSLExtraError {
                    return "the server's TLS certificate does not name the host in the store URL"
                }
                if let connection = underlying as? NIOConnectionError, connection.connectionErrors.isEmpty,
                    connection.dnsAError != nil || connection.dnsAAAAError != nil
                {
                    return "the host name does not resolve"
                }
                let network = (underlying as? NIOConnectionError)?.connectionErrors.last?.error ?? underlying
                if case .connectTimeout? = network as? ChannelError { return silence(timeout) }
                if let io = network as? IOError { return "cannot connect: \(String(cString: strerror(io.errnoCode)))" }
                return "cannot connect (\(type(of: network)))"
            }
            return "cannot connect"
        }
    }

    /// This process's sessions' `application_name`.
    static let applicationName = "verify-pipeline-\(ProcessInfo.processInfo.processIdentifier)"

    /// Runs a connection pool for the duration of `body`, after a probe that fails fast.
    func withClient<T: Sendable>(logger: Logger, _ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = try await makeClient(logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// The connection pool, not yet running, after a probe that fails fast.
    func makeClient(logger: Logger) async throws -> PostgresClient {
        // Read once (the CA file included) for the probe and the pool.
        let tlsConfiguration = try tlsConfiguration()
        try await probe(tls: tlsConfiguration, logger: logger)
        let tls: PostgresClient.Configuration.TLS =
            switch (sslMode, tlsConfiguration) {
            case (.prefer, let configuration?): .prefer(configuration)
            case (_, let configuration?): .require(configuration)
            case (_, nil): .disable
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password,
            database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(connectTimeoutSeconds)
        // A few connections serve a process's stages: each new one costs the server a backend to start and the
        // statements to prepare, which over a run outweighed any wait for a free connection.
        configuration.options.maximumConnections = 4
        // Which sessions are this process's: `store encrypt` refuses to run while any other is connected.
        configuration.options.additionalStartupParameters = [("application_name", Self.applicationName)]
        // The pool warns when a lease is asked for before run() has started, which a task group or a service group
        // running it beside its users makes routine.
        var poolLogger = logger
        poolLogger.logLevel = .error
        return PostgresClient(configuration: configuration, backgroundLogger: poolLogger)
    }
}

/// A store to open inside a service group, whose PostgreSQL connection pool is a service of its own: `connect` probes
/// the server (failing fast, before any service starts) and makes the pool; the group runs `pool` first, so that it
/// outlives the services that use the store; `open` opens the store over it once the group runs.
package struct StoreConnection: Sendable {
    private enum Kind: Sendable {
        case sqlite(path: String)
        case postgres(PostgresLocation, PostgresClient)
    }
    private let kind: Kind

    /// The PostgreSQL connection pool for the group to run; nil for SQLite.
    package var pool: PostgresClient? {
        guard case .postgres(_, let pool) = kind else { return nil }
        return pool
    }

    package static func connect(to location: StoreLocation, logger: Logger) async throws -> StoreConnection {
        switch location {
        case .sqlite(let path): StoreConnection(kind: .sqlite(path: path))
        case .postgres(let postgres): StoreConnection(kind: .postgres(postgres, try await postgres.makeClient(logger: logger)))
        }
    }

    /// Opens the store, as `StoreLocation.withStore` does, with its PostgreSQL database for the parts that keep their
    /// tables beside it (nil for SQLite).
    package func open(
        create: Bool, readOnly: Bool = false, encryption: StoreEncryption, logger: Logger, neighbours: [any PostgresNeighbour] = []
    ) async throws -> (store: TransactionStore, database: StoreDatabase?) {
        switch kind {
        case .postgres(let postgres, let pool):
            let database = StoreDatabase(client: pool, logger: logger, location: postgres.description)
            let store = try await postgres.openStore(
                in: database, create: create && !readOnly, readOnly: readOnly, encryption: encryption, logger: logger,
                neighbours: neighbours)
            return (store, database)
        case .sqlite(let path):
            let store = try await TransactionStore.sqlite(
                path: path, create: create && !readOnly, readOnly: readOnly, encryption: encryption, logger: logger)
            return (store, nil)
        }
    }
}

extension TransactionStore {
    /// The store in the SQLite file at `path` (see `StoreLocation.withStore`).
    package static func sqlite(
        path: String, create: Bool = true, readOnly: Bool = false, encryption: StoreEncryption = .ifEncrypted(nil),
        logger: Logger = Logger(label: "verify-pipeline.store")
    ) async throws -> TransactionStore {
        let backend = try SQLiteBackend.file(path: path, create: create, readOnly: readOnly, logger: logger)
        do {
            return try await TransactionStore(backend: backend, encryption: encryption, logger: logger)
        } catch let error as StoreError where error.code == .database {
            throw StoreError.cannotOpen("\(path): \(error.detail)")
        }
    }

    /// SQLite's `PRAGMA integrity_check` ("ok" when the file is sound); nil for a PostgreSQL store.
    package func integrityCheck() async throws -> String? {
        try await (backend as? SQLiteBackend)?.integrityCheck()
    }

    /// A new store in memory, in clear, gone with the process: for tests.
    package static func inMemory() async throws -> TransactionStore {
        try await TransactionStore(
            backend: try SQLiteBackend.inMemory(), encryption: .ifEncrypted(nil), logger: Logger(label: "verify-pipeline.store"))
    }
}
