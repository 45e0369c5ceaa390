import Foundation
import LoopbackServer
import PostgresTestSupport
import SeededRandom
import Testing
import TransactionStore

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
        let seed =
            ProcessInfo.processInfo.environment["VERIFY_PIPELINE_TEST_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max >> 1)
        var random = SeededGenerator(seed: seed)
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
        let context = "seed \(seed) (VERIFY_PIPELINE_TEST_SEED), \(store), killed: \(killOne ? "the first after \(killAfter) results" : "none")"
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
        let folder = try temporaryFolder("waiter")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["slowbad-1"], phone: false)
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: DISABLED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 10}
            """)
        let arguments = ["run", batch.path, "--store", folder.appendingPathComponent("store.sqlite").path, "--pipeline", pipeline]
        // The first sends and holds the claim while the server takes 3 s to refuse; the second starts meanwhile.
        let first = try InteractiveProcess(arguments)
        await eventually(timeout: 30) { !server.requests.isEmpty }
        let second = try InteractiveProcess(arguments)
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
