import Foundation
import Logging
import PostgresNIO

/// Where the store lives, from `--store URL` or `VERIFY_PIPELINE_STORE`.
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    /// The password comes from the URL or from `PGPASSWORD`; it is never part of `description`.
    case postgres(PostgresLocation)

    public static let environmentVariable = "VERIFY_PIPELINE_STORE"
    public static let defaultLocation = StoreLocation.sqlite(path: "./verify-pipeline.sqlite")

    /// `sqlite:PATH`, `sqlite://PATH`, a plain path, or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
    public init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw .cannotOpen("the store location is empty") }
        if text.hasPrefix("sqlite://") {
            self = .sqlite(path: String(text.dropFirst("sqlite://".count)))
        } else if text.hasPrefix("sqlite:") {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(parsing: text, environment: environment))
        } else if let scheme = text.range(of: "://").map({ text[..<$0.lowerBound] }) {
            throw .cannotOpen("unsupported store '\(scheme)://' (use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE)")
        } else {
            self = .sqlite(path: text)
        }
    }

    /// The `--store` value if given, else the environment's, else `./verify-pipeline.sqlite`.
    public static func resolve(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) -> StoreLocation {
        if let option { return try StoreLocation(parsing: option, environment: environment) }
        if let value = environment[environmentVariable], !value.isEmpty { return try StoreLocation(parsing: value, environment: environment) }
        return defaultLocation
    }

    /// Opens the store for the duration of `body` (a PostgreSQL connection pool runs only that long).
    /// `create` is false for commands that only read: a missing store is then an error, not a new empty one.
    public func withStore<T: Sendable>(create: Bool, logger: Logger = Logger(label: "verify-pipeline.store"),
                                       _ body: @escaping @Sendable (any TransactionStore) async throws -> T) async throws -> T {
        switch self {
        case .sqlite(let path):
            return try await body(try SQLiteTransactionStore(path: path, create: create, logger: logger))
        case .postgres(let location):
            return try await location.withStore(create: create, logger: logger, body)
        }
    }

    /// Opens a PostgreSQL store for the duration of `body`, with its database, for the parts that keep their own
    /// tables beside it (the work queue). Other stores are refused with `requirement`, which says why PostgreSQL is
    /// needed.
    public func withPostgres<T: Sendable>(create: Bool, logger: Logger = Logger(label: "verify-pipeline.store"), requirement: String,
                                          _ body: @escaping @Sendable (any TransactionStore, StoreDatabase) async throws -> T) async throws -> T {
        guard case .postgres(let location) = self else { throw StoreError.cannotOpen(requirement) }
        return try await location.withPostgresStore(create: create, logger: logger) { store in try await body(store, store.database) }
    }

    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let location): location.description
        }
    }
}

/// A PostgreSQL database named by URL.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    var password: String?

    init(parsing text: String, environment: [String: String]) throws(StoreError) {
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty,
              let user = components.user, !user.isEmpty else {
            throw .cannotOpen("a PostgreSQL store is postgres://USER@HOST:PORT/DATABASE")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw .cannotOpen("the PostgreSQL store URL names no database") }
        self.host = host
        port = components.port ?? 5432
        self.user = user
        self.database = database
        password = components.password ?? environment["PGPASSWORD"]
    }

    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    func withStore<T: Sendable>(create: Bool, logger: Logger,
                                _ body: @escaping @Sendable (any TransactionStore) async throws -> T) async throws -> T {
        try await withPostgresStore(create: create, logger: logger, body)
    }

    func withPostgresStore<T: Sendable>(create: Bool, logger: Logger,
                                        _ body: @escaping @Sendable (PostgresTransactionStore) async throws -> T) async throws -> T {
        try await withClient(logger: logger) { client in
            let store = PostgresTransactionStore(database: StoreDatabase(client: client, logger: logger, location: description))
            do {
                if create {
                    try await store.migrate()
                } else {
                    try await store.requireSchema()
                }
            } catch StoreError.database(let message) {
                throw StoreError.cannotOpen("\(description): \(message)")
            }
            return try await body(store)
        }
    }

    /// Runs a connection pool for the duration of `body`.
    func withClient<T: Sendable>(logger: Logger, _ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                                         database: database, tls: .disable)
        // A few connections serve a process's stages: each new one costs the server a backend to start and the
        // statements to prepare, which over a run outweighed any wait for a free connection.
        configuration.options.maximumConnections = 4
        // The pool warns when a lease is asked for before run() has started, which the task group below makes routine.
        var poolLogger = logger
        poolLogger.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: poolLogger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
