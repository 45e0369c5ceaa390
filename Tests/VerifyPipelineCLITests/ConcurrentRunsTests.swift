import Foundation
import LoopbackServer
import PostgresTestSupport
import SeededRandom
import Testing
import TransactionStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// CONTRACT §8: a submission is claimed in the store before it is sent, so any number of processes on one store send
/// each document once. Five `run` processes start together on one batch and one fresh store (so their migrations
/// race too); a loopback server counts how often it accepted each Idempotency-Key.
@Suite("Five processes on one store send each document once", .serialized)
struct ConcurrentRunsTests {
    enum Store: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    @Test(
        "300 documents, 5 processes started together, then the same with one SIGKILLed midway",
        arguments: Store.allCases, [false, true])
    func fiveProcesses(store: Store, killOne: Bool) async throws {
        var (seed, random) = try TestSeed.make()
        let server = try LoopbackServer(latency: .milliseconds(2))
        defer { server.shutdown() }
        let folder = try temporaryFolder("five-\(store)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<150).map { "accept-\($0)" })
        // Without a kill, no attempt may time out (a retry would be a second request, answered 409): a generous
        // timeout on a loaded machine. With one, the lease it sets is how long the survivors wait to take over.
        let timeout = killOne ? 2 : 10
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: \(timeout), retry: {maxAttempts: 2, initialBackoffMs: 10, maxBackoffMs: 50}}
            """)
        let location =
            switch store {
            case .sqlite: folder.appendingPathComponent("store.sqlite").path
            case .postgres: try await TestPostgres.freshDatabase(prefix: "five")
            }
        let arguments = ["run", batch.path, "--store", location, "--pipeline", pipeline, "--omit-images"]
        let processes = try (0..<5).map { _ in try InteractiveProcess(arguments) }
        let killAfter = Int.random(in: 5...150, using: &random)
        if killOne {
            var printed = 0
            while printed < killAfter, await processes[0].nextLine(timeout: 60) != nil { printed += 1 }
            kill(processes[0].process.processIdentifier, SIGKILL)
        }
        let context = "\(TestSeed.replay(seed)), \(store), killed: \(killOne ? "the first after \(killAfter) results" : "none")"
        for (index, process) in processes.enumerated() {
            #expect(await process.waitForExit(timeout: 120), "process \(index) did not end; \(context)")
            if killOne, index == 0 { continue }
            #expect(process.process.terminationStatus == 0, "process \(index): \(process.stderr); \(context)")
        }

        let keys = server.keys
        let acceptedOnce = keys.filter { server.acceptedCount(forKey: $0) == 1 }.count
        let requests = server.requests.count
        print(
            "[\(store), \(killOne ? "one killed" : "none killed")] \(keys.count) keys, \(acceptedOnce) accepted exactly once, "
                + "\(requests) requests (\(context))")
        #expect(keys.count == 300, "\(context)")
        #expect(acceptedOnce == 300, "\(context)")
        #expect(keys.allSatisfy { server.acceptedCount(forKey: $0) <= 1 }, "\(context)")
        if !killOne {
            #expect(requests == 300, "without a fault, no document is sent twice; \(context)")
        }
        let completed = try await StoreLocation(parsing: location).withStore(create: false, encryption: CLIRunner.storeEncryption) { store in
            try await store.transactions(status: .completed).count
        }
        #expect(completed == 150, "\(context)")
    }

    @Test("a process that waited on another's claim does not send again what the other sent and saw refused")
    func waiterAfterRefusal() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.refusalsHeld = true
        let folder = try temporaryFolder("waiter")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["slowbad-1"], phone: false)
        // A timeout far beyond the test's waits: the first's attempt ends with the refusal, never by timing out.
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: DISABLED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 300}
            """)
        let arguments = ["run", batch.path, "--store", folder.appendingPathComponent("store.sqlite").path, "--pipeline", pipeline]
        // The first sends and holds the claim while the server holds its refusal back.
        let first = try InteractiveProcess(arguments)
        defer { if first.process.isRunning { first.process.terminate() } }
        await eventually(timeout: 60) { !server.requests.isEmpty }
        try #require(server.requests.count == 1, "the first process sent the document")
        // The second tracks the document and hands it to its submit stage, whose first act is the claim: the refusal
        // comes once its track stage has finished the document (a stage's time is recorded as it hands a document on).
        let second = try InteractiveProcess(arguments + ["--metrics-bind", "127.0.0.1:0", "--log-level", "notice"])
        defer { if second.process.isRunning { second.process.terminate() } }
        let port = try await announcedPort(second)
        var tracked = 0.0
        let deadline = ContinuousClock.now + .seconds(60)
        while tracked < 1, ContinuousClock.now < deadline, second.process.isRunning {
            let (metrics, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
            tracked = prometheusSamples(String(decoding: metrics, as: UTF8.self))[#"verify_stage_duration_seconds_count{stage="track"}"#] ?? 0
            if tracked < 1 { try await Task.sleep(for: .milliseconds(20)) }
        }
        try #require(tracked == 1, "the second process tracked the document: \(second.stderr)")
        #expect(server.requests.count == 1, "the second waits on the first's claim instead of sending")
        server.refusalsHeld = false
        let firstEnded = await first.waitForExit(), secondEnded = await second.waitForExit()
        #expect(firstEnded && secondEnded)
        var answers: [String] = []
        for process in [first, second] { if let answer = await process.nextLine(timeout: 1) { answers.append(answer) } }
        print("[waiter] \(server.requests.count) request(s); " + answers.joined(separator: " | "))
        #expect(server.requests.count == 1, "the document was sent once")
        #expect(first.process.terminationStatus == 1 && second.process.terminationStatus == 1)
        let lines = try answers.flatMap { try resultLines($0) }
        #expect(lines.count == 2 && lines.allSatisfy { $0.error?.code == "submissionError" })
        #expect(
            lines.contains {
                $0.error?.message == "sent by another process at the same time, which failed: "
                    + "submissionError: the submission endpoint answered HTTP 400"
            }, "\(answers)")
    }
}
