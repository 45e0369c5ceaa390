import Foundation
import GRDB
import PostgresTestSupport
import Testing
import VerifyModel
import WorkQueues

@testable import TransactionStore

/// The bytes someone holding the store's file and WAL, or a dump of its database, would read.
func storeBytes(_ store: String) async throws -> Data {
    switch try StoreLocation(parsing: store) {
    case .sqlite(let path):
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { data += wal }
        return data
    case .postgres(let location):
        return try await TestPostgres.dump(location.description)
    }
}

/// Whether `bytes` show `value` as a store in clear holds it: anywhere for a value of 16 characters or more; for a
/// shorter one, only where the run of base64 characters around it is under 40 long. Ciphertext is base64 (a sealed
/// value, `$vp1$…`, is 40 characters or more; SQLite continues a long one on overflow pages without its prefix),
/// and a 4-letter run is in about 1 MB of it one time in 16: chance, not a leak. A value in clear stands between
/// quotes, separators or a record's bytes.
func shows(_ bytes: Data, _ value: String) -> Bool {
    let needle = Data(value.utf8)
    guard needle.count < 16 else { return bytes.range(of: needle) != nil }
    let base64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)
    var from = bytes.startIndex
    while let found = bytes.range(of: needle, in: from..<bytes.endIndex) {
        var start = found.lowerBound, end = found.upperBound
        while start > bytes.startIndex, base64.contains(bytes[start - 1]), found.lowerBound - start < 40 { start -= 1 }
        while end < bytes.endIndex, base64.contains(bytes[end]), end - found.upperBound < 40 { end += 1 }
        if end - start < 40 { return true }
        from = found.lowerBound + 1
    }
    return false
}

enum SampleStore: String, CaseIterable, Sendable {
    case sqlite, postgres

    func fresh(_ folder: URL, _ name: String) async throws -> String {
        switch self {
        case .sqlite: "sqlite:" + folder.appendingPathComponent("\(name).sqlite").path
        case .postgres: try await freshPostgresStore()
        }
    }
}

@Suite("Identity data at rest from the command line")
struct AtRestCommandTests {
    static let samples = CLIRunner.root.appendingPathComponent("Samples/batch").path
    /// The identity values the issue names, and the raw MRZ and barcode text that hold them.
    static let identityKeys = [
        "firstName", "middleName", "lastName", "fullName", "dateOfBirth", "documentNumber", "mrzData", "barcode",
        "addressStreet", "email", "phone"
    ]

