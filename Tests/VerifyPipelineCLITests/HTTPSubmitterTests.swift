import Foundation
import LoopbackServer
import Protect
import SeededRandom
import Testing
import TransactionStore
import VerifyModel

@Suite("The HTTP submitter against a loopback server", .serialized)
struct HTTPSubmitterTests {
    @Test("accept, 500 twice, 409, 400, past the timeout, dropped before the answer, cut mid-body: final status, requests seen, never accepted twice")
    func faults() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("http-faults")
        defer { try? FileManager.default.removeItem(at: folder) }
        let scenarios = ["accept-1", "flaky-1", "conflict-1", "bad-1", "slow-1", "drop-1", "partial-1"]
        let batch = try fieldBatch(folder, transactions: scenarios)
        // Every answer but slow's comes at once, and slow's first never comes: under a timeout no answer comes near,
        // each count below follows from the server's answers alone, however slow the machine.
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: DISABLED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}
            submitter:
              kind: http
              endpoint: \(server.baseURL)/v1
              timeoutSeconds: 5
              retry: {maxAttempts: 4, initialBackoffMs: 20, maxBackoffMs: 100}
            """)
        let store = folder.appendingPathComponent("store.sqlite").path
        // fields.json also names a phone, which this policy disables: those lines fail with missingDocumentType.
        let outcome = try await InProcess.outcome(batch.path, store: store, pipeline: pipeline)
        #expect(outcome.status == 1)
        let lines = try resultLines(outcome.stdout).filter { $0.documentType == "EMAIL" || $0.id.hasSuffix("/EMAIL") }
        #expect(lines.count == 7)

        let expected: [String: (status: String, requests: Int, accepted: Int, error: String?)] = [
            "accept-1": ("PROCESSED", 1, 1, nil),
            "flaky-1": ("PROCESSED", 3, 1, nil),
            "conflict-1": ("PROCESSED", 1, 0, nil),  // the API says it has it already: not sent again
            "bad-1": ("REQUIRED", 1, 0, "submissionError"),  // permanent: back to its policy status
            "slow-1": ("PROCESSED", 2, 1, nil),  // never answered, timed out, retried, the API answered 409
            "drop-1": ("PROCESSED", 2, 1, nil),  // connection dropped before any answer, retried, 409
            "partial-1": ("PROCESSED", 1, 1, nil)  // 201, body cut short: the status was the answer
        ]
        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        for line in lines {
            let transaction = try #require(line.transactionId)
            let want = try #require(expected[transaction])
            let documentId = try #require(line.documentId)
            let key = idempotencyKey(transaction, "EMAIL")
            let stored = try #require(try await reader.transaction(id: transaction))
            #expect(stored.state.documents[.email]?.rawValue == want.status, "\(transaction)")
            #expect(server.requests(forKey: key) == want.requests, "\(transaction)")
            #expect(server.acceptedCount(forKey: key) == want.accepted, "\(transaction)")
            #expect(line.error?.code == want.error, "\(transaction): \(line.error?.message ?? "")")
            #expect(try await reader.submission(documentId: documentId)?.outcome == (want.error == nil ? .accepted : .failed))
        }
        #expect(server.keys.allSatisfy { server.acceptedCount(forKey: $0) <= 1 })
        // The request contract: path, Basic credentials from the QR, the Idempotency-Key of the transaction, the type
        // and the revision alone, the store's document id in the body.
        let request = try #require(server.requests.first { $0.path.contains("/accept-1/") })
        #expect(request.path == "/v1/transactions/accept-1/documents")
        #expect(request.headers["authorization"] == "Basic " + Data("accept-1:C8".utf8).base64EncodedString())
        #expect(request.headers["content-type"] == "application/json")
        let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
        #expect(Set(body.keys) == ["documentId", "documentType", "document", "documentStatus", "documentSubmissionStatus"])
        #expect(request.headers["idempotency-key"] == idempotencyKey("accept-1", "EMAIL"))
        #expect(body["documentId"] as? String == lines.first { $0.transactionId == "accept-1" }?.documentId)
        #expect(body["document"] as? [String: String] == ["email": "accept-1@example.com"])
        #expect((body["documentStatus"] as? [String: String])?["EMAIL"] == "COLLECTED")
    }

    @Test("a bearer token comes from the variable tokenEnv names; a missing variable is a configuration error")
    func bearerToken() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("http-token")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["accept-token"])
        let pipeline = try pipelineFile(
            folder,
            """
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", tokenEnv: TEST_VERIFY_TOKEN}
            """)
        let store = folder.appendingPathComponent("store.sqlite").path
        let missing = try await CLIRunner.run(["run", batch.path, "--store", store, "--pipeline", pipeline], environment: ["TEST_VERIFY_TOKEN": ""])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("'submitter.tokenEnv' names TEST_VERIFY_TOKEN, which is not set"))
        let run = try await CLIRunner.run(
            ["run", batch.path, "--store", store, "--pipeline", pipeline],
            environment: ["TEST_VERIFY_TOKEN": "s3cr3t-t0ken"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(server.requests.count == 2)
        #expect(server.requests.allSatisfy { $0.headers["authorization"] == "Bearer s3cr3t-t0ken" })
    }

    @Test("a run killed with SIGKILL and run again: the server accepted each Idempotency-Key exactly once")
    func killedAndRerun() async throws {
        let server = try LoopbackServer(latency: .milliseconds(5))
        defer { server.shutdown() }
        let folder = try temporaryFolder("http-kill")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<150).map { "accept-\($0)" })
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 5}
            """)
        let store = folder.appendingPathComponent("store.sqlite").path
        let arguments = ["run", batch.path, "--store", store, "--pipeline", pipeline, "--omit-images"]
        // Paced, so the kill lands while at least 100 documents are still to go.
        var (seed, random) = try TestSeed.make()
        let killAfter = Int.random(in: 10...200, using: &random)
        let context = "killed after \(killAfter) results, \(TestSeed.replay(seed))"
        print("[HTTP submitter, killed and rerun] \(context)")
        let first = try InteractiveProcess(arguments, paced: true)
        var printed = 0
        while printed < killAfter, await first.nextLine() != nil { printed += 1 }
        kill(first.process.processIdentifier, SIGKILL)
        #expect(await first.waitForExit())
        #expect(first.process.terminationReason == .uncaughtSignal, "\(context)")
        #expect(printed == killAfter, "\(printed) results printed; \(context)")

        let second = try await CLIRunner.run(arguments)
        #expect(second.status == 0, "\(second.stderr); \(context)")
        let lines = try resultLines(second.stdout)
        #expect(lines.count == 300, "\(context)")
        #expect(Set(lines.compactMap(\.documentId)).count == 300, "\(context)")
        let keys = Set(lines.compactMap { line in line.transactionId.map { idempotencyKey($0, line.documentType ?? "") } })
        #expect(keys.count == 300, "\(context)")
        #expect(server.keys == keys, "\(context)")
        for key in keys {
            #expect(server.acceptedCount(forKey: key) == 1, "\(context)")
        }
        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        #expect(try await reader.transactions(status: .completed).count == 150, "\(context)")
    }
}

