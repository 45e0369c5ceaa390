import Foundation
import SeededRandom
import Testing
import TransactionStore
import VerifyModel

struct ResultLine: Decodable {
    struct Failure: Decodable {
        var code: String
        var message: String
    }

    var id: String
    var source: String
    var documentId: String?
    var transactionId: String?
    var documentType: String?
    var documentSubmissionStatus: String?
    var documentStatus: [String: String]?
    var document: [String: String]?
    var error: Failure?
    var alreadySubmitted: Bool?
    var warnings: [String]?
}

func resultLines(_ text: String) throws -> [ResultLine] {
    try text.split(separator: "\n").map { try JSONDecoder().decode(ResultLine.self, from: Data($0.utf8)) }
}

func temporaryFolder(_ name: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

@Suite("verify-pipeline run", .serialized)
struct RunCommandTests {
    @Test("the sample batch ends as documented, and status shows the same")
    func sampleBatch() async throws {
        let folder = try temporaryFolder("run-samples")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("store.sqlite").path
        let outcome = try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--include-images"])
        #expect(outcome.status == 1, "three sample documents fail on purpose")
        let lines = try resultLines(outcome.stdout)
        #expect(lines.count == 15)
        let errors = Dictionary(uniqueKeysWithValues: lines.compactMap { line in line.error.map { (line.id, $0.code) } })
        #expect(
            errors == [
                "05-corrupt-image/GOVERNMENT_ID": "documentCaptureError",
                "06-bad-mrz/GOVERNMENT_ID": "documentCaptureError",
                "07-expired/GOVERNMENT_ID": "documentSubmissionTimeoutError"
            ])
        #expect(lines.first { $0.id == "06-bad-mrz/GOVERNMENT_ID" }?.error?.message.contains("documentNumber") == true)
        // The licence back's AAMVA fields and the images reach the document.
        let licence = try #require(lines.first { $0.id == "02-missing-selfie/GOVERNMENT_ID" }?.document)
        #expect(licence["documentNumber"] == "T64-220-019" && licence["dateOfBirth"] == "1990-11-20" && licence["sex"] == "M")
        #expect(licence["frontImage"].flatMap { Data(base64Encoded: $0) }?.starts(with: [0xFF, 0xD8]) == true)
        // Passport page and ID card back read from their images: the MRZ's fields, as typed MRZ text gives them.
        let passport = try #require(lines.first { $0.id == "08-passport-image/GOVERNMENT_ID" }?.document)
        #expect(passport["documentNumber"] == "X7B04Q2N1" && passport["lastName"] == "SAMPLE" && passport["firstName"] == "RIVER")
        #expect(passport["dateOfBirth"] == "1991-03-07" && passport["dateOfExpiry"] == "2033-09-30" && passport["sex"] == "F")
        #expect(passport["mrzData"]?.hasPrefix("P<UTOSAMPLE<<RIVER<JUNE<") == true)
        let card = try #require(lines.first { $0.id == "09-id-card-td1/GOVERNMENT_ID" }?.document)
        #expect(card["documentNumber"] == "UT0418822" && card["lastName"] == "EXAMPLE" && card["dateOfBirth"] == "1985-12-24")
        #expect(card["mrzData"]?.split(separator: "\n").count == 3)
        #expect(outcome.stderr.contains("15 documents (3 failed, 0 already submitted), 9 transactions (6 completed)"))

        let expected: [String: (String, [String: String])] = [
            "txn-batch-001": ("COMPLETED", ["GOVERNMENT_ID": "PROCESSED", "SELFIE": "PROCESSED", "EMAIL": "PROCESSED", "PHONE": "PROCESSED"]),
            "txn-batch-002": ("COMPLETED", ["GOVERNMENT_ID": "PROCESSED", "SELFIE": "SKIPPED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"]),
            "txn-batch-003": ("COMPLETED", ["GOVERNMENT_ID": "PROCESSED", "SELFIE": "SKIPPED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"]),
            "txn-batch-004": ("COMPLETED", ["GOVERNMENT_ID": "PROCESSED", "SELFIE": "PROCESSED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"]),
            "txn-batch-005": ("STARTED", ["GOVERNMENT_ID": "REQUIRED", "SELFIE": "PROCESSED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"]),
            "txn-batch-006": ("NOT_STARTED", ["GOVERNMENT_ID": "REQUIRED", "SELFIE": "SKIPPED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"]),
            "txn-batch-007": ("NOT_STARTED", ["GOVERNMENT_ID": "REQUIRED", "SELFIE": "SKIPPED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"]),
            "txn-batch-008": ("COMPLETED", ["GOVERNMENT_ID": "PROCESSED", "SELFIE": "PROCESSED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"]),
            "txn-batch-009": ("COMPLETED", ["GOVERNMENT_ID": "PROCESSED", "SELFIE": "SKIPPED", "EMAIL": "SKIPPED", "PHONE": "SKIPPED"])
        ]
        // Read from the store itself, in-process (status --json is the status command's tests' business).
        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        for (id, (status, documents)) in expected {
            let transaction = try #require(try await reader.transaction(id: id), "\(id)")
            #expect(transaction.state.submissionStatus.rawValue == status, "\(id)")
            #expect(
                Dictionary(uniqueKeysWithValues: transaction.state.documents.map { ($0.key.rawValue, $0.value.rawValue) }) == documents, "\(id)")
        }
    }

    @Test("running the same folder again submits nothing twice")
    func rerun() async throws {
        let samples = CLIRunner.root.appendingPathComponent("Samples/batch").path
        let folder = try temporaryFolder("run-twice")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("store.sqlite").path
        let first = try resultLines(try await InProcess.outcome(samples, store: store).stdout)
        let second = try resultLines(try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--omit-images"]).stdout)
        #expect(second.count == first.count)
        let succeeded = second.filter { $0.error == nil }
        #expect(succeeded.count == 12)
        #expect(succeeded.allSatisfy { $0.alreadySubmitted == true })
        #expect(Set(succeeded.compactMap(\.documentId)) == Set(first.filter { $0.error == nil }.compactMap(\.documentId)))
        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        for documentId in succeeded.compactMap(\.documentId) {
            #expect(try await reader.submission(documentId: documentId)?.attempts == 1)
        }
    }

    @Test("a 300-document batch killed with SIGKILL at a random point, run again, submits every document exactly once")
    func killedAndRerun() async throws {
        let folder = try temporaryFolder("run-kill")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<100).map { "kill-\($0)" }, selfie: true)
        let pipeline = folder.appendingPathComponent("pipeline.yaml")
        try Data("policy:\n  documents: {SELFIE: REQUIRED, EMAIL: REQUIRED, PHONE: REQUIRED}\n".utf8).write(to: pipeline)
        let store = folder.appendingPathComponent("store.sqlite").path
        let arguments = ["run", batch.path, "--store", store, "--pipeline", pipeline.path, "--omit-images"]

        // At least 100 results (well over the two pages a paced reader lets the process write ahead) remain.
        var (seed, random) = try TestSeed.make()
        let killAfter = Int.random(in: 10...200, using: &random)
        let context = "killed after \(killAfter) results, \(TestSeed.replay(seed))"
        print("[run, killed and rerun] \(context)")
        let first = try InteractiveProcess(arguments, paced: true)
        var printed: [String] = []
        while printed.count < killAfter, let line = await first.nextLine() { printed.append(line) }
        kill(first.process.processIdentifier, SIGKILL)
        #expect(await first.waitForExit())
        #expect(first.process.terminationReason == .uncaughtSignal, "\(context)")
        #expect(printed.count == killAfter, "\(printed.count) results printed; \(context)")

        let second = try await CLIRunner.run(arguments)
        #expect(second.status == 0, "\(second.stderr); \(context)")
        let lines = try resultLines(second.stdout)
        #expect(lines.count == 300, "\(context)")
        #expect(lines.allSatisfy { $0.error == nil }, "\(context)")
        // What the first run printed as done, the second did not send again.
        let firstIds = Set(try resultLines(printed.joined(separator: "\n")).compactMap(\.documentId))
        let resent = lines.filter { $0.alreadySubmitted != true && firstIds.contains($0.documentId ?? "") }
        #expect(resent.isEmpty, "\(context)")
        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        for line in lines {
            let submission = try await reader.submission(documentId: line.documentId ?? "")
            #expect(submission?.attempts == 1 && submission?.outcome == .accepted, "\(line.id), \(context)")
        }
        #expect(try await reader.transactions(status: .completed).count == 100, "\(context)")
    }

    @Test("a transaction folder's missing optional documents are skipped when the folder ends, not at the end of the batch")
    func folderEndsAsItGoes() async throws {
        let folder = try temporaryFolder("run-folder-ends")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ids = (0..<30).map { String(format: "ends-%02d", $0) }
        let batch = try fieldBatch(folder, transactions: ids, phone: false)
        // Queues of one: the first folders are done long before the last ones are read.
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, PHONE: OPTIONAL, SELFIE: OPTIONAL, GOVERNMENT_ID: DISABLED}
            stages:
              decode: {workers: 1, queue: 1}
              scan: {workers: 1, queue: 1}
              track: {workers: 1, queue: 1}
              submit: {workers: 1, queue: 1}
            """)
        let store = folder.appendingPathComponent("store.sqlite").path
        let run = try await InProcess.outcome(batch.path, store: store, pipeline: pipeline)
        #expect(run.status == 0, "\(run.stdout)")

        let reader = try await TransactionStore.sqlite(path: store, create: false, encryption: CLIRunner.storeEncryption)
        let first = try #require(try await reader.report(id: "ends-00"))
        let last = try #require(try await reader.report(id: "ends-29"))
        #expect(first.transaction.state.submissionStatus == .completed && last.transaction.state.submissionStatus == .completed)
        let firstSkips = first.history.filter { $0.to == DocumentStatus.skipped.rawValue }
        #expect(Set(firstSkips.compactMap(\.documentType)) == [.phone, .selfie])
        #expect(firstSkips.allSatisfy { $0.reason == "end of ends-00" }, "\(firstSkips)")
        let lastCollected = try #require(last.history.first { $0.to == DocumentStatus.collected.rawValue })
        #expect(
            firstSkips.allSatisfy { $0.sequence < lastCollected.sequence },
            "the first folder ended before the last folder's document was collected")
    }

    /// The ICAO TD3 specimen page with the birth date's check digit printed 3 instead of 2; the same born on 29 February
    /// of a common year, its check digits computed over what is printed (`scan` shows that one as printed).
    @Test(
        "a passport page whose printed MRZ fails a check digit or breaks ICAO 9303: documentCaptureError naming the field",
        arguments: [
            ("td3-bad-check-digit.png", "an MRZ is printed but cannot be read"),
            ("td3-misprint-february-29.png", "the MRZ as printed breaks a rule of ICAO 9303")
        ])
    func refusedOnTheImage(fixture: String, says: String) async throws {
        let folder = try temporaryFolder("run-mrz-image")
        defer { try? FileManager.default.removeItem(at: folder) }
        let transaction = folder.appendingPathComponent("batch/refused-mrz")
        try FileManager.default.createDirectory(at: transaction, withIntermediateDirectories: true)
        let page = CLIRunner.root.appendingPathComponent("Tests/MRZReadingTests/Fixtures/\(fixture)")
        try FileManager.default.copyItem(at: page, to: transaction.appendingPathComponent("front.png"))
        try "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=mrz-image-1&code=5\n"
            .write(to: transaction.appendingPathComponent("qr.txt"), atomically: true, encoding: .utf8)
        let outcome = try await CLIRunner.run([
            "run", folder.appendingPathComponent("batch").path,
            "--store", folder.appendingPathComponent("s.sqlite").path, "--omit-images"
        ])
        #expect(outcome.status == 1)
        let line = try #require(try resultLines(outcome.stdout).first)
        #expect(line.error?.code == "documentCaptureError")
        let message = line.error?.message ?? ""
        #expect(message.contains(says) && message.contains("dateOfBirth"), "\(message)")
        #expect(!message.contains("740812") && !message.contains("770229") && !message.contains("ERIKSSON"))
    }

    @Test("a missing folder or a bad pipeline file is a configuration error: exit 2, one line")
    func configurationErrors() async throws {
        let missing = try await CLIRunner.run(["run", "no/such/folder"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "verify-pipeline: no folder at no/such/folder\n")
        let folder = try temporaryFolder("bad-pipeline")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipeline = folder.appendingPathComponent("p.yaml")
        try Data("stages:\n  scan: {wokers: 2}\n".utf8).write(to: pipeline)
        let bad = try await CLIRunner.run([
            "run", "Samples/batch", "--pipeline", pipeline.path, "--store", folder.appendingPathComponent("s.sqlite").path
        ])
        #expect(bad.status == 2)
        #expect(bad.stderr == "verify-pipeline: p.yaml: 'stages.scan.wokers' is not a known key (known here: queue, queueMiB, workers)\n")
        #expect(bad.stdout.isEmpty)
    }
}