    @Test(
        "the sample batch with encryption on: no sample name, birth date, document number or verification code in the store's bytes; status and re-runs as before",
        arguments: SampleStore.allCases)
    func sampleBatchSealed(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("at-rest-samples")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The control: the same batch into a store in clear, whose bytes must show every value looked for.
        let clear = try await kind.fresh(folder, "clear")
        let unsealed = try pipelineFile(folder, "store:\n  encryption: {enabled: false}\n")
        let control = try await InProcess.run(Self.samples, store: clear, pipeline: unsealed)
        #expect(control.summary.failed == 3, "\(control.summary)")
        var values: Set<String> = []
        for line in control.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let document = object["document"] as? [String: String] ?? [:]
            for key in Self.identityKeys { if let value = document[key] { values.insert(value) } }
        }
        values.formUnion(
            try await StoreLocation(parsing: clear).withStore(create: false) { store in
                var codes: [String] = []
                for summary in try await store.transactions(status: nil) {
                    if let code = try await store.transaction(id: summary.id)?.verificationCode { codes.append(code) }
                }
                return codes
            })
        // Raw MRZ and barcode text is kept as JSON, its line breaks and separators escaped: look for the runs between them.
        values = Set(
            values.flatMap { $0.split(whereSeparator: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true }) }
                .map(String.init).filter { $0.count >= 4 })
        #expect(values.count >= 30, "\(values.count) values")
        let clearBytes = try await storeBytes(clear)
        for value in values { #expect(shows(clearBytes, value), "the control store lacks \(value.count) bytes of a value") }

        let store = try await kind.fresh(folder, "sealed")
        let first = try await CLIRunner.run(["run", Self.samples, "--store", store, "--omit-images"])
        #expect(first.status == 1)
        #expect(first.stderr.contains("15 documents (3 failed, 0 already submitted), 9 transactions (6 completed)"), "\(first.stderr)")
        let sealedBytes = try await storeBytes(store)
        let found = values.filter { shows(sealedBytes, $0) }
        #expect(found.isEmpty, "\(found.count) of \(values.count) identity values are readable in the encrypted \(kind) store")

        // It reads as before with the key: every transaction sealed, their statuses whole.
        let summaries = try await InProcess.summaries(store)
        #expect(summaries.count == 9 && summaries.allSatisfy { $0.data == .sealed })
        #expect(summaries.filter { $0.status == .completed }.count == 6)
        let again = try await CLIRunner.run(["run", Self.samples, "--store", store, "--omit-images"])
        #expect(again.stderr.contains("15 documents (3 failed, 12 already submitted), 9 transactions (6 completed)"), "\(again.stderr)")
    }

    @Test("a wrong or missing key exits 2 with one line before anything is written; a sealed store refuses to open without it")
    func wrongKey() async throws {
        let folder = try temporaryFolder("at-rest-keys")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        #expect(try await InProcess.run(Self.samples, store: store).summary.transactions == 9)
        let before = try await Self.rows(store)
        let wrong = Data((0..<32).map { UInt8(truncatingIfNeeded: 7 &+ $0 &* 37) }).base64EncodedString()
        for (environment, arguments, message) in [
            (["VERIFY_PIPELINE_STORE_KEY": wrong], ["run", Self.samples], "the key in VERIFY_PIPELINE_STORE_KEY does not open"),
            (["VERIFY_PIPELINE_STORE_KEY": ""], ["run", Self.samples], "VERIFY_PIPELINE_STORE_KEY is not set"),
            (["VERIFY_PIPELINE_STORE_KEY": "c2hvcnQ="], ["run", Self.samples], "must hold a 256-bit key"),
            (["VERIFY_PIPELINE_STORE_KEY": Data(count: 32).base64EncodedString()], ["run", Self.samples], "holds one byte repeated, not a key"),
            (["VERIFY_PIPELINE_STORE_KEY": String(repeating: "ab", count: 32)], ["status"], "holds one byte repeated, not a key"),
            (["VERIFY_PIPELINE_STORE_KEY": ""], ["status"], "is encrypted: set VERIFY_PIPELINE_STORE_KEY"),
            (["VERIFY_PIPELINE_STORE_KEY": wrong], ["status", "txn-batch-001"], "does not open")
        ] {
            let outcome = try await CLIRunner.run(
                arguments + ["--store", store, "--omit-images"].filter { arguments[0] == "run" || $0 != "--omit-images" },
                environment: environment)
            #expect(outcome.status == 2, "\(arguments) \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
            let lines = outcome.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(message), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains(wrong))
        }
        #expect(try await Self.rows(store) == before)
    }

    /// Every row of every table, as read with the right key: what "nothing was written" compares.
    static func rows(_ store: String) async throws -> [String] {
        guard case .sqlite(let path) = try StoreLocation(parsing: store) else { return [] }
        let queue = try GRDB.DatabaseQueue(path: path)
        return try await queue.read { db in
            try ["transactions", "documentStatuses", "documents", "transitions", "submissions", "protectStates", "storeKeys"].flatMap { table in
                try GRDB.Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY rowid").map { "\(table) \($0)" }
            }
        }
    }

    /// Defect 16 of issue 29: a process writing in clear went on inserting clear rows into the store `store encrypt`
    /// had just sealed, which then did not open.
    @Test(
        "store encrypt while a process writes in clear: PostgreSQL refuses to encrypt; on SQLite the writer stops writing",
        arguments: SampleStore.allCases)
    func encryptUnderAClearWriter(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("encrypt-writer")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await kind.fresh(folder, "s")
        let unsealed = try pipelineFile(
            folder,
            "policy:\n  documents: {EMAIL: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, PHONE: DISABLED}\nstore:\n  encryption: {enabled: false}\n"
        )
        func line(_ n: Int) -> String {
            #"{"id":"w\#(n)","qr":"https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=clear-\#(n)&code=QXZC\#(n)","type":"EMAIL","email":"qxz\#(n)@example.com"}"#
        }
        let writer = try InteractiveProcess(["stream", "--store", store, "--pipeline", unsealed])
        writer.write(line(1))
        let first = try #require(await writer.nextLine(), "\(writer.stderr)")
        #expect(first.contains(#""documentSubmissionStatus":"COMPLETED""#), "\(first)")
        let encrypt = try await CLIRunner.run(["store", "encrypt", "--store", store])
        switch kind {
        case .postgres:
            // The writer's sessions are connected: nothing is sealed, the writer goes on in clear.
            #expect(encrypt.status == 2 && encrypt.stderr.contains("other session(s) connected"), "\(encrypt.stderr)")
            writer.write(line(2))
            #expect(await writer.nextLine()?.contains(#""documentSubmissionStatus":"COMPLETED""#) == true)
        case .sqlite:
            #expect(encrypt.status == 0, "\(encrypt.stderr)")
            // The writer's next document is refused: no clear row joins the sealed ones.
            writer.write(line(2))
            let second = try #require(await writer.nextLine())
            #expect(second.contains("the store was encrypted by another process"), "\(second)")
        }
        writer.closeInput()
        #expect(await writer.waitForExit())
        // The store opens and reads whole either way.
        let ids = try await InProcess.summaries(store).map(\.id)
        #expect(ids.contains("clear-1"))
        #expect(ids.contains("clear-2") == (kind == .postgres), "\(ids)")
    }

    @Test("store encrypt, rotate-key and purge from the command line")
    func storeCommands() async throws {
        let folder = try temporaryFolder("at-rest-commands")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let unsealed = try pipelineFile(folder, "store:\n  encryption: {enabled: false}\n")
        #expect(try await InProcess.run(Self.samples, store: store, pipeline: unsealed).summary.transactions == 9)
        #expect(try await InProcess.summaries(store).allSatisfy { $0.data == .present })
        // The default pipeline requires encryption: a store in clear is not silently mixed.
        let mixed = try await CLIRunner.run(["run", Self.samples, "--store", store, "--omit-images"])
        #expect(mixed.status == 2 && mixed.stderr.contains("holds identity data in clear"), "\(mixed.stderr)")

        let encrypt = try await CLIRunner.run(["store", "encrypt", "--store", store])
        // 9 verification codes, the fields and content digests of the 12 documents collected (Protect is off: no
        // payloads), the document secret, and the kept inputs of the 3 failed documents' reviews.
        #expect(encrypt.status == 0 && encrypt.stderr.contains("sealed 37 values"), "\(encrypt.stderr)")
        #expect(try await InProcess.summaries(store).allSatisfy { $0.data == .sealed })
        #expect(try await CLIRunner.run(["store", "encrypt", "--store", store]).stderr.contains("encrypted already"))

        let newKey = Data((0..<32).map { UInt8(truncatingIfNeeded: 0x42 &+ $0 &* 37) }).base64EncodedString()
        let rotate = try await CLIRunner.run(
            ["store", "rotate-key", "--new-key-env", "NEW_TEST_KEY", "--store", store],
            environment: ["NEW_TEST_KEY": newKey])
        #expect(
            rotate.status == 0
                && rotate.stderr.contains(
                    "sealed 37 values of \(store) again under a new data key wrapped by the key in NEW_TEST_KEY; the key in VERIFY_PIPELINE_STORE_KEY opens none of them"
                ), "\(rotate.stderr)")
        #expect(try await CLIRunner.run(["status", "--store", store]).status == 2)
        let reopened = try await CLIRunner.run(
            ["status", "txn-batch-004", "--store", store, "--key-env", "NEW_TEST_KEY"],
            environment: ["NEW_TEST_KEY": newKey])
        #expect(reopened.status == 0 && reopened.stdout.contains("data     sealed"), "\(reopened.stderr)")

        // Keep the data of the newest two transactions: the other completed ones are purged.
        let retention = try pipelineFile(folder, "retention: {mode: count, keep: 2}\n")
        let environment = ["VERIFY_PIPELINE_STORE_KEY": newKey]
        let dry = try await CLIRunner.run(["store", "purge", "--pipeline", retention, "--dry-run", "--store", store], environment: environment)
        #expect(dry.status == 0 && dry.stderr.contains("would purge the identity data of \(dry.lines.count) transactions"), "\(dry.stderr)")
        #expect(dry.lines.count >= 3)
        let newStoreKey = try #require(try KeyEncryptionKey.from(variable: "VERIFY_PIPELINE_STORE_KEY", environment: environment))
        #expect(try await InProcess.summaries(store, encryption: .ifEncrypted(newStoreKey)).allSatisfy { $0.data != .purged })
        let purge = try await CLIRunner.run(["store", "purge", "--pipeline", retention, "--store", store], environment: environment)
        #expect(purge.status == 0 && purge.lines == dry.lines, "\(purge.stderr)")
        // One purged transaction as status shows it; all of them as the store holds them.
        let shown = try await CLIRunner.run(["status", try #require(purge.lines.first), "--store", store], environment: environment)
        #expect(
            shown.stdout.contains("data     purged at ") && shown.stdout.contains("(identity data purged (retention count 2))"), "\(shown.stdout)")
        let reports = try await StoreLocation(parsing: store).withStore(create: false, readOnly: true, encryption: .ifEncrypted(newStoreKey)) {
            reader in
            var reports: [TransactionReport] = []
            for id in purge.lines {
                if let report = try await reader.report(id: id) { reports.append(report) }
            }
            return reports
        }
        #expect(reports.count == purge.lines.count)
        for report in reports {
            #expect(report.data == .purged, "\(report.transaction.id)")
            #expect(report.history.last?.reason == "identity data purged (retention count 2)", "\(report.transaction.id)")
        }
        #expect(reports.filter { $0.transaction.state.submissionStatus == .completed }.count >= 2)
    }

    @Test("run applies the retention policy when it ends; a worker applies it every interval while it runs")
    func retentionInRunAndWorker() async throws {
        let folder = try temporaryFolder("at-rest-retention")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let keepOne = try pipelineFile(folder, "retention: {mode: count, keep: 1}\n")
        let run = try await CLIRunner.run(["run", Self.samples, "--store", store, "--pipeline", keepOne, "--omit-images"])
        #expect(run.status == 1)
        let line = try #require(run.stderr.split(separator: "\n").first { $0.contains("purged the identity data of") }, "\(run.stderr)")
        #expect(line.hasSuffix("under retention count 1"))
        // Every finished transaction but the newest: the 6 COMPLETED and the expired one, less one.
        #expect(try await InProcess.summaries(store).filter { $0.data == .purged }.count >= 5)

        let postgres = try await freshPostgresStore()
        let batch = try fieldBatch(folder, transactions: (0..<6).map { "keep-\($0)" }, phone: false)
        let policy = "policy:\n  documents: {EMAIL: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, PHONE: DISABLED}\n"
        let plain = try pipelineFile(folder, policy)
        #expect(try await CLIRunner.run(["enqueue", batch.path, "--store", postgres, "--pipeline", plain]).status == 0)
        #expect(try await CLIRunner.run(["worker", "--exit-when-empty", "--store", postgres, "--pipeline", plain]).status == 0)
        // A worker that keeps running purges on its interval, without waiting for its end.
        let periodic = try pipelineFile(folder, policy + "retention: {mode: count, keep: 2, interval: 10s}\n")
        let worker = try InteractiveProcess(["worker", "--store", postgres, "--pipeline", periodic])
        defer { kill(worker.process.processIdentifier, SIGKILL) }
        // Wait on the store's state, read in-process: until the four oldest are purged, or 40 s have passed.
        let purged = try await StoreLocation(parsing: postgres).withStore(create: false, readOnly: true, encryption: CLIRunner.storeEncryption) {
            reader in
            let deadline = ContinuousClock.now + .seconds(40)
            var purged = 0
            while purged < 4, ContinuousClock.now < deadline {
                purged = try await reader.transactions(status: nil).filter { $0.data == .purged }.count
                if purged < 4 { try await Task.sleep(for: .milliseconds(200)) }
            }
            return purged
        }
        #expect(purged == 4, "the running worker purged \(purged) of the 4 oldest transactions")
        #expect(worker.process.isRunning)
        kill(worker.process.processIdentifier, SIGTERM)
        #expect(await worker.waitForExit(timeout: 20))
    }

    @Test("rotate-key while a worker runs is refused, nothing changed; once it stopped, the data key is replaced and the old key opens nothing")
    func rotateUnderWorker() async throws {
        let store = try await freshPostgresStore()
        let folder = try temporaryFolder("at-rest-rotate")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<150).map { "rot-\($0)" }, phone: false, selfie: true)
        let pipeline = try pipelineFile(
            folder, "policy:\n  documents: {EMAIL: REQUIRED, SELFIE: REQUIRED, GOVERNMENT_ID: DISABLED, PHONE: DISABLED}\n")
        let enqueue = try await CLIRunner.run(["enqueue", batch.path, "--store", store, "--pipeline", pipeline])
        #expect(enqueue.status == 0 && enqueue.stderr.contains("300 documents queued"), "\(enqueue.stderr)")

        // Paced: the worker cannot finish its 300 documents while the test holds its output, so it is connected when
        // the rotation is tried.
        let worker = try InteractiveProcess(
            ["worker", "--exit-when-empty", "--store", store, "--pipeline", pipeline, "--omit-images"],
            paced: true)
        var printed = 0, results = ""
        while printed < 40, let line = await worker.nextLine() {
            results += line
            printed += 1
        }
        #expect(printed == 40)
        // The emails are in what the worker prints (its EMAIL documents); the store's fields and the queue's jobs carry
        // them too.
        #expect(results.contains("@example.com"))
        let newKey = Data((0..<32).map { UInt8(truncatingIfNeeded: 0x66 &+ $0 &* 37) }).base64EncodedString()
        let rotateArguments = ["store", "rotate-key", "--new-key-env", "ROTATED_KEY", "--store", store]
        #expect(worker.process.isRunning)
        let refused = try await CLIRunner.run(rotateArguments, environment: ["ROTATED_KEY": newKey])
        #expect(
            refused.status == 2
                && refused.stderr.contains(
                    "other session(s) connected (a worker, a run, serve): stop every process using the store, then rotate its key"),
            "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        while printed < 300, await worker.nextLine() != nil { printed += 1 }
        #expect(await worker.waitForExit(timeout: 180))
        #expect(printed == 300)
        #expect(worker.process.terminationStatus == 0, "\(worker.stderr)")
        // Nothing was changed: the old key still opens the store.
        #expect(try await CLIRunner.run(["status", "--store", store]).status == 0)
        let rotate = try await CLIRunner.run(rotateArguments, environment: ["ROTATED_KEY": newKey])
        #expect(rotate.status == 0, "\(rotate.stderr)")

        #expect(try await CLIRunner.run(["status", "--store", store]).status == 2)
        let rotated = try KeyEncryptionKey.from(variable: "K", environment: ["K": newKey])
        try await StoreLocation(parsing: store).withStore(create: false, encryption: .ifEncrypted(rotated)) { reader in
            let transactions = try await reader.transactions(status: nil)
            #expect(transactions.count == 150 && transactions.allSatisfy { $0.status == .completed && $0.data == .sealed })
            var accepted = 0
            for summary in transactions {
                for document in try #require(try await reader.report(id: summary.id)).documents {
                    if document.submission?.attempts == 1, document.submission?.outcome == .accepted { accepted += 1 }
                }
            }
            #expect(accepted == 300)
        }
        // Neither the store's rows nor the queue's jobs and results show an email in a dump of the database.
        let dump = try await TestPostgres.dump(store)
        #expect(dump.range(of: Data("@example.com".utf8)) == nil)
        #expect(dump.range(of: Data("rot-17".utf8)) != nil)
    }
}
