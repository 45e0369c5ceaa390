import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL server scripts/test starts for the store, queue and worker tests.
public enum TestPostgres {
    public static let variable = "VERIFY_PIPELINE_TEST_POSTGRES"

    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String
    }

    /// The test server's address (host:port) and its administrator's URL.
    public static func server() throws -> (address: String, admin: URLComponents) {
        guard let admin = ProcessInfo.processInfo.environment[variable], let url = URLComponents(string: admin),
              url.scheme == "postgres", let host = url.host else {
            throw NotConfigured(description: "\(variable) is not set to a postgres:// URL: run scripts/test, which starts a PostgreSQL server")
        }
        return ("\(host):\(url.port ?? 5432)", url)
    }

    /// Runs statements as the administrator, on the `postgres` database (roles, databases).
    public static func administer(_ statements: [String]) async throws {
        let (_, url) = try server()
        let logger = Logger(label: "test-postgres")
        let configuration = PostgresConnection.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
            password: url.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"], database: "postgres", tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// Creates a new, empty database on the test server and returns its `postgres://` URL. A missing server
    /// is an error, not a skip: the README's test command starts one.
    public static func freshDatabase(prefix: String) async throws -> String {
        guard let admin = ProcessInfo.processInfo.environment[variable], let url = URLComponents(string: admin),
              url.scheme == "postgres", let host = url.host, let user = url.user else {
            throw NotConfigured(description: "\(variable) is not set to a postgres:// URL: run scripts/test, which starts a PostgreSQL server")
        }
        let name = prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let logger = Logger(label: "test-postgres")
        let configuration = PostgresConnection.Configuration(
            host: host, port: url.port ?? 5432, username: user,
            password: url.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"], database: "postgres", tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        var database = url
        database.path = "/\(name)"
        return database.string!
    }
}
