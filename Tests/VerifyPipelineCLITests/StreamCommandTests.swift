import AAMVAFixtures
import Foundation
import Testing

@Suite("verify-pipeline stream", .serialized)
struct StreamCommandTests {
    @Test("the sample stream: one result line per input line, errors with the spec's codes")
    func sampleStream() async throws {
        let folder = try temporaryFolder("stream-samples")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("s.sqlite").path
        let process = try InteractiveProcess(["stream", "--store", store, "--omit-images", "--allow-path", "Samples"])
        let input = try String(contentsOf: CLIRunner.root.appendingPathComponent("Samples/stream.ndjson"), encoding: .utf8)
        let inputLines = input.split(separator: "\n")
        for line in inputLines { process.write(String(line)) }
        process.closeInput()
        var outputs: [ResultLine] = []
        while outputs.count < inputLines.count, let line = await process.nextLine() {
            outputs.append(try JSONDecoder().decode(ResultLine.self, from: Data(line.utf8)))
        }
        #expect(await process.waitForExit())
        #expect(process.process.terminationStatus == 1)
        #expect(outputs.count == inputLines.count)
        let codes = Dictionary(uniqueKeysWithValues: outputs.map { ($0.id, $0.error?.code ?? "ok") })
        #expect(
            codes == [
                "s1": "ok", "s2": "ok", "s3": "ok", "s4": "ok",
                "line-5": "invalidKeyMap",  // malformed JSON
                "s6": "missingDocumentType",  // unknown document type
                "s7": "initiateDocumentTransactionError",  // no QR and no transactionId
                "s8": "documentCaptureError",  // invalid base64
                "s9": "documentCaptureError",  // a path that does not exist
                "s10": "invalidQR",  // a QR that is not a verification QR
                "s11": "ok",
                "s12": "ok"  // AAMVA text handed over as barcode
            ])
        #expect(outputs.first { $0.id == "s4" }?.documentStatus?["PHONE"] == "SKIPPED")
        #expect(outputs.first { $0.id == "s12" }?.document?["lastName"] == "SAMPLE")
        // Results come in completion order; the store has the final word.
        let status = try await CLIRunner.run(["status", "txn-stream-001", "--json", "--store", store])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(object["documentSubmissionStatus"] as? String == "COMPLETED")
    }

    @Test("stdin /dev/null (systemd's StandardInput=null, docker run without -i, cron): stream ends with nothing to do, run reads its folder")
    func devNullInput() async throws {
        let folder = try temporaryFolder("stream-dev-null")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = try await CLIRunner.run(["stream", "--store", folder.appendingPathComponent("s.sqlite").path], input: .devNull)
        #expect(stream.status == 0, "\(stream.stderr)")
        #expect(stream.stdout.isEmpty)
        #expect(stream.stderr.contains("0 documents"), "\(stream.stderr)")
        let run = try await CLIRunner.run(
            ["run", "Samples/batch", "--store", folder.appendingPathComponent("r.sqlite").path, "--omit-images"], input: .devNull)
        #expect(run.status == 1, "\(run.stderr)")  // the sample batch has three failing documents
        #expect(run.lines.count == 15)
    }

    @Test("the store file deleted under a running stream: later documents fail naming it, none is sent, the exit is 1")
    func storeFileDeleted() async throws {
        let folder = try temporaryFolder("stream-store-deleted")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("s.sqlite")
        let process = try InteractiveProcess(["stream", "--store", store.path])
        func line(_ n: Int) -> String {
            let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=gone-\(n)&code=C\(n)"
            return #"{"id":"e\#(n)","qr":"\#(qr)","type":"EMAIL","email":"e\#(n)@example.com"}"#
        }
        process.write(line(1))
        let first = try JSONDecoder().decode(ResultLine.self, from: Data(try #require(await process.nextLine()).utf8))
        #expect(first.error == nil)
        try FileManager.default.removeItem(at: store)
        process.write(line(2))
        process.closeInput()
        let second = try JSONDecoder().decode(ResultLine.self, from: Data(try #require(await process.nextLine()).utf8))
        #expect(second.error?.code == "submissionError")
        #expect(second.error?.message.contains("deleted, moved or replaced") == true, "\(String(describing: second.error))")
        #expect(await process.waitForExit())
        #expect(process.process.terminationStatus == 1)
    }

    @Test("a line's barcode text: AAMVA data gives the AAMVA fields, other text is refused, a broken record fails alone")
    func barcodeText() async throws {
        let folder = try temporaryFolder("stream-barcode")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The sample licence (AAMVA 2020, Annex D) expired in 2024: this pipeline does not refuse expired documents.
        let pipeline = folder.appendingPathComponent("pipeline.yaml")
        try "name: barcode-text\npolicy:\n  failExpiredId: false\n".write(to: pipeline, atomically: true, encoding: .utf8)
        let process = try InteractiveProcess([
            "stream", "--store", folder.appendingPathComponent("s.sqlite").path,
            "--pipeline", pipeline.path
        ])
        func qr(_ n: Int) -> String { "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=bc-\(n)&code=7" }
        func line(_ id: String, _ n: Int, barcode: String, extra: String = "") throws -> String {
            let text = String(decoding: try JSONEncoder().encode(barcode), as: UTF8.self)
            return #"{"id":"\#(id)","qr":"\#(qr(n))","type":"GOVERNMENT_ID","barcode":\#(text)\#(extra)}"#
        }
        let sample = AAMVASample.standard
        process.write(try line("aamva", 1, barcode: sample))
        process.write(try line("plain", 2, barcode: "1D-CODE-0042"))
        process.write(try line("broken", 3, barcode: "@\n\u{1E}\rANSI 6360"))
        process.write(try line("disagree", 4, barcode: sample, extra: #","fields":{"lastName":"OTHER"}"#))
        process.closeInput()
        var results: [String: ResultLine] = [:]
        while results.count < 4, let answer = await process.nextLine(timeout: 20) {
            let result = try JSONDecoder().decode(ResultLine.self, from: Data(answer.utf8))
            results[result.id] = result
        }
        #expect(await process.waitForExit())
        let aamva = try #require(results["aamva"]?.document, "\(results["aamva"]?.error?.message ?? "no answer")")
        #expect(aamva["documentNumber"] == "T64235789")
        #expect(aamva["lastName"] == "SAMPLE" && aamva["firstName"] == "MICHAEL" && aamva["middleName"] == "JOHN")
        #expect(aamva["dateOfBirth"] == "1986-06-06" && aamva["dateOfExpiry"] == "2024-12-10" && aamva["sex"] == "M")
        #expect(aamva["addressCity"] == "RICHMOND" && aamva["addressState"] == "VA")
        #expect(aamva["barcode"] == sample)
        #expect(results["aamva"]?.documentStatus?["GOVERNMENT_ID"] == "PROCESSED")
        // Not AAMVA: it identifies no one, so a government id is refused (scan.opaqueBarcodes defaults to refuse).
        #expect(results["plain"]?.error?.message.hasPrefix("barcode: not AAMVA data") == true)
        #expect(results["broken"]?.error?.code == "documentCaptureError")
        #expect(results["broken"]?.error?.message.hasPrefix("barcode: ") == true)
        #expect(results["disagree"]?.error?.code == "documentCaptureError")
        #expect(results["disagree"]?.error?.message.contains("lastName") == true)
    }

    @Test("fail closed: an expired licence's text with a leading space is expired, blank text and a cut record are refused, repairs are reported")
    func failClosed() async throws {
        let folder = try temporaryFolder("stream-fail-closed")
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = try InteractiveProcess(["stream", "--store", folder.appendingPathComponent("s.sqlite").path])
        func qr(_ n: Int) -> String { "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=fc-\(n)&code=7" }
        func line(_ id: String, _ n: Int, barcode: String) throws -> String {
            let text = String(decoding: try JSONEncoder().encode(barcode), as: UTF8.self)
            return #"{"id":"\#(id)","qr":"\#(qr(n))","type":"GOVERNMENT_ID","barcode":\#(text)}"#
        }
        let garza = try #require(AAMVAFixtures.all.first { $0.name.contains("unreadable optional element") })
        let lines = [
            ("expired", AAMVATransport.leadingSpace.apply(AAMVAFixtures.expired.text)), ("empty", ""), ("blank", "  \n "),
            ("cut", String(AAMVAFixtures.all[0].text.unicodeScalars.prefix(60))), ("repaired", garza.text)
        ]
        for (index, (id, barcode)) in lines.enumerated() { process.write(try line(id, index, barcode: barcode)) }
        process.closeInput()
        var results: [String: ResultLine] = [:]
        while results.count < lines.count, let answer = await process.nextLine(timeout: 20) {
            let result = try JSONDecoder().decode(ResultLine.self, from: Data(answer.utf8))
            results[result.id] = result
        }
        #expect(await process.waitForExit())
        #expect(results["expired"]?.error?.message == "the identity document has expired")
        #expect(results["empty"]?.error?.message == "barcode: the barcode text is empty")
        #expect(results["blank"]?.error?.message == "barcode: the barcode text is empty")
        #expect(results["cut"]?.error?.message == "barcode: no family name, date of birth, document number or date of expiry could be read")
        for id in ["expired", "empty", "blank", "cut"] { #expect(results[id]?.error?.code == "documentCaptureError", "\(id)") }
        #expect(results["repaired"]?.documentStatus?["GOVERNMENT_ID"] == "PROCESSED")
        #expect(results["repaired"]?.document?["lastName"] == "GARZA" && results["repaired"]?.document?["dateOfIssue"] == nil)
        #expect(results["repaired"]?.warnings == ["AAMVA DBD (date of issue) is not a valid date: dropped"])
    }

    @Test("each answer arrives before the next line is written")
    func interactive() async throws {
        let folder = try temporaryFolder("stream-interactive")
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = try InteractiveProcess([
            "stream", "--store", folder.appendingPathComponent("s.sqlite").path, "--omit-images",
            "--allow-path", "Samples"
        ])
        let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=live-1&code=42"
        let conversation: [(String, String, String?)] = [
            (#"{"id":"a","qr":"\#(qr)","type":"EMAIL","email":"a@example.com"}"#, "a", nil),
            (#"{"id":"b","type":"SELFIE""#, "line-2", "invalidKeyMap"),
            (#"{"id":"c","transactionId":"live-1","type":"SELFIE","selfiePath":"Samples/batch/01-complete/selfie.jpg"}"#, "c", nil),
            (#"{"id":"d","transactionId":"nobody","type":"PHONE","phone":"+1 555 0100"}"#, "d", "initiateDocumentTransactionError"),
            (
                #"{"id":"e","transactionId":"live-1","type":"GOVERNMENT_ID","frontImagePath":"Samples/batch/05-corrupt-image/front.jpg"}"#, "e",
                "documentCaptureError"
            )
        ]
        for (line, id, code) in conversation {
            process.write(line)
            let answer = try #require(await process.nextLine(timeout: 20), "no answer to \(id) within 20 s")
            let result = try JSONDecoder().decode(ResultLine.self, from: Data(answer.utf8))
            #expect(result.id == id)
            #expect(result.error?.code == code, "\(id): \(result.error?.message ?? "")")
            // The process is still waiting for more input.
            #expect(process.process.isRunning)
        }
        process.closeInput()
        #expect(await process.waitForExit())
        #expect(process.stderr.contains("5 documents (3 failed"))
    }

    @Test("SIGTERM stops the intake, lets in-flight documents finish and prints the summary")
    func gracefulShutdown() async throws {
        let folder = try temporaryFolder("stream-sigterm")
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = try InteractiveProcess([
            "stream", "--store", folder.appendingPathComponent("s.sqlite").path, "--omit-images",
            "--allow-path", "Samples"
        ])
        let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=term-1&code=1"
        process.write(#"{"id":"x","qr":"\#(qr)","type":"EMAIL","email":"x@example.com"}"#)
        #expect(await process.nextLine() != nil)
        kill(process.process.processIdentifier, SIGTERM)
        #expect(await process.waitForExit(timeout: 10), "stdin is still open: only the signal can end it")
        #expect(process.process.terminationReason == .exit)
        #expect(process.process.terminationStatus == 0)
        #expect(process.stderr.contains("1 document (0 failed"))
    }
}

/// The example of the AAMVA DL/ID Card Design Standard (2020), Annex D: a public test vector.
enum AAMVASample {
    static let standard =
        "@\n\u{1E}\rANSI 636000100102DL00410278ZV03190008DLDAQT64235789\nDCSSAMPLE\nDDEN\nDACMICHAEL\nDDFN\nDADJOHN\nDDGN\nDCUJR\nDCAD\nDCBK\nDCDPH\nDBD06062019\nDBB06061986\nDBA12102024\nDBC1\nDAU068 in\nDAYBRO\nDAG2300 WEST BROAD STREET\nDAIRICHMOND\nDAJVA\nDAK232690000  \nDCF2424244747474786102204\nDCGUSA\nDCK123456789\nDDAF\nDDB06062018\nDDC06062020\nDDD1\rZVZVA01\r"
}
