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
        #expect(all.lines[2].hasPrefix("txn-complete") && all.lines[2].contains(" COMPLETED  proc    skip "), "\(all.lines[2])")
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

    /// `count` transactions in one SQLite file, opened 1 s apart from `t0`, with ids of 15 to 124 characters and every
    /// document type on some; the last `recent` of them opened a minute ago instead. Returns the ids, oldest first.
    static func manyTransactions(_ count: Int, recent: Int, at path: String) async throws -> [String] {
        let store = try await TransactionStore.sqlite(path: path)
        let t0 = Date(timeIntervalSince1970: 1_795_305_600)
        let policies: [[DocumentType: DocumentRequirement]] = [
            [.governmentId: .required, .selfie: .optional],
            [.governmentId: .required, .selfie: .optional, .email: .optional, .phone: .optional, .voice: .optional],
            [.email: .required]
        ]
        var ids: [String] = []
        for n in 0..<count {
            // Every 7th id is long: 39 to 124 characters (ids are at most 128), with a unique number at its end.
            let long = "txn-" + String(repeating: "long-", count: 6 + n % 18)
            let id = (n % 7 == 0 ? long : "txn-batch-") + String(format: "%05d", n)
            let at = n >= count - recent ? Date().addingTimeInterval(-60) : t0.addingTimeInterval(Double(n))
            _ = try await store.openTransaction(
                NewTransaction(id: id, verificationCode: "1", policy: policies[n % 3], createdAt: at, expiresAt: at.addingTimeInterval(1800)))
            ids.append(id)
        }
        return ids
    }

    @Test("10,000 transactions: every line within 100 columns, every column at one offset; 50 unless told, --limit 20 shows 20")
    func manyListed() async throws {
        let folder = try temporaryFolder("status-many")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let ids = try await Self.manyTransactions(10_000, recent: 5, at: path)

        let all = try await CLIRunner.run(["status", "--limit", "0", "--store", path])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.lines.count == 10_001 && all.stderr.isEmpty)
        #expect(all.lines.map(\.count).max() == 100, "widest line: \(all.lines.map(\.count).max() ?? 0)")
        #expect(
            all.lines[0].split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                == ["TRANSACTION", "STATUS", "GOV_ID", "SELFIE", "EMAIL", "PHONE", "VOICE", "DATA", "UPDATED"])
        Self.expectAligned(all.lines)
        // The newest first: the 5 recent ones, then the rest from the last opened.
        #expect(all.lines[6].hasPrefix(ids[9_994] + "  ") && all.lines[10_000].hasPrefix("txn-long-…ong-00000  "))

        let shown = try await CLIRunner.run(["status", "--store", path])
        #expect(shown.lines.count == 51, "the text list shows 50 unless told")
        #expect(shown.stderr.contains("the 50 most recently updated are shown; more match"))
        let json = try await CLIRunner.run(["status", "--json", "--store", path])
        #expect(json.lines.count == 10_000, "--json lists every one unless told")
        let twenty = try await CLIRunner.run(["status", "--limit", "20", "--store", path])
        #expect(twenty.status == 0 && twenty.lines.count == 21 && twenty.stderr.contains("the 20 most recently updated"))
        Self.expectAligned(twenty.lines)
        let twentyJSON = try await CLIRunner.run(["status", "--limit", "20", "--json", "--store", path])
        #expect(twentyJSON.lines.count == 20 && twentyJSON.stderr.isEmpty)
    }

    @Test("--search finds a transaction by a fragment of its id; a long id is shortened with … unless --wide")
    func searchAndWide() async throws {
        let folder = try temporaryFolder("status-search")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let ids = try await Self.manyTransactions(400, recent: 0, at: path)
        let long = ids[399 - 399 % 7]  // the newest long id
        #expect(long.count > 40, "longer than the id column")

        let found = try await CLIRunner.run(["status", "--search", String(long.suffix(9)), "--store", path])
        #expect(found.status == 0 && found.lines.count == 2, "\(found.stdout)")
        let cell = String(found.lines[1].prefix { $0 != " " })
        #expect(cell.contains("…") && long.hasPrefix(cell.prefix { $0 != "…" }) && long.hasSuffix(cell.split(separator: "…")[1]), "\(cell)")
        #expect(found.lines.allSatisfy { $0.count <= 100 })

        let wide = try await CLIRunner.run(["status", "--search", String(long.suffix(9)), "--wide", "--store", path])
        #expect(wide.lines.count == 2 && wide.lines[1].hasPrefix(long + "  ") && !wide.stdout.contains("…"))
        #expect(wide.lines[1].hasSuffix(".000Z"), "--wide shows times to the millisecond")

        // The dashboard's search: a part of the id, anywhere in it.
        let batch = try await CLIRunner.run(["status", "--search", "batch-0012", "--limit", "0", "--json", "--store", path])
        let matched = batch.lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["transactionId"] as? String
        }
        #expect(Set(matched) == Set(ids.filter { $0.contains("batch-0012") }) && matched.count == 9, "\(matched)")
        let none = try await CLIRunner.run(["status", "--search", "no-such-id", "--store", path])
        #expect(none.status == 0 && none.stdout == "No transactions.\n")
    }

    @Test("--since a duration or a time leaves out the transactions updated before it")
    func since() async throws {
        let folder = try temporaryFolder("status-since")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let ids = try await Self.manyTransactions(300, recent: 3, at: path)

        let hour = try await CLIRunner.run(["status", "--since", "1h", "--store", path])
        #expect(hour.status == 0 && hour.lines.count == 4, "\(hour.stdout)")
        #expect(Set(hour.lines.dropFirst().map { String($0.prefix { $0 != " " }) }) == Set(ids.suffix(3)), "short ids, whole")
        // The 100th was opened at t0 + 99 s: it, the 197 opened after it, and the 3 recent ones.
        let moment = try await CLIRunner.run(["status", "--since", "2026-11-22T00:01:39Z", "--limit", "0", "--json", "--store", path])
        #expect(moment.lines.count == 201, "\(moment.lines.count)")
        #expect(!moment.stdout.contains(#""transactionId":"\#(ids[98])""#) && moment.stdout.contains(#""transactionId":"\#(ids[99])""#))
        let bad = try await CLIRunner.run(["status", "--since", "yesterday", "--store", path])
        #expect(bad.status == 2 && bad.stderr.contains("--since"), "\(bad.status) \(bad.stderr)")
        let withId = try await CLIRunner.run(["status", ids[0], "--since", "1h", "--store", path])
        #expect(withId.status == 2 && withId.stderr.contains("--since lists transactions"))
    }

    @Test("one transaction as text: its envId, a submission's error and its review, as --json has them")
    func everyReason() async throws {
        let folder = try temporaryFolder("status-reasons")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let store = try await TransactionStore.sqlite(path: path)
        let t0 = Date(timeIntervalSince1970: 1_795_305_600)
        _ = try await store.openTransaction(
            NewTransaction(
                id: "txn-refused", verificationCode: "1", envId: "env-7f3a", policy: [.selfie: .required], createdAt: t0,
                expiresAt: t0.addingTimeInterval(1800)))
        _ = try await store.collect(
            DocumentRecord(
                id: "doc-9", transactionId: "txn-refused", type: .selfie, fields: DocumentFields(), source: "batch/txn-refused/selfie.jpg",
                contentHash: "h9", createdAt: t0), at: t0.addingTimeInterval(1))
        let error = "the service answered 503 Service Unavailable"
        _ = try await store.recordSubmission(documentId: "doc-9", outcome: .failed, error: error, at: t0.addingTimeInterval(2))
        _ = try await store.recordFailure(
            FailureReport(
                transactionId: "txn-refused", verificationCode: "1", type: .selfie, kind: .submission, code: .document(.submissionError),
                message: error, field: nil, source: "batch/txn-refused/selfie.jpg", inputs: nil, documentId: "doc-9"),
            limits: ReviewLimits(), at: t0.addingTimeInterval(2))

        let text = try await CLIRunner.run(["status", "txn-refused", "--store", path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.lines.contains("  envId    env-7f3a"), "\(text.stdout)")
        #expect(text.lines.contains("      doc-9  batch/txn-refused/selfie.jpg  submission FAILED, 1 attempt: \(error)"), "\(text.stdout)")
        #expect(
            text.lines.contains {
                $0.hasPrefix("      review open: submissionError \"\(error)\" attempt 1") && $0.hasSuffix("(submission), inputs none")
            },
            "\(text.stdout)")
        let json = try await CLIRunner.run(["status", "txn-refused", "--json", "--store", path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["envId"] as? String == "env-7f3a")
        let document = try #require((object["documents"] as? [[String: Any]])?.first)
        #expect((document["submission"] as? [String: Any])?["error"] as? String == error)
        #expect((document["review"] as? [String: Any])?["state"] as? String == "open")
    }

    /// Each column of a list starts where its heading does, on every line: two spaces before it, text at it.
    static func expectAligned(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let header = Array(lines[0])
        let starts = header.indices.filter { $0 > 0 && header[$0] != " " && header[$0 - 1] == " " }
        var misaligned: [String] = []
        for line in lines.dropFirst() {
            let characters = Array(line)
            let aligned = starts.allSatisfy {
                $0 < characters.count && characters[$0 - 1] == " " && characters[$0 - 2] == " " && characters[$0] != " "
            }
            if !aligned { misaligned.append(line) }
        }
        #expect(starts.count >= 4 && misaligned.isEmpty, "\(misaligned.prefix(3))", sourceLocation: sourceLocation)
    }
}
