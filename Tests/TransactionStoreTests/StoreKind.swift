import Foundation
import PostgresTestSupport
import Testing

@testable import TransactionStore

/// The store implementations the suite runs against; PostgreSQL is the server scripts/test starts.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// A new, empty store location: a file in a new folder, or a new PostgreSQL database.
    func freshLocation() async throws -> StoreLocation {
        switch self {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return .sqlite(path: folder.appendingPathComponent("verify-pipeline.sqlite").path)
        case .postgres:
            return try StoreLocation(parsing: try await TestPostgres.freshDatabase(prefix: "test"))
        }
    }

    /// Runs `body` with a fresh store of this kind.
    func withFreshStore(_ body: @escaping @Sendable (any TransactionStore, StoreLocation) async throws -> Void) async throws {
        let location = try await freshLocation()
        try await location.withStore(create: true) { store in try await body(store, location) }
    }
}
