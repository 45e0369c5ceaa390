import Foundation
import LoopbackServer
import Testing

@testable import TransactionStore

@Suite("a run whose drain is cut short")
struct InterruptedRunTests {
    @Test("SIGTERM with sends hanging past the grace: the summary counts what the store holds, names the unfinished, exits 1")
    func drainCutShort() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("run-cut-short")
        defer { try? FileManager.default.removeItem(at: folder) }
        // `slow`: the API takes the document and never answers; `accept` answers at once.
        let accepted = (0..<12).map { "accept-cut-\($0)" }, hanging = (0..<4).map { "slow-cut-\($0)" }
        let batch = try fieldBatch(folder, transactions: accepted + hanging, phone: false)
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, SELFIE: DISABLED, GOVERNMENT_ID: DISABLED, PHONE: DISABLED}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 60, retry: {maxAttempts: 1}}
            """)
        let store = folder.appendingPathComponent("s.sqlite").path
        let process = try InteractiveProcess(
            ["run", batch.path, "--store", store, "--pipeline", pipeline, "--shutdown-grace", "1", "--omit-images"])
        // Every document has reached the API (the hanging ones wait for an answer that never comes) and every
        // accepted one has its result line: the run is stuck on the hanging sends only.
        var lines = 0
        while lines < accepted.count, await process.nextLine() != nil { lines += 1 }
        try #require(lines == accepted.count, "\(process.stderr)")
        await eventually(timeout: 30) { server.keys.count == accepted.count + hanging.count }
        try #require(server.keys.count == accepted.count + hanging.count)
        kill(process.process.processIdentifier, SIGTERM)
        #expect(await process.waitForExit(timeout: 30))
        #expect(process.process.terminationStatus == 1, "\(process.stderr)")

        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        let completed = try await reader.transactions(status: .completed).count
        #expect(completed == accepted.count)
        let summary = try #require(process.stderr.split(separator: "\n").last { $0.hasPrefix("verify-pipeline: ") }, "\(process.stderr)")
        #expect(summary.contains("\(accepted.count + hanging.count) transactions (\(completed) completed)"), "\(summary)")
        #expect(summary.contains("stopped before \(hanging.count) more were done"), "\(summary)")
    }
}
