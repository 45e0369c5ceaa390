import BlockingWaits
import Foundation
import LoopbackServer
import PostgresTestSupport
import SeededRandom
import Testing
import WorkQueues

@testable import TransactionStore

/// A worker fleet on a PostgreSQL server that goes away under it: every client session ended twice and the server
/// crashed and restarted once, each at a point drawn from the seed (counted in submissions the API has seen, not in
/// time). Nothing may be lost or sent twice: a store error is not the document's failure, and a worker whose write of
/// an item's end failed stops renewing that item's lease, so another redoes it.
@Suite("workers under PostgreSQL faults", .serialized)
struct WorkerFaultTests {
    static let transactions = 300
    /// Trials per run: `VERIFY_PIPELINE_FLEET_TRIALS` (5 for the issue's measure); 1 in the suite, to keep its time.
    static let trials = Int(ProcessInfo.processInfo.environment["VERIFY_PIPELINE_FLEET_TRIALS"] ?? "") ?? 1

    @Test("3 workers, 300 transactions, sessions ended twice and the server restarted once: each document sent once, all COMPLETED, none CLAIMED")
    func fleetUnderFaults() async throws {
        let server = try await offCooperativePool { try PrivatePostgres() }
        defer { server.stop() }
        let (seed, generator) = try TestSeed.make()
        var random = generator
        print("[fleet under faults] \(TestSeed.replay(seed)), \(Self.trials) trials")
        for trial in 1...Self.trials {
            try await Self.trial(trial, server: server, random: &random, seed: seed)
        }
    }

    static func trial(_ trial: Int, server: PrivatePostgres, random: inout SeededGenerator, seed: UInt64) async throws {
        let replay = "trial \(trial), \(TestSeed.replay(seed))"
        let database = "fleet_\(trial)_\(UUID().uuidString.prefix(8).lowercased())"
        try await offCooperativePool { try server.createDatabase(database) }
        let store = server.url(database: database)
        let api = try LoopbackServer(latency: .milliseconds(3))
        defer { api.shutdown() }
        let folder = try temporaryFolder("fleet-faults")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<transactions).map { "accept-\(trial)-\($0)" }, phone: false)
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, SELFIE: DISABLED, GOVERNMENT_ID: DISABLED, PHONE: DISABLED}
            submitter:
              kind: http
              endpoint: \(api.baseURL)/v1
              timeoutSeconds: 5
              retry: {maxAttempts: 5, initialBackoffMs: 50, maxBackoffMs: 500}
            """)
        let enqueue = try await CLIRunner.run(["enqueue", batch.path, "--store", store, "--pipeline", pipeline])
        try #require(enqueue.status == 0, "\(enqueue.stderr) (\(replay))")

        // The faults, in the order they strike, each once the API has seen this many submissions.
        var points = (0..<3).map { _ in Int.random(in: 20...(transactions - 40), using: &random) }.sorted()
        for index in 1..<points.count where points[index] < points[index - 1] + 10 { points[index] = points[index - 1] + 10 }
        var faults: [(at: Int, name: String)] = [(points[0], "sessions ended"), (points[1], "server restarted"), (points[2], "sessions ended")]
        faults.swapAt(1, Int.random(in: 0...2, using: &random))
        faults = faults.enumerated().map { (points[$0.offset], $0.element.name) }
        print("[fleet under faults] \(replay): \(faults.map { "\($0.name) at \($0.at)" }.joined(separator: ", "))")

        let arguments = ["worker", "--exit-when-empty", "--lease-seconds", "2", "--store", store, "--pipeline", pipeline, "--omit-images"]
        let workers = try (0..<3).map { _ in try InteractiveProcess(arguments) }
        for fault in faults {
            await eventually(timeout: 120) { api.requests.count >= fault.at }
            try #require(api.requests.count >= fault.at, "the API saw \(api.requests.count) submissions, waiting for \(fault.at) (\(replay))")
            try await offCooperativePool {
                if fault.name == "server restarted" { try server.restart() } else { try server.terminateSessions() }
            }
        }
        for worker in workers {
            #expect(await worker.waitForExit(timeout: 240), "a worker never exited (\(replay))")
            if worker.process.isRunning { worker.process.terminate() }
        }

        // Every document accepted once by the API (a repeat, under its Idempotency-Key, is answered 409 and counted
        // apart), every transaction COMPLETED, every item DONE.
        #expect(api.keys.count == transactions, "\(api.keys.count) documents reached the API (\(replay))")
        #expect(api.keys.allSatisfy { api.acceptedCount(forKey: $0) == 1 }, "a document was accepted twice (\(replay))")
        try await StoreLocation(parsing: store).withWorkQueue(create: false, encryption: CLIRunner.storeEncryption) { reader, queue in
            let summaries = try await reader.transactions(status: nil)
            #expect(summaries.count == transactions, "\(replay)")
            let open = summaries.filter { $0.status != .completed }
            #expect(open.isEmpty, "\(open.count) transactions not COMPLETED, e.g. \(open.first.map { "\($0.id) \($0.status)" } ?? "") (\(replay))")
            for transaction in open {
                for worker in workers {
                    for line in worker.unreadLines where line.contains("\"\(transaction.id)\"") { print("[fleet] \(line)") }
                }
                let report = try await reader.report(id: transaction.id)
                print("[fleet] \(transaction.id): \(report.map { "\($0.documents.map(\.submission)) \($0.history)" } ?? "")")
            }
            #expect(try await queue.openItems() == 0, "items left QUEUED or CLAIMED (\(replay))")
        }
        for worker in workers where worker.process.terminationStatus != 0 {
            Issue.record("a worker exited \(worker.process.terminationStatus) (\(replay)): \(worker.stderr.suffix(2000))")
        }
    }
}
