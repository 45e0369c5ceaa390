import Foundation
import LoopbackServer
import Testing

/// The review loop from the command line (CONTRACT §12), on both stores: every failed document in the queue, and an
/// operator's accept, replay and reject carried out exactly once.
@Suite("The review queue: verify-pipeline review", .serialized)
struct ReviewCommandTests {
    static let samples = CLIRunner.root.appendingPathComponent("Samples/batch").path

    static func reviews(_ store: String, _ extra: [String] = []) async throws -> [[String: Any]] {
        let listed = try await CLIRunner.run(["review", "list", "--json", "--store", store] + extra)
        #expect(listed.status == 0, "\(listed.stderr)")
        return try listed.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    static func status(_ store: String, _ id: String) async throws -> [String: Any] {
        let shown = try await CLIRunner.run(["status", id, "--json", "--store", store])
        return try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
    }

    @Test("the sample batch's three failures are in the queue, with their codes and fields; reject closes 007 once", arguments: SampleStore.allCases)
    func sampleFailures(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("review-samples")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await kind.fresh(folder, "s")
        let run = try await InProcess.run(Self.samples, store: store)
        #expect(run.summary.failed == 3, "\(run.summary)")
        let open = try await Self.reviews(store)
        let byTransaction = Dictionary(uniqueKeysWithValues: open.map { ($0["transactionId"] as? String ?? "", $0) })
        #expect(Set(byTransaction.keys) == ["txn-batch-005", "txn-batch-006", "txn-batch-007"], "\(open)")
        #expect(byTransaction["txn-batch-005"]?["code"] as? String == "documentCaptureError")
        #expect(byTransaction["txn-batch-006"]?["field"] as? String == "documentNumber")
        #expect(byTransaction["txn-batch-007"]?["code"] as? String == "documentSubmissionTimeoutError")
        #expect(
            open.allSatisfy {
                $0["state"] as? String == "open" && $0["inputs"] as? String == "kept" && $0["documentType"] as? String == "GOVERNMENT_ID"
            })
        // Past its expiry a document is accepted by nobody: a replay answers the timeout again; only reject closes it.
        let replayed = try await CLIRunner.run(["review", "replay", "txn-batch-007", "GOVERNMENT_ID", "--operator", "alice", "--store", store])
        #expect(replayed.status == 1 && replayed.stdout.contains("documentSubmissionTimeoutError"), "\(replayed.stdout) \(replayed.stderr)")
        let rejected = try await CLIRunner.run(
            ["review", "reject", "txn-batch-007", "GOVERNMENT_ID", "--reason", "expired", "--operator", "alice", "--store", store])
        #expect(rejected.status == 0 && rejected.stdout.contains("rejected"), "\(rejected.stdout) \(rejected.stderr)")
        let again = try await CLIRunner.run(
            ["review", "reject", "txn-batch-007", "GOVERNMENT_ID", "--reason", "expired", "--operator", "bob", "--store", store])
        #expect(again.status == 1 && again.stdout.contains("rejected already"))
        #expect(try await Self.reviews(store).count == 2)
        let status = try await Self.status(store, "txn-batch-007")
        let history = status["history"] as? [[String: Any]] ?? []
        #expect(history.contains { ($0["reason"] as? String) == "review reject by alice: expired" }, "\(history)")
        #expect((status["documentStatus"] as? [String: String])?["GOVERNMENT_ID"] == "REQUIRED", "a required document stays required")
    }

