import Foundation
import PostgresTestSupport
import Testing

@testable import TransactionStore

/// The store implementations the suite runs against, each in clear and encrypted; PostgreSQL is the server
/// scripts/test starts.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    case sqliteSealed = "sqlite-sealed"
    case postgresSealed = "postgres-sealed"

    var testDescription: String { rawValue }

    var isSealed: Bool { self == .sqliteSealed || self == .postgresSealed }

    /// How its stores are opened: encrypted ones under the test key.
    var encryption: StoreEncryption { isSealed ? .required(testKey) : .ifEncrypted(nil) }

    /// A new, empty store location: a file in a new folder, or a new PostgreSQL database.
    func freshLocation() async throws -> StoreLocation {
        switch self {
        case .sqlite, .sqliteSealed:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return .sqlite(path: folder.appendingPathComponent("verify-pipeline.sqlite").path)
        case .postgres, .postgresSealed:
            return try StoreLocation(parsing: try await TestPostgres.freshDatabase(prefix: "test"))
        }
    }

    /// Runs `body` with a fresh store of this kind.
    func withFreshStore(_ body: @escaping @Sendable (TransactionStore, StoreLocation) async throws -> Void) async throws {
        let location = try await freshLocation()
        try await location.withStore(create: true, encryption: encryption) { store in try await body(store, location) }
    }
}

/// Test keys: fixed values, never real ones.
let testKey = key(fill: 0x3C)
let otherKey = key(fill: 0xA5)

func key(fill: UInt8, variable: String = "TEST_STORE_KEY") -> KeyEncryptionKey {
    // 32 different bytes from `fill` (a key of one repeated byte is refused).
    let bytes = Data((0..<32).map { UInt8(truncatingIfNeeded: Int(fill) &+ $0 &* 37) })
    return try! KeyEncryptionKey.from(variable: variable, environment: [variable: bytes.base64EncodedString()])!
}
