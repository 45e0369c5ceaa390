import Foundation
import LoopbackServer
import Testing
import TransactionStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SIGTERM while each stage is busy: the process stops taking input, gives the documents in flight the grace
/// period, and exits; the store stays sound, and a re-run of the same input submits every document exactly once.
@Suite("Graceful shutdown on SIGTERM, per stage", .serialized)
struct ShutdownTests {
    enum Busy: String, CaseIterable, CustomTestStringConvertible {
        /// `stream` waiting on standard input that stays open.
        case ingest
        /// One decode worker behind a queue of one.
        case decode
        /// One scan worker behind a queue of one.
        case scan
        /// A submission API that reads the request and never answers.
        case submit

        var testDescription: String { rawValue }
    }

    static let grace = 2.0
    /// What the exit may take beyond the grace period: the documents cut short, the summary, the store's close, on a
    /// 2-core machine running the other suites beside it (4.01 s was seen there once, against 2 s when alone). A run
    /// that ignored the signal would take the submitter's 120 s timeout.
    static let slack = 6.0

    @Test(
        "exits within the grace period plus 6 s; integrity_check ok; a re-run submits each document once",
        arguments: Busy.allCases)
    func sigterm(_ busy: Busy) async throws {
        let folder = try temporaryFolder("shutdown-\(busy.rawValue)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let store = folder.appendingPathComponent("store.sqlite").path
        let ids = (0..<(busy == .ingest ? 3 : 120)).map { "accept-\($0)" }
        let batch = try fieldBatch(folder, transactions: ids, phone: false, selfie: true)
        let stages =
            switch busy {
            case .decode: "{decode: {workers: 1, queue: 1}, scan: {workers: 2, queue: 64}}"
            case .scan: "{decode: {workers: 2, queue: 64}, scan: {workers: 1, queue: 1}}"
            case .ingest, .submit: "{}"
            }
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, SELFIE: OPTIONAL, GOVERNMENT_ID: DISABLED, PHONE: DISABLED}
            stages: \(stages)
            submitter:
              kind: http
              endpoint: \(server.baseURL)/v1
              timeoutSeconds: 120
              retry: {maxAttempts: 2, initialBackoffMs: 10, maxBackoffMs: 10}
            """)
        let common = [
            "--store", store, "--pipeline", pipeline, "--shutdown-grace", "\(Self.grace)", "--omit-images",
            "--allow-path", batch.path
        ]
        let lines = try streamLines(batch, ids: ids)

        // First run: SIGTERM once the stage under test is busy.
        server.hanging = busy == .submit
        let first: InteractiveProcess
        if busy == .ingest {
            first = try InteractiveProcess(["stream"] + common)
            for line in lines { first.write(line) }
            for _ in lines { #expect(await first.nextLine() != nil) }  // every line answered; stdin stays open
        } else {
            first = try InteractiveProcess(["run", batch.path] + common)
            if busy == .submit {
                await eventually(timeout: 60) { server.requests.count >= 1 }
            } else {
                #expect(await first.nextLine() != nil, "the run got going")
            }
        }
        defer { if first.process.isRunning { first.process.terminate() } }
        if busy == .submit {
            try #require(server.requests.count >= 1, "submit: a submission reached the API before the signal; \(first.stderr)")
        }
        let signalled = Date()
        kill(first.process.processIdentifier, SIGTERM)
        #expect(await first.waitForExit(timeout: Self.grace + Self.slack), "\(busy): still running \(Self.grace + Self.slack) s after SIGTERM")
        let took = Date().timeIntervalSince(signalled)
        #expect(took <= Self.grace + Self.slack, "\(busy): exited \(took) s after SIGTERM")
        if first.process.isRunning { first.process.terminate() }

        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        #expect(try await reader.integrityCheck() == "ok")

        // Second run, with an API that answers: every document ends accepted, each exactly once.
        server.hanging = false
        let second: CLIRunner.Outcome
        if busy == .ingest {
            second = try await CLIRunner.run(["stream"] + common, stdin: lines.joined(separator: "\n") + "\n")
        } else {
            second = try await CLIRunner.run(["run", batch.path] + common)
        }
        #expect(second.status == 0, "\(second.stderr)")
        var documents = 0
        for id in ids {
            let report = try #require(try await reader.report(id: id))
            #expect(report.transaction.state.submissionStatus == .completed, "\(id)")
            for document in report.documents {
                documents += 1
                #expect(document.submission?.outcome == .accepted, "\(id) \(document.type)")
                let key = idempotencyKey(id, document.type.rawValue)
                #expect(server.acceptedCount(forKey: key) == 1, "\(id) \(document.type) accepted \(server.acceptedCount(forKey: key)) times")
            }
        }
        #expect(documents == ids.count * 2, "an email and a selfie per transaction")
    }

    @Test("after SIGTERM, /metrics and /readyz still answer while the documents in flight drain; SIGQUIT ends the drain")
    func metricsOutliveTheDrain() async throws {
        let folder = try temporaryFolder("shutdown-metrics")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.hanging = true
        let batch = try fieldBatch(folder, transactions: ["drain-0", "drain-1"], phone: false)
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, SELFIE: DISABLED, GOVERNMENT_ID: DISABLED, PHONE: DISABLED}
            submitter:
              kind: http
              endpoint: \(server.baseURL)/v1
              timeoutSeconds: 120
            """)
        let run = try InteractiveProcess([
            "run", batch.path, "--store", folder.appendingPathComponent("store.sqlite").path, "--pipeline", pipeline,
            "--shutdown-grace", "120", "--metrics-bind", "127.0.0.1:0", "--log-level", "notice", "--omit-images"
        ])
        defer { kill(run.process.processIdentifier, SIGKILL) }
        let port = try await announcedPort(run)
        await eventually(timeout: 30) { server.requests.count >= 1 }
        #expect(server.requests.count >= 1, "a submission is in flight")
        kill(run.process.processIdentifier, SIGTERM)
        // The pipeline has taken the signal (its intake is stopped) and waits on the submission that never ends.
        await eventually(timeout: 30) { run.stderr.contains("shutting down: the intake is stopped") }
        #expect(run.stderr.contains("shutting down: the intake is stopped"), "\(run.stderr)")
        let (metrics, metricsResponse) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        #expect((metricsResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: metrics, as: UTF8.self).contains("verify_transactions{"))
        let (ready, readyResponse) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/readyz")!)
        #expect((readyResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: ready, as: UTF8.self) == "ready\n")
        #expect(run.process.isRunning, "still draining")
        kill(run.process.processIdentifier, SIGQUIT)
        #expect(await run.waitForExit(timeout: 30), "SIGQUIT ends the drain")
        #expect(run.process.terminationReason == .exit, "ended by the run, not by the signal's default action")
        #expect(run.stderr.contains("documents (") && run.stderr.contains("transactions ("), "the summary is written: \(run.stderr)")
    }

    /// The batch as stream lines: each transaction's email and selfie, with the selfie by path.
    func streamLines(_ batch: URL, ids: [String]) throws -> [String] {
        ids.flatMap { id -> [String] in
            let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=\(id)&code=C\(id.count)"
            let selfie = batch.appendingPathComponent(id).appendingPathComponent("selfie.jpg").path
            return [
                #"{"id":"\#(id)/EMAIL","qr":"\#(qr)","type":"EMAIL","email":"\#(id)@example.com"}"#,
                #"{"id":"\#(id)/SELFIE","transactionId":"\#(id)","type":"SELFIE","selfiePath":"\#(selfie)"}"#
            ]
        }
    }
}

/// Waits until `condition` holds or `timeout` seconds pass, checking every few milliseconds (another process
/// is doing the work: a busy loop here would take its core).
func eventually(timeout: Double, _ condition: () -> Bool) async {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition(), Date() < deadline { try? await Task.sleep(for: .milliseconds(5)) }
}
