import Application
import DocumentOutcomes
import Foundation
import Logging
import LoopbackServer
import OperatorView
import Pipeline
import PostgresTestSupport
import ServiceLifecycle
import Synchronization
import Testing
import TransactionStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The application assembled in-process, as `run` and `stream` assemble it: no subprocess, a real store, a real
/// metrics server and a real submission API on loopback.
@Suite("The application, in-process")
struct ApplicationTests {
    /// A new folder, its pipeline file holding `yaml`, and the application over a store in it.
    static func application(_ yaml: String) throws -> (PipelineApplication, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("application-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("pipeline.yaml")
        try Data(yaml.utf8).write(to: file)
        let configuration = try PipelineConfiguration(contentsOf: file)
        let store = StoreLocation.sqlite(path: folder.appendingPathComponent("store.sqlite").path)
        var application = PipelineApplication(
            configuration: configuration, store: store, encryption: .ifEncrypted(nil), logger: Logger(label: "test"))
        application.omitImages = true
        return (application, folder)
    }

    /// A stream line with a QR opening transaction `id` and its email.
    static func emailLine(_ id: String) -> String {
        let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=3072206d-c6ce-4b15-8ad2-f87e972c7cc3&txnid=\(id)&code=800101"
        return #"{"id": "line-\#(id)", "qr": "\#(qr)", "type": "EMAIL", "email": "someone@example.com"}"# + "\n"
    }

    /// A pipe with `lines` written; its write end is closed unless `keepOpen` (the input then waits for more).
    static func pipe(_ lines: [String], keepOpen: Bool = false) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        precondition(Foundation.pipe(&ends) == 0)
        for line in lines { _ = line.utf8CString.withUnsafeBufferPointer { write(ends[1], $0.baseAddress, $0.count - 1) } }
        if !keepOpen { close(ends[1]) }
        return (ends[0], ends[1])
    }

    /// What a run in the background shows the test: the group it runs, once started, and whether it has ended.
    final class RunState: Sendable {
        let group = Mutex<ServiceGroup?>(nil)
        let finished = Mutex(false)

        /// Waits, on state, until `condition` holds; the run must not end first.
        func wait(until condition: () -> Bool, _ what: String) async throws {
            while !condition() {
                try #require(!finished.withLock { $0 }, "the run ended before \(what)")
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func shutDownGracefully() async throws {
            await try #require(group.withLock { $0 }).triggerGracefulShutdown()
        }
    }

    /// The application run in the background over a stream.
    static func background(_ application: PipelineApplication, reading input: Int32) -> (task: Task<RunSummary, any Error>, state: RunState) {
        let state = RunState()
        let task = Task {
            defer { state.finished.withLock { $0 = true } }
            return try await application.run(.input(LineSource(fileDescriptor: input)), emit: { _, _ in true }) { started in
                state.group.withLock { $0 = started }
            }
        }
        return (task, state)
    }

    static let emailOnly = """
        policy:
          documents: {EMAIL: REQUIRED, SELFIE: DISABLED, GOVERNMENT_ID: DISABLED, PHONE: DISABLED}
        """

    @Test("a stream through the application: an outcome per line, the summary, and each transaction completed in the store")
    func stream() async throws {
        let (application, folder) = try Self.application(Self.emailOnly)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Self.pipe([Self.emailLine("txn-app-1"), Self.emailLine("txn-app-2")])
        defer { close(input.read) }
        let outcomes = Mutex<[DocumentOutcome]>([])
        let summary = try await application.run(.input(LineSource(fileDescriptor: input.read))) { outcome, _ in
            outcomes.withLock { $0.append(outcome) }
            return true
        }
        #expect(summary.documents == 2 && summary.failed == 0 && summary.transactions == 2 && summary.completed == 2)
        #expect(outcomes.withLock { $0.count } == 2)
        let statuses = try await application.store.withStore(create: false, readOnly: true) { store in
            try await store.transactions(status: nil).map(\.status)
        }
        #expect(statuses == [.completed, .completed])
    }

    @Test("after a graceful shutdown, /metrics still answers while a document in flight drains; cancelling ends the run")
    func metricsOutliveTheDrain() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.hanging = true
        var (application, folder) = try Self.application(
            Self.emailOnly + """

                submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 120}
                """)
        defer { try? FileManager.default.removeItem(at: folder) }
        application.shutdownGrace = .seconds(120)
        let port = Mutex<Int?>(nil)
        application.metrics = .init(bind: try BindAddress(parsing: "127.0.0.1:0"), token: nil, limits: ConnectionLimits()) { bound in
            port.withLock { $0 = bound }
        }
        let input = Self.pipe([Self.emailLine("txn-drain-1")], keepOpen: true)
        defer {
            close(input.read)
            close(input.write)
        }
        let (run, state) = Self.background(application, reading: input.read)
        // Wait on state: the submission reached the API (which never answers), and the server listens.
        try await state.wait(until: { !server.requests.isEmpty && port.withLock { $0 } != nil }, "its submission was sent")
        try await state.shutDownGracefully()
        let url = URL(string: "http://127.0.0.1:\(try #require(port.withLock { $0 }))/metrics")!
        let (body, response) = try await URLSession.shared.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self).contains("verify_transactions{"))
        #expect(!state.finished.withLock { $0 }, "still draining: the submission has not ended")
        run.cancel()
        _ = await run.result
        #expect(state.finished.withLock { $0 })
    }

    @Test("with a PostgreSQL store, the connection pool is the group's and outlives the drain: a document done after SIGTERM is recorded")
    func poolOutlivesTheDrain() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.hanging = true
        var (application, folder) = try Self.application(
            Self.emailOnly + """

                submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 1, retry: {maxAttempts: 60, initialBackoffMs: 10, maxBackoffMs: 10}}
                """)
        defer { try? FileManager.default.removeItem(at: folder) }
        application.store = try StoreLocation(parsing: try await TestPostgres.freshDatabase(prefix: "application"))
        application.shutdownGrace = .seconds(120)
        let input = Self.pipe([Self.emailLine("txn-pool-1")], keepOpen: true)
        defer {
            close(input.read)
            close(input.write)
        }
        let (run, state) = Self.background(application, reading: input.read)
        // Wait on state: the first attempt reached the API, which does not answer it.
        try await state.wait(until: { !server.requests.isEmpty }, "its submission was sent")
        try await state.shutDownGracefully()
        // The next attempt, after the first one's timeout, is answered: the document ends during the drain, and its
        // submission and the transaction's completion are written through the pool. (Attempts hang until this line
        // runs: 60 of them leave a loaded machine a minute to get here.)
        server.hanging = false
        let summary = try await run.value
        #expect(summary.documents == 1 && summary.completed == 1, "\(summary)")
        let statuses = try await application.store.withStore(create: false, readOnly: true) { store in
            try await store.transactions(status: nil).map(\.status)
        }
        #expect(statuses == [.completed])
    }
}
