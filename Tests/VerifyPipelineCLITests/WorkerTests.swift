import Foundation
import PostgresTestSupport
import SeededRandom
import Testing
import VerifyModel
import WorkQueues

@testable import TransactionStore

/// A new database on the PostgreSQL server scripts/test starts.
func freshPostgresStore() async throws -> String {
    try await TestPostgres.freshDatabase(prefix: "cli")
}

@Suite("enqueue and workers on PostgreSQL", .serialized)
struct WorkerTests {
    @Test("enqueue lists only the options it uses: the run's own (--metrics-bind, --omit-images, --shutdown-grace, --jobs) are unknown to it")
    func enqueueOptions() async throws {
        let help = try await CLIRunner.run(["enqueue", "--help"])
        #expect(help.status == 0)
        let listed = help.stdout.split(separator: "\n").filter { $0.hasPrefix("  --") }.map { String($0.dropFirst(2).prefix { $0 != " " }) }
        // `--version` is the tool's, listed on every command.
        #expect(listed == ["--pipeline", "--store", "--key-env", "--log-level", "--log-format", "--allow-path", "--version"], "\(listed)")
        for option in [["--metrics-bind", "127.0.0.1:0"], ["--omit-images"], ["--shutdown-grace", "1"], ["--jobs", "2"]] {
            let outcome = try await CLIRunner.run(["enqueue", "folder"] + option)
            #expect(outcome.status == 2, "\(option)")
            #expect(outcome.stderr.contains("Unknown option '\(option[0])'"), "\(outcome.stderr)")
        }
    }

