import Foundation
import LoopbackServer
import PostgresTestSupport
import Testing
import TransactionStore

/// Issue 14's faults of the submission endpoint, each a run of the application in-process (through the composition
/// root `run` uses; the command line where it is what is tested: a configuration error, SIGTERM) against real
/// loopback servers. Each case prints the document's final status, the requests each server saw and how often the document
/// was accepted.
@Suite("Submission faults: redirects, slow and large bodies, TLS", .serialized)
struct SubmissionFaultTests {
    struct Case {
        var folder: URL
        var store: String
        var batch: URL
        var pipeline: String
    }

    static func makeCase(_ name: String, transaction: String, submitter: String) throws -> Case {
        let folder = try temporaryFolder("submission-\(name)")
        let batch = try fieldBatch(folder, transactions: [transaction], phone: false)
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: DISABLED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}
            submitter: \(submitter)
            """)
        return Case(folder: folder, store: folder.appendingPathComponent("store.sqlite").path, batch: batch, pipeline: pipeline)
    }

    /// `run` over the case's batch, in-process: the exit status the command would give (1 when a document failed) and
    /// the result lines it would print.
    static func run(_ test: Case) async throws -> CLIRunner.Outcome {
        try await InProcess.outcome(test.batch.path, store: test.store, pipeline: test.pipeline)
    }

    /// `run` over the case's batch, and how long it took (printed).
    static func timedRun(_ name: String, _ test: Case) async throws -> (CLIRunner.Outcome, Duration) {
        let start = ContinuousClock.now
        let run = try await Self.run(test)
        let elapsed = ContinuousClock.now - start
        print("[\(name)] run ended after \(elapsed)")
        return (run, elapsed)
    }

    /// The EMAIL document's status as stored, printed with what the servers saw.
    static func report(_ name: String, _ test: Case, transaction: String, servers: [(String, LoopbackServer)]) async throws -> String? {
        let store = try await TransactionStore.sqlite(path: test.store, create: false, encryption: CLIRunner.storeEncryption)
        let status = try await store.transaction(id: transaction)?.state.documents[.email]?.rawValue
        let seen = servers.map { name, server in
            "\(name) saw \(server.requests.count) request(s), accepted \(server.keys.map { server.acceptedCount(forKey: $0) }.reduce(0, +))"
        }
        print("[\(name)] final status \(status ?? "none"); " + seen.joined(separator: "; "))
        return status
    }

    @Test(
        "301, 302, 303, 307 and 308: not followed, the other server sees nothing, a submissionError naming the status, back to REQUIRED",
        arguments: [("moved-1", 301), ("found-1", 302), ("seeother-1", 303), ("temporary-1", 307), ("permanent-1", 308)])
    func redirect(transaction: String, code: Int) async throws {
        let endpoint = try LoopbackServer(), elsewhere = try LoopbackServer()
        defer {
            endpoint.shutdown()
            elsewhere.shutdown()
        }
        endpoint.redirectTarget = elsewhere.baseURL
        let test = try Self.makeCase(
            "redirect", transaction: transaction,
            submitter: """
                {kind: http, endpoint: "\(endpoint.baseURL)/v1", timeoutSeconds: 2, retry: {maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 20}}
                """)
        defer { try? FileManager.default.removeItem(at: test.folder) }
        let run = try await Self.run(test)
        #expect(run.status == 1)
        let line = try #require(try resultLines(run.stdout).first)
        #expect(line.error?.code == "submissionError")
        #expect(line.error?.message.contains("HTTP \(code)") == true, "\(line.error?.message ?? "")")
        let status = try await Self.report(
            "HTTP \(code)", test, transaction: transaction, servers: [("endpoint", endpoint), ("elsewhere", elsewhere)])
        #expect(status == "REQUIRED")
        #expect(endpoint.requests.count == 1, "a redirect is not retried")
        #expect(elsewhere.requests.isEmpty)
    }

    @Test("a 200 whose body trickles a byte a second is accepted once, and the run ends within timeoutSeconds")
    func trickle() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let test = try Self.makeCase(
            "trickle", transaction: "trickle-1",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 2, retry: {maxAttempts: 2, initialBackoffMs: 10, maxBackoffMs: 20}}
                """)
        defer { try? FileManager.default.removeItem(at: test.folder) }
        let (run, elapsed) = try await Self.timedRun("trickle", test)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        // The whole body would take 100,000 s. Within timeoutSeconds × maxAttempts, plus room for starting the
        // process on a CI machine busy with other suites (6.4 s seen end to end under the full suite).
        #expect(elapsed < .seconds(2 * 2 + 15))
        #expect(try await Self.report("trickle", test, transaction: "trickle-1", servers: [("endpoint", server)]) == "PROCESSED")
        #expect(server.requests.count == 1)
        #expect(server.keys.map { server.acceptedCount(forKey: $0) } == [1])
    }

    @Test("SIGTERM during a trickling body ends the run within the grace period; the document is left to a re-run, which sends it once")
    func trickleThenSigterm() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let test = try Self.makeCase(
            "trickle-term", transaction: "trickle-2",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 120}
                """)
        defer { try? FileManager.default.removeItem(at: test.folder) }
        let process = try InteractiveProcess(["run", test.batch.path, "--store", test.store, "--pipeline", test.pipeline, "--shutdown-grace", "2"])
        defer { if process.process.isRunning { process.process.terminate() } }
        // Into the trickle: the run is reading a body byte by byte.
        await eventually(timeout: 60) { server.trickledBytes >= 1 }
        try #require(server.trickledBytes >= 1, "the run never read the trickling body: \(server.requests.count) request(s)")
        let start = ContinuousClock.now
        kill(process.process.processIdentifier, SIGTERM)
        #expect(await process.waitForExit(timeout: 60))
        let elapsed = ContinuousClock.now - start
        print("[trickle + SIGTERM] exited \(elapsed) after the signal, status \(process.process.terminationStatus)")
        #expect(process.process.terminationReason == .exit)
        // Grace 2 s, and room for the exit on a machine busy with other suites (ShutdownTests.slack); a run that
        // ignored the signal would read the body until the 120 s timeout.
        #expect(elapsed < .seconds(2 + ShutdownTests.slack), "grace period 2 s")
        // The send was cut short: nothing recorded, the document stays COLLECTED for a later run.
        #expect(try await Self.report("trickle + SIGTERM", test, transaction: "trickle-2", servers: [("endpoint", server)]) == "COLLECTED")
        #expect(server.requests.count == 1)
        let key = try #require(server.keys.first)
        let store = try await TransactionStore.sqlite(path: test.store, create: false, encryption: CLIRunner.storeEncryption)
        #expect(try await store.submission(documentId: key)?.outcome != .accepted)

        // The API had taken it (its 200 was on the way): the re-run sends it under the same key, and the 409 settles it.
        let rerun = try await Self.run(test)
        #expect(rerun.status == 0, "\(rerun.stdout)")
        #expect(try await Self.report("trickle + SIGTERM, re-run", test, transaction: "trickle-2", servers: [("endpoint", server)]) == "PROCESSED")
        #expect(server.keys == [key], "the re-run sent the same Idempotency-Key")
        #expect(server.acceptedCount(forKey: key) == 1)
    }

    @Test("a risk evaluation whose 200 trickles a byte a second holds the run no longer than its timeout; the document is accepted once")
    func riskTrickle() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.riskTrickles = true
        let test = try Self.makeCase(
            "risk-trickle", transaction: "accept-risk",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 2, retry: {maxAttempts: 2, initialBackoffMs: 10, maxBackoffMs: 20}}
                protect: {enabled: true, envId: env-1, customHost: "\(server.baseURL)"}
                """)
        defer { try? FileManager.default.removeItem(at: test.folder) }
        let (run, elapsed) = try await Self.timedRun("risk trickle", test)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        // The body would take 100,000 s; the evaluation's own timeout is 2 s, and room for a busy CI machine.
        #expect(elapsed < .seconds(2 + 15))
        #expect(server.requests.contains { $0.path.hasSuffix("/riskEvaluations") })
        #expect(try await Self.report("risk trickle", test, transaction: "accept-risk", servers: [("endpoint", server)]) == "PROCESSED")
        let status = try await CLIRunner.run(["status", "accept-risk", "--signals", "--json", "--store", test.store])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect((object["riskEvaluation"] as? [String: Any])?["error"] as? String == "timed out", "\(status.stdout)")
    }

    @Test("a 200 with a 2 MB body is accepted, once")
    func bigBody() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let test = try Self.makeCase(
            "big", transaction: "big-1",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 5}
                """)
        defer { try? FileManager.default.removeItem(at: test.folder) }
        let run = try await Self.run(test)
        #expect(run.status == 0, "\(run.stdout)")
        #expect(try await Self.report("2 MB body", test, transaction: "big-1", servers: [("endpoint", server)]) == "PROCESSED")
        #expect(server.requests.count == 1)
        #expect(server.keys.map { server.acceptedCount(forKey: $0) } == [1])
        let report = try await TransactionStore.sqlite(path: test.store, create: false, encryption: CLIRunner.storeEncryption).report(id: "big-1")
        let document = try #require(report?.documents.first)
        #expect(server.keys == [idempotencyKey("big-1", document.type.rawValue)])
        #expect(document.submission?.outcome == .accepted)
    }

    @Test("https: a certificate from an unknown CA is refused without retries; with submitter.caFile it is accepted")
    func tls() async throws {
        let certificates = try TestPostgres.certificates()
        let server = try LoopbackServer(certificate: certificates + "/server.pem", key: certificates + "/server.key")
        defer { server.shutdown() }
        #expect(server.baseURL.hasPrefix("https://"))
        let untrusted = try Self.makeCase(
            "tls-untrusted", transaction: "accept-tls",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 5, retry: {maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 20}}
                """)
        defer { try? FileManager.default.removeItem(at: untrusted.folder) }
        let refused = try await Self.run(untrusted)
        #expect(refused.status == 1)
        let line = try #require(try resultLines(refused.stdout).first)
        #expect(line.error?.code == "submissionError")
        #expect(line.error?.message.contains("TLS") == true, "\(line.error?.message ?? "")")
        #expect(try await Self.report("https, unknown CA", untrusted, transaction: "accept-tls", servers: [("endpoint", server)]) == "REQUIRED")
        #expect(server.requests.isEmpty)

        let trusted = try Self.makeCase(
            "tls-trusted", transaction: "accept-tls",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 5, caFile: "\(certificates)/ca.pem"}
                """)
        defer { try? FileManager.default.removeItem(at: trusted.folder) }
        let accepted = try await Self.run(trusted)
        #expect(accepted.status == 0, "\(accepted.stdout)")
        #expect(try await Self.report("https, caFile", trusted, transaction: "accept-tls", servers: [("endpoint", server)]) == "PROCESSED")
        #expect(server.requests.count == 1)

        let missingCA = try Self.makeCase(
            "tls-missing-ca", transaction: "accept-tls",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", caFile: "\(trusted.folder.path)/nothing.pem"}
                """)
        defer { try? FileManager.default.removeItem(at: missingCA.folder) }
        let misconfigured = try await CLIRunner.run(["run", missingCA.batch.path, "--store", missingCA.store, "--pipeline", missingCA.pipeline])
        #expect(misconfigured.status == 2)
        #expect(misconfigured.stderr.contains("'submitter.caFile'"))
    }

    @Test("https: a trusted certificate for another host name is refused at once, not retried")
    func tlsOtherHost() async throws {
        let certificates = try TestPostgres.certificates()
        let server = try LoopbackServer(certificate: certificates + "/other-host.pem", key: certificates + "/other-host.key")
        defer { server.shutdown() }
        let test = try Self.makeCase(
            "tls-other-host", transaction: "accept-host",
            submitter: """
                {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 5, caFile: "\(certificates)/ca.pem",
                 retry: {maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 20}}
                """)
        defer { try? FileManager.default.removeItem(at: test.folder) }
        let run = try await Self.run(test)
        #expect(run.status == 1)
        let line = try #require(try resultLines(run.stdout).first)
        #expect(line.error?.code == "submissionError")
        // A retried failure would say "gave up after 3 attempts".
        #expect(line.error?.message == "the submission endpoint's TLS certificate does not name its host", "\(line.error?.message ?? "")")
        #expect(try await Self.report("https, other host", test, transaction: "accept-host", servers: [("endpoint", server)]) == "REQUIRED")
        #expect(server.requests.isEmpty)
    }
}