    @Test(
        "a submission the endpoint refuses with 400 stays open, holds its transaction; replay after the fix sends it once",
        arguments: SampleStore.allCases)
    func replayFixedSubmission(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("review-replay")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let store = try await kind.fresh(folder, "s")
        let pipeline = try pipelineFile(
            folder,
            """
            policy: {documents: {GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, EMAIL: OPTIONAL, PHONE: OPTIONAL}}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1"}
            """)
        let batch = try fieldBatch(folder, transactions: ["fixable-1"], phone: false)
        let run = try await CLIRunner.run(["run", batch.path, "--store", store, "--pipeline", pipeline])
        #expect(run.status == 1, "\(run.stderr)")
        let open = try await Self.reviews(store)
        #expect(open.count == 1 && open.first?["kind"] as? String == "submission" && open.first?["documentType"] as? String == "EMAIL", "\(open)")
        var status = try await Self.status(store, "fixable-1")
        #expect(status["documentSubmissionStatus"] as? String != "COMPLETED", "an optional document under review holds its transaction")
        #expect((status["documentStatus"] as? [String: String])?["EMAIL"] == "OPTIONAL")
        let requestsBefore = server.requests.count
        server.refusingFixable = false
        let replayed = try await CLIRunner.run([
            "review", "replay", "fixable-1", "EMAIL", "--operator", "alice", "--store", store, "--pipeline", pipeline
        ])
        #expect(replayed.status == 0 && replayed.stdout.contains("replayed"), "\(replayed.stdout) \(replayed.stderr)")
        #expect(server.requests.count == requestsBefore + 1, "sent once")
        #expect(server.keys.count == 1, "under the same idempotency key")
        status = try await Self.status(store, "fixable-1")
        #expect(
            (status["documentStatus"] as? [String: String])?["EMAIL"] == "PROCESSED" && status["documentSubmissionStatus"] as? String == "COMPLETED")
        let again = try await CLIRunner.run([
            "review", "replay", "fixable-1", "EMAIL", "--operator", "alice", "--store", store, "--pipeline", pipeline
        ])
        #expect(again.status == 1 && server.requests.count == requestsBefore + 1, "a closed review sends nothing")
        #expect(try await Self.reviews(store).isEmpty)
    }

    @Test("replay --all [--code]: every open review of that code sent again once; then nothing is left to replay")
    func replayAll() async throws {
        let folder = try temporaryFolder("review-replay-all")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let pipeline = try pipelineFile(
            folder,
            """
            policy: {documents: {GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, EMAIL: OPTIONAL, PHONE: OPTIONAL}}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1"}
            """)
        let batch = try fieldBatch(folder, transactions: ["fixable-1", "fixable-2"], phone: false)
        #expect(try await CLIRunner.run(["run", batch.path, "--store", store, "--pipeline", pipeline]).status == 1)
        let open = try await Self.reviews(store)
        let code = try #require(open.first?["code"] as? String)
        #expect(open.count == 2 && open.allSatisfy { $0["code"] as? String == code }, "\(open)")
        // Naming a review and --all at once, or neither, is a usage error.
        let both = try await CLIRunner.run(["review", "replay", "fixable-1", "EMAIL", "--all", "--operator", "alice", "--store", store])
        #expect(both.status == 2 && both.stderr.contains("--all names no review"), "\(both.stderr)")
        let neither = try await CLIRunner.run(["review", "replay", "--operator", "alice", "--store", store])
        #expect(neither.status == 2 && neither.stderr.contains("name TRANSACTION TYPE, or --id N"), "\(neither.stderr)")
        // Another code's reviews are left alone.
        let other = try await CLIRunner.run(
            ["review", "replay", "--all", "--code", "documentCaptureError", "--operator", "alice", "--store", store, "--pipeline", pipeline])
        #expect(other.stderr.contains("no open review to replay"), "\(other.stdout) \(other.stderr)")
        #expect(try await Self.reviews(store).count == 2)
        let requestsBefore = server.requests.count
        server.refusingFixable = false
        let replayed = try await CLIRunner.run(
            ["review", "replay", "--all", "--code", code, "--operator", "alice", "--store", store, "--pipeline", pipeline])
        #expect(replayed.status == 0, "\(replayed.stdout) \(replayed.stderr)")
        #expect(replayed.lines.filter { $0.contains("replayed") }.count == 2, "\(replayed.stdout)")
        #expect(server.requests.count == requestsBefore + 2, "each sent once")
        #expect(try await Self.reviews(store).isEmpty)
        for id in ["fixable-1", "fixable-2"] { #expect(try await Self.status(store, id)["documentSubmissionStatus"] as? String == "COMPLETED") }
        let again = try await CLIRunner.run(["review", "replay", "--all", "--operator", "alice", "--store", store, "--pipeline", pipeline])
        #expect(again.stderr.contains("no open review to replay") && server.requests.count == requestsBefore + 2)
    }

    @Test("accept: complete fields are collected and sent once, with the operator in the history; bad fields refused; two at once send once")
    func accept() async throws {
        let folder = try temporaryFolder("review-accept")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let pipeline = try pipelineFile(folder, "submitter: {kind: http, endpoint: \"\(server.baseURL)/v1\"}\n")
        let run = try await CLIRunner.run(["run", Self.samples, "--store", store, "--pipeline", pipeline, "--omit-images"])
        #expect(run.status == 1)
        func fields(_ json: String) throws -> String {
            let url = folder.appendingPathComponent("fields-\(UUID()).json")
            try Data(json.utf8).write(to: url)
            return url.path
        }
        func accept(_ id: String, _ file: String, _ name: String = "alice") async throws -> CLIRunner.Outcome {
            try await CLIRunner.run(
                ["review", "accept", id, "GOVERNMENT_ID", "--fields", file, "--operator", name, "--store", store, "--pipeline", pipeline])
        }
        let sent = server.requests.count
        // Refused with the contract's code, naming what is wrong; nothing sent.
        let unknown = try await accept("txn-batch-006", try fields(#"{"lastName":"DOE","nickname":"x"}"#))
        #expect(unknown.status == 1 && unknown.stderr.contains("invalidKeyMap") && unknown.stderr.contains("nickname"), "\(unknown.stderr)")
        let noBirthDate = try await accept(
            "txn-batch-006", try fields(#"{"lastName":"DOE","documentNumber":"X1234567","dateOfExpiry":"2031-01-01"}"#))
        #expect(noBirthDate.status == 1 && noBirthDate.stdout.contains("documentCaptureError") && noBirthDate.stdout.contains("date of birth"))
        // The ICAO 9303 specimen's document number with its check digit changed from 6 to 5.
        let badMRZ = try await accept(
            "txn-batch-006",
            try fields(#"{"mrzData":"P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C<3UTO6908061F9406236ZE184226B<<<<<15"}"#))
        #expect(badMRZ.status == 1 && badMRZ.stdout.contains("documentCaptureError"), "\(badMRZ.stdout)")
        #expect(server.requests.count == sent, "nothing sent for refused fields")
        let open006 = try await Self.reviews(store).first { $0["transactionId"] as? String == "txn-batch-006" }
        #expect(open006?["state"] as? String == "open" && (open006?["attempt"] as? Int ?? 0) >= 3)

        // Two operators at once on 005: one request in all.
        let complete = try fields(
            #"{"lastName":"DOE","firstName":"ANNA","dateOfBirth":"1990-01-02","documentNumber":"X1234567","dateOfExpiry":"2031-01-01"}"#)
        async let first = accept("txn-batch-005", complete, "alice")
        async let second = accept("txn-batch-005", complete, "bob")
        let both = try await [first, second]
        #expect(both.map(\.status).sorted() == [0, 1], "\(both.map(\.stdout)) \(both.map(\.stderr))")
        #expect(server.requests.count == sent + 1, "one request for two operators")
        let status = try await Self.status(store, "txn-batch-005")
        #expect((status["documentStatus"] as? [String: String])?["GOVERNMENT_ID"] == "PROCESSED")
        let history = (status["history"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(history.contains { $0 == "review accept by alice" || $0 == "review accept by bob" }, "\(history)")
        let documents = status["documents"] as? [[String: Any]] ?? []
        #expect(documents.contains { $0["source"] as? String == "review accept" })
        let again = try await accept("txn-batch-005", complete)
        #expect(again.status == 1 && server.requests.count == sent + 1, "accepted already: nothing sent")
    }

    @Test("reject of a refused optional selfie: SKIPPED, the transaction completes", arguments: SampleStore.allCases)
    func rejectOptionalSelfie(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("review-reject")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await kind.fresh(folder, "s")
        let pipeline = try pipelineFile(
            folder, "policy: {documents: {GOVERNMENT_ID: DISABLED, SELFIE: OPTIONAL, EMAIL: OPTIONAL, PHONE: OPTIONAL}}\n")
        let batch = try fieldBatch(folder, transactions: ["selfie-1"], phone: true)
        // A selfie that is not an image: refused, its review holds the transaction open.
        try Data("not an image".utf8).write(to: batch.appendingPathComponent("selfie-1/selfie.jpg"))
        let run = try await CLIRunner.run(["run", batch.path, "--store", store, "--pipeline", pipeline])
        #expect(run.status == 1)
        var status = try await Self.status(store, "selfie-1")
        #expect((status["documentStatus"] as? [String: String])?["SELFIE"] == "OPTIONAL", "not skipped while under review: \(status)")
        #expect(status["documentSubmissionStatus"] as? String == "PROCESS")
        let rejected = try await CLIRunner.run(
            ["review", "reject", "selfie-1", "SELFIE", "--reason", "unreadable", "--note", "blurred", "--operator", "carol", "--store", store])
        #expect(rejected.status == 0, "\(rejected.stdout) \(rejected.stderr)")
        status = try await Self.status(store, "selfie-1")
        #expect(
            (status["documentStatus"] as? [String: String])?["SELFIE"] == "SKIPPED" && status["documentSubmissionStatus"] as? String == "COMPLETED")
        #expect(!String(describing: status).contains("blurred"), "the note is never shown")
    }

    @Test("purged after expiry: the queue says purged, export refuses, the inputs' bytes leave the file; a QR error keeps no inputs")
    func purgedInputs() async throws {
        let folder = try temporaryFolder("review-purge")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path, store = "sqlite:" + path
        let pipeline = try pipelineFile(
            folder,
            """
            policy: {transactionLifetime: 1s}
            store: {encryption: {enabled: false}}
            """)
        let batch = try fieldBatch(folder, transactions: ["purge-1"], phone: true)
        // A selfie whose bytes are a marker no other part of the store holds.
        let marker = "REVIEW-INPUT-MARKER-\(UUID().uuidString)"
        try Data(marker.utf8).write(to: batch.appendingPathComponent("purge-1/selfie.jpg"))
        // A loose image without a QR: a failure tied to no transaction.
        try Data("QR-ERROR-MARKER-0123456789".utf8).write(to: batch.appendingPathComponent("loose.jpg"))
        let run = try await CLIRunner.run(["run", batch.path, "--store", store, "--pipeline", pipeline])
        #expect(run.status == 1)
        let all = try await Self.reviews(store, ["--all"])
        let unattached = all.filter { $0["kind"] as? String == "unattached" }
        #expect(unattached.count == 1 && unattached.first?["inputs"] as? String == "none", "\(all)")
        func fileBytes() throws -> Data {
            var bytes = Data()
            for suffix in ["", "-wal"] { bytes += (try? Data(contentsOf: URL(fileURLWithPath: path + suffix))) ?? Data() }
            return bytes
        }
        #expect(try fileBytes().range(of: Data(Data(marker.utf8).base64EncodedString().utf8)) != nil, "kept while open (the control)")
        #expect(
            try fileBytes().range(of: Data("QR-ERROR-MARKER".utf8)) == nil && (try fileBytes().range(of: Data("UVItRVJST1ItTUFSS0VS".utf8))) == nil)
        // Past its expiry and a minute old, the transaction is purged with its review's inputs.
        try await Task.sleep(for: .seconds(1.5))
        let purge = try await CLIRunner.run(
            ["store", "purge", "--store", store, "--pipeline", try pipelineFile(folder, "retention: {mode: count, keep: 0}\n")])
        #expect(purge.status == 0, "\(purge.stderr)")
        let entry = try await Self.reviews(store, ["--all"]).first { $0["transactionId"] as? String == "purge-1" }
        #expect(entry?["inputs"] as? String == "purged", "\(String(describing: entry))")
        let export = try await CLIRunner.run(
            ["review", "export", "purge-1", "SELFIE", "--out", folder.appendingPathComponent("out").path, "--operator", "dan", "--store", store])
        #expect(
            export.status == 1 && export.stderr.contains("purged")
                && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
        #expect(try fileBytes().range(of: Data(Data(marker.utf8).base64EncodedString().utf8)) == nil, "the inputs' bytes are gone")
    }

    @Test("export writes the kept inputs to a new 0700 folder, files 0600; an existing path or a symlink is refused")
    func export() async throws {
        let folder = try temporaryFolder("review-export")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        _ = try await InProcess.run(Self.samples, store: store)
        let out = folder.appendingPathComponent("exported").path
        let exported = try await CLIRunner.run([
            "review", "export", "txn-batch-006", "GOVERNMENT_ID", "--out", out, "--operator", "erin", "--store", store
        ])
        #expect(exported.status == 0, "\(exported.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == ["front.jpg", "mrz.txt"], "\(files)")
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: out + "/mrz.txt")[.posixPermissions] as? Int
        #expect(mode == 0o700 && fileMode == 0o600)
        let expected = try String(contentsOfFile: Self.samples + "/06-bad-mrz/mrz.txt", encoding: .utf8)
        #expect(
            try String(contentsOfFile: out + "/mrz.txt", encoding: .utf8).trimmingCharacters(in: .newlines)
                == expected.trimmingCharacters(in: .newlines))
        let link = folder.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder.appendingPathComponent("elsewhere").path)
        for target in [out, link] {
            let refused = try await CLIRunner.run([
                "review", "export", "txn-batch-006", "GOVERNMENT_ID", "--out", target, "--operator", "erin", "--store", store
            ])
            #expect(refused.status == 1, "\(target)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("elsewhere").path))
        let status = try await Self.status(store, "txn-batch-006")
        #expect((status["history"] as? [[String: Any]] ?? []).contains { ($0["reason"] as? String)?.hasPrefix("review export by erin") == true })
    }
}
