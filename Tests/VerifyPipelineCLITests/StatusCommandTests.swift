import Foundation
import GRDB
import PostgresTestSupport
import Testing
import TransactionStore
import VerifyModel

@Suite("verify-pipeline status", .serialized)
struct StatusCommandTests {
    /// A store with one completed transaction and one that has only started.
    static func makeStore() async throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("status-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("store.sqlite").path
        let store = try await TransactionStore.sqlite(path: path)
        let t0 = Date(timeIntervalSince1970: 1_795_305_600)
        let policy: [DocumentType: DocumentRequirement] = [.governmentId: .required, .selfie: .optional]
        for id in ["txn-complete", "txn-started"] {
            _ = try await store.openTransaction(
                NewTransaction(
                    id: id, verificationCode: "1", policy: policy, createdAt: t0,
                    expiresAt: t0.addingTimeInterval(1800)))
        }
        let document = DocumentRecord(
            id: "doc-1", transactionId: "txn-complete", type: .governmentId,
            fields: DocumentFields([.lastName: "ERIKSSON", .documentNumber: "L898902C3"]),
            source: "batch/txn-complete/back.png", contentHash: "h", createdAt: t0)
        _ = try await store.collect(document, at: t0.addingTimeInterval(1))
        _ = try await store.recordSubmission(documentId: "doc-1", outcome: .accepted, error: nil, at: t0.addingTimeInterval(2))
        _ = try await store.apply(.process, to: .governmentId, of: "txn-complete", reason: "submission accepted", at: t0.addingTimeInterval(2))
        _ = try await store.apply(.skip, to: .selfie, of: "txn-complete", reason: "end of batch", at: t0.addingTimeInterval(3))
        _ = try await store.collect(
            DocumentRecord(
                id: "doc-2", transactionId: "txn-started", type: .selfie, fields: DocumentFields(),
                source: "stream:line-4", contentHash: "h2", createdAt: t0), at: t0.addingTimeInterval(4))
        return (folder, path)
    }

    @Test(
        "status on a store one schema migration behind exits 2 with one line saying how to bring it up to date, and migrates nothing",
        arguments: ["sqlite", "postgres"])
    func olderSchema(_ backend: String) async throws {
        let folder = try temporaryFolder("status-older-\(backend)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store: String
        let ledgerHasIt: () async throws -> Bool
        if backend == "sqlite" {
            let path = folder.appendingPathComponent("store.sqlite").path
            _ = try await TransactionStore.sqlite(path: path)
            // As an earlier version left it: its last migration not yet applied.
            let database = try DatabaseQueue(path: path)
            try await database.write { db in try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v8-document-identity'") }
            try database.close()
            store = "sqlite:\(path)"
            ledgerHasIt = {
                let database = try DatabaseQueue(path: path)
                defer { try? database.close() }
                return try await database.read { db in
                    try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = 'v8-document-identity')") ?? true
                }
            }
        } else {
            store = try await freshPostgresStore()
            try await StoreLocation.resolve(option: store).withStore(create: true) { _ in }
            try await TestPostgres.execute(store, ["DELETE FROM schema_migrations WHERE identifier = 'v8-document-identity'"])
            ledgerHasIt = {
                try await TestPostgres.text(store, "SELECT count(*)::text FROM schema_migrations WHERE identifier = 'v8-document-identity'") != "0"
            }
        }
        let outcome = try await CLIRunner.run(["status", "--store", store])
        #expect(outcome.status == 2)
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(outcome.stderr)")
        #expect(
            outcome.stderr.contains("misses 1 of this version's schema migrations")
                && outcome.stderr.contains("a command that writes to it (run, stream, enqueue or worker) brings it up to date"),
            "\(outcome.stderr)")
        #expect(try await ledgerHasIt() == false, "a read-only command migrated the store")
    }

    @Test("a store file readable by its group or others is tightened to 0600, with a warning")
    func tightensPermissions() async throws {
        let (folder, path) = try await Self.makeStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(chmod(path, 0o644) == 0)
        let outcome = try await CLIRunner.run(["status", "--store", "sqlite:\(path)"])
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains("warning") && outcome.stderr.contains("the store file was readable beyond its owner; its mode is now 0600"))
        #expect(outcome.stderr.contains("store.mode.before=644"))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Already tight: nothing to say.
        let again = try await CLIRunner.run(["status", "--store", "sqlite:\(path)"])
        #expect(!again.stderr.contains("warning"))
    }

    // What the text and JSON hold is the presentation module's (TransactionViewsTests); here, what the command does.
    @Test("one transaction and the list, as text and NDJSON, filtered by --state; the environment names the store")
    func listing() async throws {
        let (folder, path) = try await Self.makeStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let all = try await CLIRunner.run(["status", "--store", path])
        #expect(all.lines.count == 3)
        #expect(all.lines[1].hasPrefix("txn-started") && all.lines[1].contains("STARTED"))
        #expect(all.lines[2].hasPrefix("txn-complete") && all.lines[2].contains("GOVERNMENT_ID=PROCESSED SELFIE=SKIPPED"))
        let completed = try await CLIRunner.run(
            ["status", "--state", "completed", "--json"], environment: ["VERIFY_PIPELINE_STORE": "sqlite:\(path)"])
        #expect(completed.status == 0, "\(completed.stderr)")
        #expect(completed.lines.count == 1)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(completed.lines[0].utf8)) as? [String: Any])
        #expect(line["transactionId"] as? String == "txn-complete")
        let oneJSON = try await CLIRunner.run(["status", "txn-complete", "--json", "--store", path])
        #expect(oneJSON.status == 0 && oneJSON.lines.count == 1 && oneJSON.stdout.contains(#""documentSubmissionStatus":"COMPLETED""#))
    }

    @Test("an unknown id exits 1 with one line; a missing, foreign or unsupported store exits 2")
    func failures() async throws {
        let (folder, path) = try await Self.makeStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let unknown = try await CLIRunner.run(["status", "nope", "--store", path])
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "verify-pipeline: no transaction 'nope' in the store\n")
        // An id typed on the command line is escaped in the error line.
        let hostile = try await CLIRunner.run(["status", "no\u{1B}[2Jpe", "--store", "sqlite:\(path)"])
        #expect(hostile.status == 1 && hostile.stderr.contains("no transaction 'no\\u{1B}[2Jpe' in the store"))

        let missing = try await CLIRunner.run(["status", "--store", folder.appendingPathComponent("absent.sqlite").path])
        #expect(missing.status == 2)
        #expect(missing.stderr.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("absent.sqlite").path))

        let foreign = folder.appendingPathComponent("foreign.sqlite")
        try Data("not a database, just text".utf8).write(to: foreign)
        let bad = try await CLIRunner.run(["status", "--store", foreign.path])
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("verify-pipeline: cannot open the store"))

        let unsupported = try await CLIRunner.run(["status", "--store", "mysql://db/verify"])
        #expect(unsupported.status == 2)
        #expect(unsupported.stderr.contains("unsupported store 'mysql://'"))
    }
}
