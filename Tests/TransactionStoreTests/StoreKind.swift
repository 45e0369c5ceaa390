import Foundation
import PostgresNIO
import Testing

@testable import TransactionStore

/// The store implementations the suite runs against; PostgreSQL is the server scripts/test starts.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    static let postgresVariable = "VERIFY_PIPELINE_TEST_POSTGRES"

    /// A new, empty store location: a file in a new folder, or a new PostgreSQL database.
    func freshLocation() async throws -> StoreLocation {
        switch self {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return .sqlite(path: folder.appendingPathComponent("verify-pipeline.sqlite").path)
        case .postgres:
            guard let admin = ProcessInfo.processInfo.environment[Self.postgresVariable] else {
                // A failure, not a skip: the README's test command starts the server.
                throw StoreKindError(message: "\(Self.postgresVariable) is not set: run scripts/test, which starts a PostgreSQL server")
            }
            guard case .postgres(let server) = try StoreLocation(parsing: admin) else { throw StoreKindError(message: "not a postgres URL") }
            let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            try await server.withClient(logger: .init(label: "test")) { client in
                try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
            }
            var components = URLComponents(string: admin)!
            components.path = "/\(name)"
            return try StoreLocation(parsing: components.string!)
        }
    }

    /// Runs `body` with a fresh store of this kind.
    func withFreshStore(_ body: @escaping @Sendable (any TransactionStore, StoreLocation) async throws -> Void) async throws {
        let location = try await freshLocation()
        try await location.withStore(create: true) { store in try await body(store, location) }
    }
}

struct StoreKindError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
