import DocumentOutcomes
import Foundation
import Testing
import TransactionStore
import TransactionViews
import VerifyModel

/// What `status` prints and a result line holds, rendered from a store in memory: the layout, the contract's names,
/// and the rule that no identity value and no terminal control ever reaches the terminal.
@Suite("Presentation: status text, status JSON, the result line")
struct PresentationTests {
    static let t0 = Date(timeIntervalSince1970: 1_795_305_600)  // 2026-11-22T00:00:00Z

    /// One completed transaction (a licence processed, the selfie skipped) and one whose source and reason hold
    /// terminal controls.
    static func store() async throws -> TransactionStore {
        let store = try await TransactionStore.inMemory()
        let policy: [DocumentType: DocumentRequirement] = [.governmentId: .required, .selfie: .optional]
        _ = try await store.openTransaction(
            NewTransaction(id: "txn-complete", verificationCode: "1", policy: policy, createdAt: t0, expiresAt: t0.addingTimeInterval(1800)))
        let document = DocumentRecord(
            id: "doc-1", transactionId: "txn-complete", type: .governmentId,
            fields: DocumentFields([.lastName: "ERIKSSON", .documentNumber: "L898902C3"]),
            source: "batch/txn-complete/back.png", contentHash: "h", createdAt: t0)
        _ = try await store.collect(document, at: t0.addingTimeInterval(1))
        _ = try await store.recordSubmission(documentId: "doc-1", outcome: .accepted, error: nil, at: t0.addingTimeInterval(2))
        _ = try await store.apply(.process, to: .governmentId, of: "txn-complete", reason: "submission accepted", at: t0.addingTimeInterval(2))
        _ = try await store.apply(.skip, to: .selfie, of: "txn-complete", reason: "end of batch", at: t0.addingTimeInterval(3))

        _ = try await store.openTransaction(
            NewTransaction(
                id: "txn-escape", verificationCode: "2", policy: [.selfie: .required], createdAt: t0.addingTimeInterval(10),
                expiresAt: t0.addingTimeInterval(1810)))
        _ = try await store.collect(
            DocumentRecord(
                id: "doc-e", transactionId: "txn-escape", type: .selfie, fields: DocumentFields(),
                source: "batch/\u{1B}[2J\u{1B}[H\u{202E}gpj.exe/\u{9B}2Jselfie.jpg", contentHash: "h2", createdAt: t0),
            at: t0.addingTimeInterval(11))
        _ = try await store.apply(.reject, to: .selfie, of: "txn-escape", reason: "bell\u{07} and\rreturn", at: t0.addingTimeInterval(12))
        return store
    }

    @Test("one transaction as text: statuses, timestamps, documents, history; no identity value")
    func text() async throws {
        let report = try #require(try await Self.store().report(id: "txn-complete"))
        let text = StatusText.text(report, now: Self.t0.addingTimeInterval(3600))
        #expect(text.hasPrefix("Transaction txn-complete  COMPLETED\n"))
        #expect(text.contains("  created  2026-11-22T00:00:00.000Z\n"))
        #expect(text.contains("  expires  2026-11-22T00:30:00.000Z  (expired)\n"))
        #expect(text.contains("  data     present\n"))
        #expect(text.contains("    GOVERNMENT_ID  PROCESSED  policy REQUIRED\n"))
        #expect(text.contains("      doc-1  batch/txn-complete/back.png  submission ACCEPTED, 1 attempt\n"))
        #expect(text.contains("    SELFIE         SKIPPED    policy OPTIONAL"))
        let history = text.components(separatedBy: "History\n")[1].split(separator: "\n")
        #expect(history.count == 6)
        #expect(history.last == "    2026-11-22T00:00:03.000Z  transaction    PROCESS -> COMPLETED  (end of batch)")
        #expect(!text.contains("ERIKSSON") && !text.contains("L898902C3"))
        // Before the expiry, no mark.
        #expect(StatusText.text(report, now: Self.t0).contains("  expires  2026-11-22T00:30:00.000Z\n"))
    }