    @Test("3 workers on a 500-document queue, one killed with SIGKILL: every document PROCESSED exactly once")
    func threeWorkersOneKilled() async throws {
        let store = try await freshPostgresStore()
        let folder = try temporaryFolder("workers")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<250).map { "work-\($0)" }, phone: false, selfie: true)
        let pipeline = try pipelineFile(
            folder, "policy:\n  documents: {EMAIL: REQUIRED, SELFIE: REQUIRED, GOVERNMENT_ID: DISABLED, PHONE: DISABLED}\n")
        let enqueue = try await CLIRunner.run(["enqueue", batch.path, "--store", store, "--pipeline", pipeline])
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        #expect(enqueue.stderr.contains("500 documents queued"))

        let arguments = ["worker", "--exit-when-empty", "--lease-seconds", "3", "--store", store, "--pipeline", pipeline, "--omit-images"]
        var (seed, random) = try TestSeed.make()
        let killAfter = Int.random(in: 5...60, using: &random)
        let context = "the first worker killed at result \(killAfter), \(TestSeed.replay(seed))"
        print("[workers, one killed] \(context)")
        let workers = try (0..<3).map { _ in try InteractiveProcess(arguments) }
        var printed = 0
        while printed < killAfter, await workers[0].nextLine() != nil { printed += 1 }
        kill(workers[0].process.processIdentifier, SIGKILL)
        #expect(await workers[0].waitForExit())
        #expect(printed == killAfter, "the first worker printed \(printed) results before it was killed; \(context)")
        for survivor in workers[1...] {
            #expect(await survivor.waitForExit(timeout: 180), "a surviving worker did not finish the queue; \(context)")
            #expect(survivor.process.terminationStatus == 0, "\(survivor.stderr); \(context)")
        }

        try await StoreLocation(parsing: store).withWorkQueue(create: false, encryption: CLIRunner.storeEncryption) { reader, queue in
            let transactions = try await reader.transactions(status: nil)
            #expect(transactions.count == 250, "\(context)")
            #expect(transactions.allSatisfy { $0.status == .completed }, "\(context)")
            var documents = 0
            for summary in transactions {
                let report = try #require(try await reader.report(id: summary.id))
                for document in report.documents {
                    documents += 1
                    #expect(
                        document.submission?.attempts == 1 && document.submission?.outcome == .accepted,
                        "\(document.id); \(context)")
                }
            }
            #expect(documents == 500, "\(context)")
            #expect(try await queue.openItems() == 0, "\(context)")
        }
    }

    @Test("2 workers: each transaction folder's end skips its missing optional documents, once")
    func transactionFolderEnds() async throws {
        let store = try await freshPostgresStore()
        let folder = try temporaryFolder("group-ends")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ids = (0..<60).map { "end-\($0)" }
        let batch = try fieldBatch(folder, transactions: ids, phone: false, selfie: true)
        for (index, id) in ids.enumerated() where index % 2 == 1 {
            try FileManager.default.removeItem(at: batch.appendingPathComponent(id).appendingPathComponent("selfie.jpg"))
        }
        let pipeline = try pipelineFile(
            folder, "policy:\n  documents: {EMAIL: REQUIRED, SELFIE: OPTIONAL, PHONE: OPTIONAL, GOVERNMENT_ID: DISABLED}\n")
        #expect(try await CLIRunner.run(["enqueue", batch.path, "--store", store, "--pipeline", pipeline]).status == 0)
        let arguments = ["worker", "--exit-when-empty", "--store", store, "--pipeline", pipeline, "--omit-images"]
        let workers = try (0..<2).map { _ in try InteractiveProcess(arguments) }
        for worker in workers {
            #expect(await worker.waitForExit(timeout: 120))
            #expect(worker.process.terminationStatus == 0, "\(worker.stderr)")
        }

        try await StoreLocation(parsing: store).withWorkQueue(create: false, encryption: CLIRunner.storeEncryption) { reader, queue in
            let transactions = try await reader.transactions(status: nil)
            #expect(transactions.count == 60)
            for summary in transactions {
                let index = Int(summary.id.dropFirst("end-".count))!
                #expect(summary.status == .completed, "\(summary.id)")
                #expect(
                    summary.documents == [.email: .processed, .phone: .skipped, .selfie: index % 2 == 0 ? .processed : .skipped],
                    "\(summary.id)")
            }
            let report = try #require(try await reader.report(id: "end-1"))
            let skips = report.history.filter { $0.to == DocumentStatus.skipped.rawValue }
            #expect(skips.count == 2 && skips.allSatisfy { $0.reason == "end of end-1" }, "\(skips)")
            #expect(try await queue.openItems() == 0)
        }
    }

    @Test("2 workers: a refused optional selfie is in the review queue and holds its transaction at the folder's end")
    func workerFailuresReviewed() async throws {
        let store = try await freshPostgresStore()
        let folder = try temporaryFolder("worker-reviews")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ids = (0..<12).map { "rv-\($0)" }
        let batch = try fieldBatch(folder, transactions: ids, phone: false, selfie: true)
        // Every third selfie is not an image.
        for (index, id) in ids.enumerated() where index % 3 == 0 {
            try Data("not an image".utf8).write(to: batch.appendingPathComponent(id).appendingPathComponent("selfie.jpg"))
        }
        let pipeline = try pipelineFile(
            folder, "policy:\n  documents: {EMAIL: REQUIRED, SELFIE: OPTIONAL, PHONE: OPTIONAL, GOVERNMENT_ID: DISABLED}\n")
        #expect(try await CLIRunner.run(["enqueue", batch.path, "--store", store, "--pipeline", pipeline]).status == 0)
        let arguments = ["worker", "--exit-when-empty", "--store", store, "--pipeline", pipeline, "--omit-images"]
        let workers = try (0..<2).map { _ in try InteractiveProcess(arguments) }
        for worker in workers {
            #expect(await worker.waitForExit(timeout: 120))
        }
        let listed = try await CLIRunner.run(["review", "list", "--json", "--store", store])
        let open = try listed.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(Set(open.compactMap { $0["transactionId"] as? String }) == ["rv-0", "rv-3", "rv-6", "rv-9"], "\(open)")
        #expect(open.allSatisfy { $0["documentType"] as? String == "SELFIE" && $0["inputs"] as? String == "kept" })
        let summaries = try await InProcess.summaries(store)
        for summary in summaries {
            let refused = ["rv-0", "rv-3", "rv-6", "rv-9"].contains(summary.id)
            #expect(summary.documents[.selfie] == (refused ? .optional : .processed), "\(summary.id)")
            #expect((summary.status == .completed) != refused, "\(summary.id)")
        }
        let rejected = try await CLIRunner.run(
            ["review", "reject", "rv-0", "SELFIE", "--reason", "unreadable", "--operator", "wes", "--store", store])
        #expect(rejected.status == 0, "\(rejected.stderr)")
        #expect(try await InProcess.summaries(store).first { $0.id == "rv-0" }?.status == .completed)
    }

    @Test("enqueue from standard input: a bad line and a QR with another verification code are refused alone, the rest queued")
    func enqueueRefusesLinesAlone() async throws {
        let store = try await freshPostgresStore()
        func qr(_ transaction: String, _ code: String) -> String {
            "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=\(transaction)&code=\(code)"
        }
        let lines =
            [
                #"{"id":"a","qr":"\#(qr("accept-q1", "C1"))","type":"EMAIL","email":"a@example.com"}"#,
                #"{"id":"b","qr":"\#(qr("accept-q1", "OTHER"))","type":"PHONE","phone":"+1 555 0100"}"#,
                "{not json"
            ] + (0..<300).map { #"{"id":"m\#($0)","qr":"\#(qr("accept-m\($0)", "C\($0)"))","type":"EMAIL","email":"m\#($0)@example.com"}"# }
        let enqueue = try await CLIRunner.run(["enqueue", "-", "--store", store], stdin: lines.joined(separator: "\n") + "\n")
        #expect(enqueue.status == 1, "\(enqueue.stderr)")
        // 301 queued, over more than one database transaction (256 at most each).
        #expect(enqueue.stderr.contains("301 documents queued in batch"), "\(enqueue.stderr)")
        #expect(enqueue.stderr.contains("2 refused"))
        let refused = try resultLines(enqueue.stdout)
        #expect(refused.map(\.id) == ["b", "line-3"])
        #expect(refused.map { $0.error?.code } == ["initiateDocumentTransactionError", "invalidKeyMap"])
    }

    @Test("enqueue - with stdin /dev/null queues nothing and exits normally")
    func enqueueDevNull() async throws {
        let store = try await freshPostgresStore()
        let enqueue = try await CLIRunner.run(["enqueue", "-", "--store", store], input: .devNull)
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        #expect(enqueue.stderr.contains("0 documents queued"), "\(enqueue.stderr)")
        #expect(enqueue.stdout.isEmpty)
    }

    @Test("enqueue and worker need a PostgreSQL store; status works unchanged against PostgreSQL")
    func needsPostgres() async throws {
        let folder = try temporaryFolder("enqueue-sqlite")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = try await CLIRunner.run(["enqueue", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path])
        #expect(sqlite.status == 2)
        #expect(sqlite.stderr.contains("the work queue needs a PostgreSQL store"))

        let store = try await freshPostgresStore()
        #expect(try await CLIRunner.run(["enqueue", "Samples/batch", "--store", store]).status == 0)
        let worker = try await CLIRunner.run(["worker", "--exit-when-empty", "--store", store, "--omit-images"])
        #expect(worker.status == 1, "three sample documents fail on purpose")
        let status = try await CLIRunner.run(["status", "txn-batch-005", "--json", "--store", store])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(object["documentSubmissionStatus"] as? String == "STARTED")
        #expect(
            object["documentStatus"] as? [String: String] == [
                "GOVERNMENT_ID": "REQUIRED", "SELFIE": "PROCESSED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"
            ])
        let list = try await CLIRunner.run(["status", "--state", "COMPLETED", "--store", store])
        #expect(list.lines.count == 7, "a header and the six completed sample transactions")
    }

    /// Defect 5 of issue 29: a purge emptied only the jobs of done items; one still queued kept its QR (with the
    /// verification code) and its fields for ever.
    @Test("a purge empties the jobs of its transactions' queued items too; a worker reports them purged and keeps no result")
    func purgeEmptiesQueuedJobs() async throws {
        let store = try await freshPostgresStore()
        let folder = try temporaryFolder("purge-queued")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipeline = try pipelineFile(
            folder,
            "policy:\n  documents: {EMAIL: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, PHONE: DISABLED}\nretention: {mode: age, maxAge: 1m}\n"
        )
        let formatter = ISO8601DateFormatter()
        let created = formatter.string(from: Date().addingTimeInterval(-7_200)), expires = formatter.string(from: Date().addingTimeInterval(-6_000))
        func line(_ n: Int, old: Bool) -> String {
            let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=pq-\(n)&code=QXZCODE\(n)"
            var object: [String: String] = ["id": "l\(n)", "qr": qr, "type": "EMAIL", "email": "qxz\(n).secret@example.com"]
            if old { (object["createdAt"], object["expiresAt"]) = (created, expires) }
            return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        // Two transactions opened two hours ago and long expired, one opened now.
        let lines = [line(1, old: true), line(2, old: true), line(3, old: false)]
        let enqueue = try await CLIRunner.run(["enqueue", "-", "--store", store, "--pipeline", pipeline], stdin: lines.joined(separator: "\n") + "\n")
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        let purge = try await CLIRunner.run(["store", "purge", "--store", store, "--pipeline", pipeline])
        #expect(purge.status == 0 && purge.stdout.split(separator: "\n").sorted() == ["pq-1", "pq-2"], "\(purge.stdout) \(purge.stderr)")
        let emptied = try await TestPostgres.text(
            store, "SELECT string_agg(transaction_id, ',' ORDER BY transaction_id) FROM work_items WHERE job = ''")
        #expect(emptied == "pq-1,pq-2", "the purged transactions' queued jobs are empty")

        let worker = try await CLIRunner.run(["worker", "--exit-when-empty", "--store", store, "--pipeline", pipeline, "--omit-images"])
        let results = try worker.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let purged = results.filter {
            ($0["error"] as? [String: Any])?["message"] as? String == "its transaction's data was purged while it waited in the queue"
        }
        #expect(purged.count == 2, "\(worker.stdout)")
        #expect(results.contains { $0["transactionId"] as? String == "pq-3" && $0["documentSubmissionStatus"] as? String == "COMPLETED" })
        #expect(!worker.stdout.contains("qxz1.secret") && !worker.stdout.contains("QXZCODE1"))
        let kept = try await TestPostgres.text(
            store, "SELECT count(*)::text FROM work_items WHERE transaction_id IN ('pq-1', 'pq-2') AND (job <> '' OR result IS NOT NULL)")
        #expect(kept == "0", "nothing of the purged transactions is left in the queue")
    }
}
