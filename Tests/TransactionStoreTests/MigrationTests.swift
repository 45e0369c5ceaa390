import Crypto
import Foundation
import GRDB
import PostgresTestSupport
import Testing

@testable import TransactionStore

/// Shipped migrations are frozen: a database migrated by an earlier release must see the same schema as a new one.
/// Changing a shipped migration's SQL fails here; a change to the schema is a new migration, with a new line below.
@Suite("Shipped migrations never change")
struct MigrationTests {
    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    @Test("SQLite migrations: names, order and SQL as shipped")
    func sqlite() {
        let shipped = SQLiteSchema.migrations.map { "\($0.identifier) \(Self.digest($0.sql))" }
        #expect(
            shipped == [
                "v1-transactions-documents-transitions-submissions d7eaa2d3318e1405d3fbfbe0c218a8bfd77fd9682f6c35259620104451893f4b",
                "v2-protect-behavior-and-risk 78e88843fdb0d60e0e5cadebea86570ef3d97f409e5b234c698596c3a7df8ecc",
                "v3-transaction-versions a31f8115aaa3fe0723c5e3bce3c4287ade665cf2e71313a79ef39c9ed90d1219",
                "v4-protect-states 2821efd8319d988d05fc7de649cf65b3a17a028331a8050d93bb09072a66d7b8",
                "v5-submission-claims 3661b36d691b65723612836a30f90f6c1055f5bb5030153f96c6ba601b770713",
                "v6-store-keys-and-purges 4c865858a6ad5c76981015790abe480aaf57fa71e43f6dbb2b7f4338eac6d186",
                "v7-operator-view-indexes d0638f77120b04da587884bdfc392d7c0eda5ab451991dc4ba368e6964590388",
                "v8-document-identity 4413b7ddef222b87f0eb2bc0d6383351b642254b375e96d7e19992e0dccc638e",
                "v9-operator-sessions ed4b11962e1a00c450c134a264e87e9e92bdc6c4f3ef0af69173374ae1aa01b8",
                "v10-random-document-ids 30650d885be93d2550e06cc043d8f3c4499212d9859a475a58ea6e7639502872",
                "v11-reviews 0035318375763e6e024eb728090f7cd926403b7be5ce3ad25eddece34d7a49d8"
            ])
    }

    @Test("PostgreSQL migrations: names, order and SQL as shipped")
    func postgres() {
        let shipped = PostgresSchema.migrations.map { "\($0.0) \(Self.digest($0.1.joined(separator: ";\n")))" }
        #expect(
            shipped == [
                "v1-transactions-documents-transitions-submissions 9275bb43ab1bca1c74a034605adda4cb0db56e84570ed53ba47983621f1f7c3c",
                "v2-protect-behavior-and-risk 10fd0cfc529a3dd76b180b3db3744ea0848f3a04319ef03c905c24b4d3321f1b",
                "v3-transaction-versions 02718b98836f3b7e2a49784695b174c5ae536e241b83e2da4193eda3a814c2f4",
                "v4-protect-states aaf17bae40fbdbc89010675e82d0a37e88dd15068e6385e5939695df2daa2512",
                "v5-submission-claims 7d8e11a706d90347e4a21cb60bfa149f4141afb3f4ca70feafd1701aed2cccd3",
                "v6-store-keys-and-purges 2613342d71e13abac167dc2eaf693fe2b3bf9be396cd64df44540828eae33f0a",
                "v7-operator-view-indexes 934294e2a7b3d46af9c3e7654e4e8ddc32ca27354dfbf8faa4d66844e13c29da",
                "v8-document-identity 5bc576743378cce050ee15cb9ed19c735a1071b8333b2b12477417ae7d9903ce",
                "v9-operator-sessions c34a25b5bbf5359df7f146f73260bf66e23149a9b347d8307c322b5ef0da64eb",
                "v10-random-document-ids db3340a5574e571fc112d68daac7232e270de8e2b02bc30e36544698fdb4506f",
                "v11-reviews a3c9ac205e13048ea41f1bc1183e3bd7521a6a8db849d59d040b8260ea7cd154"
            ])
        // Moved, unchanged, to the work queue's own ledger (WorkQueuesTests pins them there).
        #expect(PostgresSchema.retiredMigrations == ["v3-work-queue", "v4-work-groups"])
    }

    @Test("both backends record the same migration identifiers, in the same order")
    func alignedIdentifiers() {
        #expect(SQLiteSchema.migrations.map(\.identifier) == PostgresSchema.migrations.map(\.0))
        #expect(Set(PostgresSchema.adopted.values).isSubset(of: Set(PostgresSchema.migrations.map(\.0))))
    }

    @Test("a PostgreSQL database the previous release migrated opens read-only as it is, and a writing open adopts its ledger")
    func postgresAdoption() async throws {
        let url = try await TestPostgres.freshDatabase(prefix: "adopt")
        let location = try StoreLocation(parsing: url)
        try await location.withStore(create: true) { store in _ = try await store.openTransaction(newTransaction("t1")) }
        // The ledger as the previous release wrote it, under its own identifiers.
        try await TestPostgres.execute(
            url, PostgresSchema.adopted.map { old, new in "UPDATE schema_migrations SET identifier = '\(old)' WHERE identifier = '\(new)'" })
        func ledger() async throws -> String? {
            try await TestPostgres.text(url, "SELECT string_agg(identifier, ',' ORDER BY identifier) FROM schema_migrations")
        }
        let previous = try await ledger()
        #expect(previous?.contains("v10-document-identity") == true)

        let read = try await location.withStore(create: false, readOnly: true) { store in try await store.transaction(id: "t1")?.id }
        #expect(read == "t1")
        #expect(try await ledger() == previous, "a read-only open writes nothing")

        // A writing open rewrites the ledger and applies nothing again (it would fail on tables that exist).
        let written = try await location.withStore(create: false) { store in try await store.transaction(id: "t1")?.id }
        #expect(written == "t1")
        #expect(try await ledger() == PostgresSchema.migrations.map(\.0).sorted().joined(separator: ","))
    }

    /// Protect's state as the Protect module of the time wrote it, in the columns v2 added.
    struct LegacyProtectState: Codable, Equatable {
        var behavior: [String: Int]?
        var riskEvaluation: String?
    }

    @Test("a v3 SQLite store's Protect columns move to their own table, values intact")
    func sqliteProtectStates() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("verify-pipeline.sqlite").path
        func makeVersion3Store() throws {
            var migrator = DatabaseMigrator()
            for (identifier, sql) in SQLiteSchema.migrations.prefix(3) {
                migrator.registerMigration(identifier) { db in try db.execute(sql: sql) }
            }
            let queue = try DatabaseQueue(path: path)
            try migrator.migrate(queue)
            try queue.write { db in
                let rows: [(String, String?, String?)] = [("t1", #"{"retries":2}"#, #"{"level":"LOW"}"#), ("t2", nil, nil), ("t3", nil, "not json")]
                for (id, behavior, risk) in rows {
                    try db.execute(
                        sql: """
                            INSERT INTO transactions (id, verificationCode, submissionStatus, createdAt, updatedAt, expiresAt, behavior, riskEvaluation)
                            VALUES (?, '417203', 'NOT_STARTED', '2026-11-23 00:00:00.000', '2026-11-23 00:00:00.000', '2026-11-23 00:30:00.000', ?, ?)
                            """, arguments: [id, behavior, risk])
                }
            }
        }
        try makeVersion3Store()
        let store = try await TransactionStore.sqlite(path: path, create: false)
        #expect(
            try await store.protectState(of: "t1", as: LegacyProtectState.self)
                == LegacyProtectState(behavior: ["retries": 2], riskEvaluation: #"{"level":"LOW"}"#))
        #expect(try await store.protectState(of: "t2", as: LegacyProtectState.self) == nil)
        #expect(try await store.protectState(of: "t3", as: LegacyProtectState.self) == LegacyProtectState(behavior: nil, riskEvaluation: "not json"))
        #expect(try await store.transaction(id: "t1")?.state.submissionStatus == .notStarted)
    }
}
