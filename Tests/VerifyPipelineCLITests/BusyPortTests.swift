import Foundation
import LoopbackServer
import PostgresTestSupport
import Testing
import WorkQueues

@testable import TransactionStore

/// A port another process holds (two runs given the same `--metrics-bind`): the command ends at start with exit 2
/// and one line, before it reads or claims anything, instead of running without its server or losing results.
@Suite("A busy port fails the command at start", .serialized)
struct BusyPortTests {
    static func expectRefused(_ outcome: CLIRunner.Outcome, port: Int, option: String) {
        #expect(outcome.status == 2, "\(outcome.stderr)")
        #expect(outcome.stderr == "verify-pipeline: cannot listen on 127.0.0.1:\(port) (\(option)): Address already in use\n")
        #expect(outcome.stdout.isEmpty, "no result printed: nothing was read")
    }

    @Test("run and stream with a busy --metrics-bind: exit 2, one line, no input read, nothing stored")
    func runAndStream() async throws {
        let holder = try LoopbackServer()
        defer { holder.shutdown() }
        let folder = try temporaryFolder("busy-metrics")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let bind = "127.0.0.1:\(holder.port)"
        Self.expectRefused(
            try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--metrics-bind", bind]),
            port: holder.port, option: "--metrics-bind")
        let line =
            #"{"id":"s1","qr":"https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=busy-1&code=7","type":"EMAIL","email":"a@example.com"}"#
        Self.expectRefused(
            try await CLIRunner.run(["stream", "--store", store, "--metrics-bind", bind], stdin: line + "\n"),
            port: holder.port, option: "--metrics-bind")
        let opened = try await StoreLocation(parsing: store).withStore(create: false, encryption: CLIRunner.storeEncryption) { store in
            try await store.transactions(status: nil).count
        }
        #expect(opened == 0, "no transaction was opened")
    }

    @Test("worker with a busy --metrics-bind: exit 2, one line, every queued item still queued")
    func worker() async throws {
        let holder = try LoopbackServer()
        defer { holder.shutdown() }
        let store = try await freshPostgresStore()
        let enqueue = try await CLIRunner.run(["enqueue", "Samples/batch", "--store", store])
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        Self.expectRefused(
            try await CLIRunner.run(["worker", "--exit-when-empty", "--store", store, "--metrics-bind", "127.0.0.1:\(holder.port)"]),
            port: holder.port, option: "--metrics-bind")
        let queued = try #require(Int(try await TestPostgres.text(store, "SELECT count(*)::text FROM work_items WHERE state = 'QUEUED'") ?? ""))
        let all = try #require(Int(try await TestPostgres.text(store, "SELECT count(*)::text FROM work_items") ?? ""))
        #expect(all > 0 && queued == all, "\(queued) of \(all) items queued: none claimed")
    }

    @Test("serve on a busy port: exit 2, one line")
    func serve() async throws {
        let holder = try LoopbackServer()
        defer { holder.shutdown() }
        let folder = try temporaryFolder("busy-serve")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        #expect(try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--omit-images"]).status == 1)
        Self.expectRefused(
            try await CLIRunner.run(["serve", "--store", store, "--bind", "127.0.0.1:\(holder.port)"]),
            port: holder.port, option: "--bind")
    }
}