    @Test("one transaction as JSON with the contract's names, field keys and never their values")
    func json() async throws {
        let report = try #require(try await Self.store().report(id: "txn-complete"))
        let line = StatusJSON.report(report)
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["transactionId"] as? String == "txn-complete")
        #expect(object["documentSubmissionStatus"] as? String == "COMPLETED")
        #expect(object["documentStatus"] as? [String: String] == ["GOVERNMENT_ID": "PROCESSED", "SELFIE": "SKIPPED"])
        #expect(object["policy"] as? [String: String] == ["GOVERNMENT_ID": "REQUIRED", "SELFIE": "OPTIONAL"])
        #expect(object["expiresAt"] as? String == "2026-11-22T00:30:00.000Z")
        #expect(object["data"] as? String == "present")
        let history = try #require(object["history"] as? [[String: Any]])
        #expect(history.map { $0["to"] as? String } == ["COLLECTED", "STARTED", "PROCESS", "PROCESSED", "SKIPPED", "COMPLETED"])
        let documents = try #require(object["documents"] as? [[String: Any]])
        #expect(documents.first?["keys"] as? [String] == ["documentNumber", "lastName"])
        #expect((documents.first?["submission"] as? [String: Any])?["outcome"] as? String == "ACCEPTED")
        #expect(!line.contains("ERIKSSON") && !line.contains("L898902C3"))
    }

    @Test("the list as text and as JSON lines: most recently updated first")
    func list() async throws {
        let summaries = try await Self.store().transactions(status: nil)
        let lines = StatusText.text(summaries).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0] == "TRANSACTION   STATUS     GOV_ID  SELFIE  DATA     UPDATED")
        // Each document type's status under its heading; a type the transaction does not have, `-`.
        #expect(lines[1] == "txn-escape    PROCESS    -       req     present  2026-11-22T00:00:12Z", "\(lines[1])")
        #expect(lines[2] == "txn-complete  COMPLETED  proc    skip    present  2026-11-22T00:00:03Z", "\(lines[2])")
        #expect(StatusText.text(summaries, wide: true).hasSuffix("present  2026-11-22T00:00:03.000Z"))
        #expect(StatusText.text([]) == "No transactions.")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(StatusJSON.summary(summaries[1]).utf8)) as? [String: Any])
        #expect(json["transactionId"] as? String == "txn-complete" && json["documentSubmissionStatus"] as? String == "COMPLETED")
    }

    @Test("control characters in a source or a reason are escaped in text and JSON; JSON still reads back the same value")
    func escapesControls() async throws {
        let store = try await Self.store()
        let report = try #require(try await store.report(id: "txn-escape"))
        let text = StatusText.text(report, now: Self.t0)
        let bytes = Array(text.utf8)
        #expect(!bytes.contains(0x1B) && !bytes.contains(0x07) && !bytes.contains(0x0D) && !text.contains("\u{202E}"))
        #expect(text.contains("batch/\\u{1B}[2J\\u{1B}[H\\u{202E}gpj.exe/\\u{9B}2Jselfie.jpg"))
        #expect(text.contains("(bell\\u{7} and\\u{D}return)"))
        let json = StatusJSON.report(report)
        #expect(!json.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" })
        #expect(json.lowercased().contains(#"batch/\u001b[2j\u001b[h\u202egpj.exe/\u009b2jselfie.jpg"#), "\(json)")
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let documents = object?["documents"] as? [[String: Any]]
        #expect(documents?.first?["source"] as? String == "batch/\u{1B}[2J\u{1B}[H\u{202E}gpj.exe/\u{9B}2Jselfie.jpg")
        let list = StatusText.text(try await store.transactions(status: nil))
        #expect(!list.utf8.contains(0x1B))
    }

    /// A transaction whose government id failed before anything of it was collected, and whose selfie was
    /// collected, then failed at a second reading: each recorded as a review.
    static func failedStore() async throws -> TransactionStore {
        let store = try await TransactionStore.inMemory()
        _ = try await store.openTransaction(
            NewTransaction(
                id: "txn-failed", verificationCode: "V", policy: [.governmentId: .required, .selfie: .optional], createdAt: t0,
                expiresAt: t0.addingTimeInterval(1800)))
        _ = try await store.collect(
            DocumentRecord(
                id: "doc-s", transactionId: "txn-failed", type: .selfie, fields: DocumentFields(), source: "batch/txn-failed/selfie.jpg",
                contentHash: "hs", createdAt: t0),
            at: t0.addingTimeInterval(1))
        for attempt in 1...2 {
            _ = try await store.recordFailure(
                FailureReport(
                    transactionId: "txn-failed", verificationCode: "V", type: .governmentId, kind: .capture,
                    code: .document(.documentCaptureError), message: "MRZ check digit for documentNumber does not match\u{1B}[2J",
                    field: "documentNumber", source: "batch/txn-failed", inputs: #"{"mrz":"P<UTOERIKSSON<<ANNA"}"#),
                limits: ReviewLimits(), at: t0.addingTimeInterval(Double(attempt)))
        }
        _ = try await store.recordFailure(
            FailureReport(
                transactionId: "txn-failed", verificationCode: "V", type: .selfie, kind: .capture, code: .document(.documentCaptureError),
                message: "the selfie could not be decoded", field: nil, source: "batch/txn-failed/selfie.jpg", inputs: nil),
            limits: ReviewLimits(), at: t0.addingTimeInterval(3))
        return store
    }

    @Test("a failed document's review: a line under its type in text; error and review in JSON, an entry of its own when nothing was collected")
    func reviews() async throws {
        let report = try #require(try await Self.failedStore().report(id: "txn-failed"))
        #expect(report.reviews.count == 2)
        let text = StatusText.text(report, now: Self.t0)
        #expect(
            text.contains(
                "    GOVERNMENT_ID  REQUIRED   policy REQUIRED\n"
                    + #"      review open: documentCaptureError (documentNumber) "MRZ check digit for documentNumber does not match\u{1B}[2J" attempt 2, failed 2026-11-22T00:00:02.000Z; review 1 (capture), inputs kept"#
                    + "\n"), "\(text)")
        #expect(
            text.contains(
                #"      review open: documentCaptureError "the selfie could not be decoded" attempt 1, failed 2026-11-22T00:00:03.000Z; review 2 (capture), inputs none"#
            ))
        #expect(!text.utf8.contains(0x1B) && !text.contains("ERIKSSON"))

        let json = StatusJSON.report(report)
        #expect(!json.contains("ERIKSSON") && !json.utf8.contains(0x1B))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let documents = try #require(object["documents"] as? [[String: Any]])
        #expect(documents.count == 2)
        let selfie = try #require(documents.first { $0["documentType"] as? String == "SELFIE" })
        #expect(selfie["id"] as? String == "doc-s" && (selfie["error"] as? [String: Any])?["message"] as? String == "the selfie could not be decoded")
        let governmentId = try #require(documents.first { $0["documentType"] as? String == "GOVERNMENT_ID" })
        #expect(governmentId["id"] == nil && governmentId["keys"] as? [String] == [] && governmentId["source"] as? String == "batch/txn-failed")
        let error = try #require(governmentId["error"] as? [String: Any])
        #expect(error["code"] as? String == "documentCaptureError" && error["field"] as? String == "documentNumber")
        let review = try #require(governmentId["review"] as? [String: Any])
        #expect(review["state"] as? String == "open" && review["attempt"] as? Int == 2 && review["kind"] as? String == "capture")
        #expect(review["inputs"] as? String == "kept" && review["failedAt"] as? String == "2026-11-22T00:00:02.000Z" && review["resolvedAt"] == nil)

        // The queue's entry: every reason, its transaction's expiry, nothing of the inputs.
        let page = try await Self.failedStore().reviews(ReviewFilter(), limit: 10)
        let entry = try #require(page.entries.first { $0.documentType == .governmentId })
        let item = try #require(try JSONSerialization.jsonObject(with: Data(StatusJSON.review(entry).utf8)) as? [String: Any])
        #expect(item["transactionId"] as? String == "txn-failed" && item["expiresAt"] as? String == "2026-11-22T00:30:00.000Z")
        #expect(item["state"] as? String == "open" && item["source"] as? String == "batch/txn-failed" && item["resolvedBy"] == nil)
        #expect(!StatusJSON.review(entry).contains("ERIKSSON"))
    }

    @Test("signals: a transaction without Protect says so in text; JSON is an object with the transaction's id")
    func signalsWithoutProtect() async throws {
        let transaction = try #require(try await Self.store().transaction(id: "txn-complete"))
        #expect(
            StatusText.signals(transaction, state: nil, json: false)
                == "Transaction txn-complete has no Protect signals (protect is not enabled in its pipeline).")
        #expect(StatusText.signals(transaction, state: nil, json: true) == #"{"transactionId":"txn-complete"}"#)
    }

    @Test("a result line: a failure with its code and message; an echo of the input's id; flags only when set")
    func resultLine() throws {
        let input = DocumentInput(sequence: 3, inputId: "line-3", source: "stdin:3", type: .selfie)
        var failed = DocumentOutcome(
            input: input, transactionId: "t-1", failure: DocumentFailure(.documentCaptureError, "the selfie could not be decoded"))
        #expect(
            String(decoding: ResultLine(failed).json(), as: UTF8.self)
                == #"{"documentType":"SELFIE","error":{"code":"documentCaptureError","message":"the selfie could not be decoded"},"id":"line-3","source":"stdin:3","transactionId":"t-1"}"#
        )
        failed.warnings = ["a repaired character"]
        #expect(String(decoding: ResultLine(failed).json(), as: UTF8.self).hasSuffix(#""warnings":["a repaired character"]}"#))
        var skipped = DocumentOutcome(input: DocumentInput(sequence: 1, inputId: nil, source: "batch/t/selfie", type: nil), transactionId: nil)
        skipped.skipped = true
        #expect(String(decoding: ResultLine(skipped).json(), as: UTF8.self) == #"{"id":"batch/t/selfie","skipped":true,"source":"batch/t/selfie"}"#)
        // A folder's name with a C1 control or a bidi override reaches the line escaped.
        let hostile = DocumentOutcome(input: DocumentInput(sequence: 2, inputId: nil, source: "b/\u{9B}2J\u{202E}x", type: nil), transactionId: nil)
        let line = String(decoding: ResultLine(hostile).json(), as: UTF8.self)
        #expect(!line.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" }, "\(line)")
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["source"] as? String == "b/\u{9B}2J\u{202E}x")
    }
}
