import BlockingWaits
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server scripts/test starts for the store, queue and worker tests.
public enum TestPostgres {
    public static let variable = "VERIFY_PIPELINE_TEST_POSTGRES"

    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String
    }

    /// Set by scripts/test, which starts the server: there a missing server fails the test instead of skipping it.
    public static let required = "VERIFY_PIPELINE_REQUIRE_POSTGRES"

    /// The test server's address (host:port) and its administrator's URL. Without one, a plain `swift test` on a
    /// fresh clone cancels the test that needs it (reported as skipped, with the reason); under scripts/test,
    /// which starts a server and sets `required`, it is a failure.
    public static func server() throws -> (address: String, admin: URLComponents) {
        let environment = ProcessInfo.processInfo.environment
        guard let admin = environment[variable], let url = URLComponents(string: admin), url.scheme == "postgres", let host = url.host else {
            if environment[required] == nil {
                try Test.cancel("needs PostgreSQL: \(variable) is not set (scripts/test starts a server and runs this test)")
            }
            throw NotConfigured(description: "\(variable) is not set to a postgres:// URL: run scripts/test, which starts a PostgreSQL server")
        }
        return ("\(host):\(url.port ?? 5432)", url)
    }

    /// The folder of the test certificates scripts/postgres-throwaway.sh makes (ca.pem, server.pem, server.key,
    /// other-host.pem/.key); cancelled as `server()` is where scripts/test did not make them.
    public static func certificates() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        guard let folder = environment["VERIFY_PIPELINE_TEST_TLS"] else {
            if environment[required] == nil {
                try Test.cancel("needs the test certificates: VERIFY_PIPELINE_TEST_TLS is not set (scripts/test makes them)")
            }
            throw NotConfigured(description: "scripts/test makes the test certificates and names their folder in VERIFY_PIPELINE_TEST_TLS")
        }
        return folder
    }

    /// Runs statements as the administrator, on the `postgres` database (roles, databases).
    public static func administer(_ statements: [String]) async throws {
        let (_, url) = try server()
        try await withConnection(url, database: "postgres") { connection, logger in
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    /// Creates a new, empty database on the test server and returns its `postgres://` URL. A missing server
    /// is an error, not a skip: the README's test command starts one.
    public static func freshDatabase(prefix: String) async throws -> String {
        let (_, url) = try server()
        let name = prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await administer(["CREATE DATABASE \(name)"])
        var database = url
        database.path = "/\(name)"
        return database.string!
    }

    /// Runs `body` on a new connection to `database` on `url`'s server, closed afterwards either way.
    static func withConnection<T>(
        _ url: URLComponents, database: String,
        _ body: (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let logger = Logger(label: "test-postgres")
        var configuration = PostgresConnection.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
            password: url.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"], database: database, tls: .disable)
        // Named as a store's sessions in this process are (`PostgresLocation.applicationName`): a key change by a store
        // the test opened counts them as its own, so a helper connection still closing cannot refuse it. A store in
        // another process (a CLI under test) counts them as others, as it should.
        configuration.options.additionalStartupParameters = [("application_name", "verify-pipeline-\(ProcessInfo.processInfo.processIdentifier)")]
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        let result: T
        do {
            result = try await body(connection, logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return result
    }
}

extension TestPostgres {
    /// Runs statements on the database at `url` (a test's own).
    public static func execute(_ url: String, _ statements: [String]) async throws {
        let components = try parse(url)
        try await withConnection(components, database: String(components.path.dropFirst())) { connection, logger in
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    /// The first column of the first row `sql` returns on the database at `url`, as text.
    public static func text(_ url: String, _ sql: String) async throws -> String? {
        let components = try parse(url)
        return try await withConnection(components, database: String(components.path.dropFirst())) { connection, logger in
            var first: String?
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String?.self) {
                first = first ?? value
            }
            return first
        }
    }

    static func parse(_ url: String) throws -> URLComponents {
        guard let components = URLComponents(string: url), components.host != nil else { throw NotConfigured(description: "not a postgres:// URL") }
        return components
    }

    /// What `pg_dump` writes of the database at `url`: a backup's bytes, as anyone holding one would read them.
    public static func dump(_ url: String) async throws -> Data {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = folders.sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last else {
            throw NotConfigured(description: "no PostgreSQL client under /usr/lib/postgresql: run scripts/test, which installs it")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin/pg_dump")
        process.arguments = ["--no-owner", "--dbname", url]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = await offCooperativePool {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        guard process.terminationStatus == 0, !data.isEmpty else {
            throw NotConfigured(description: "pg_dump failed with status \(process.terminationStatus)")
        }
        return data
    }
}