@Suite("Protect signals", .serialized)
struct ProtectSignalsTests {
    static func signalsOfSubmissions(_ server: LoopbackServer, transaction: String) -> [String] {
        server.requests.filter { $0.path.contains("/\(transaction)/") }.compactMap { request in
            ((try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any])
                .flatMap { $0["signals"] as? [String: String] }?["data"]
        }
    }

    @Test("every submission of a transaction carries the same payload; ignored attributes are absent; risk evaluated once")
    func sharedPayload() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("protect-shared")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["accept-a", "accept-b"], selfie: true)
        let pipeline = try pipelineFile(
            folder,
            """
            protect:
              enabled: true
              envId: env-123
              deviceAttributesToIgnore: [hostname, os]
              customHost: \(server.baseURL)
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1"}
            """)
        let store = folder.appendingPathComponent("store.sqlite").path
        let run = try await InProcess.outcome(batch.path, store: store, pipeline: pipeline)
        #expect(run.status == 0, "\(run.stderr)")
        for transaction in ["accept-a", "accept-b"] {
            let payloads = Self.signalsOfSubmissions(server, transaction: transaction)
            #expect(payloads.count == 3)
            #expect(Set(payloads).count == 1, "one payload per transaction")
            let decoded = try #require(SignalsPayload(data: payloads[0]))
            #expect(decoded.envId == "env-123")
            #expect(decoded.device["hostname"] == nil && decoded.device["os"] == nil)
            #expect(decoded.device["channel"] == "folder" && decoded.device["architecture"] != nil)
            #expect(decoded.device["imageSizes"] == nil || decoded.device["imageSizes"] == "480x640")
            #expect(decoded.behavior?.arrivalsMs.isEmpty == false)
            // Stored with the transaction, and shown by status --signals.
            let shown = try await InProcess.signals(store, transaction)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any])
            #expect((object["signals"] as? [String: Any])?["data"] as? String == payloads[0])
            #expect((object["riskEvaluation"] as? [String: Any])?["id"] as? String == "risk-1")
        }
        let risk = server.requests.filter { $0.path == "/v1/environments/env-123/riskEvaluations" }
        #expect(risk.count == 2, "one risk evaluation per transaction")
        let event = try #require(try JSONSerialization.jsonObject(with: risk[0].body) as? [String: Any])
        let data = ((event["event"] as? [String: Any])?["sdk"] as? [String: Any]).flatMap { ($0["signals"] as? [String: String])?["data"] }
        #expect(
            data != nil
                && Set(Self.signalsOfSubmissions(server, transaction: "accept-a") + Self.signalsOfSubmissions(server, transaction: "accept-b"))
                    .contains(data!)
        )
    }

    @Test("behavioural data is absent when disabled")
    func behaviorDisabled() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("protect-nobehavior")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["accept-n"])
        let pipeline = try pipelineFile(
            folder,
            """
            protect: {enabled: true, envId: env-1, isBehavioralDataCollection: false}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1"}
            """)
        let store = folder.appendingPathComponent("store.sqlite").path
        #expect(try await InProcess.outcome(batch.path, store: store, pipeline: pipeline).status == 0)
        let payloads = Self.signalsOfSubmissions(server, transaction: "accept-n")
        #expect(payloads.count == 2 && Set(payloads).count == 1)
        #expect(SignalsPayload(data: payloads[0])?.behavior == nil)
        #expect(
            try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption).protectState(
                of: "accept-n", as: ProtectState.self)?.behavior == nil)
    }

    @Test("with pauseBehavioralDataOnSuccess, behavioural data stops growing once the transaction completes", arguments: [true, false])
    func pauseOnSuccess(pause: Bool) async throws {
        let folder = try temporaryFolder("protect-pause")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: OPTIONAL}
            protect: {enabled: true, envId: env-1, pauseBehavioralDataOnSuccess: \(pause)}
            """)
        let store = folder.appendingPathComponent("store.sqlite").path
        let process = try InteractiveProcess(["stream", "--store", store, "--pipeline", pipeline, "--allow-path", "Samples"])
        let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=pause-1&code=1"
        process.write(#"{"id":"1","qr":"\#(qr)","type":"EMAIL","email":"p@example.com"}"#)
        _ = await process.nextLine()
        process.write(#"{"id":"2","transactionId":"pause-1","type":"PHONE","phone":"+1 555 0100"}"#)
        _ = await process.nextLine()
        process.write(#"{"id":"3","transactionId":"pause-1","type":"SELFIE","skip":true}"#)
        _ = await process.nextLine()
        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        #expect(try await reader.transaction(id: "pause-1")?.state.submissionStatus == .completed)
        let before = try await reader.protectState(of: "pause-1", as: ProtectState.self)?.behavior
        #expect(before?.arrivalsMs.count == 2)
        // After completion: a document that cannot be decoded arrives for the same transaction.
        process.write(#"{"id":"4","transactionId":"pause-1","type":"SELFIE","selfiePath":"Samples/batch/05-corrupt-image/front.jpg"}"#)
        #expect(await process.nextLine()?.contains("documentCaptureError") == true)
        process.closeInput()
        #expect(await process.waitForExit())
        let after = try await reader.protectState(of: "pause-1", as: ProtectState.self)?.behavior
        #expect(after?.paused == pause)
        #expect(after?.failedDecodes == (pause ? 0 : 1), "paused: \(pause)")
    }
}

@Suite("Identity data stays out of the logs", .serialized)
struct LogPrivacyTests {
    @Test("a full sample run at trace level logs no name, birth date, document number, token or image")
    func noPersonalDataInLogs() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("log-privacy")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipeline = try pipelineFile(
            folder,
            """
            protect: {enabled: true, envId: env-1, isConsoleLogEnabled: true, customHost: "\(server.baseURL)"}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", tokenEnv: TEST_LOG_TOKEN}
            """)
        let run = try await CLIRunner.run(
            [
                "run", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path,
                "--pipeline", pipeline, "--log-level", "trace"
            ],
            environment: ["TEST_LOG_TOKEN": "tok-9f8e7d6c5b4a"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("protect: signals collected"), "the debug logs are really there")
        #expect(server.requests.count >= 9)
        let forbidden = [
            "ALEX", "JORDAN", "MORGAN", "ROBIN", "EXAMPLE", "SPECIMEN", "alex.sample", "+1 555",
            "1983", "07041983", "1990-11-20", "11201990", "880214", "1988",
            "D12345678", "T64-220-019", "X4R7T2B90", "ZE184226B",
            "tok-9f8e7d6c5b4a", "Bearer",
            "/9j/", "iVBORw0KGgo"
        ]
        for value in forbidden {
            #expect(!run.stderr.contains(value), "the logs contain \(value)")
        }
    }
}
