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
        while outputs.count < inputLines.count, let line = process.nextLine() {
            outputs.append(try JSONDecoder().decode(ResultLine.self, from: Data(line.utf8)))
        }
        #expect(process.waitForExit())
        #expect(process.process.terminationStatus == 1)
        #expect(outputs.count == inputLines.count)
        let codes = Dictionary(uniqueKeysWithValues: outputs.map { ($0.id, $0.error?.code ?? "ok") })
        #expect(codes == [
            "s1": "ok", "s2": "ok", "s3": "ok", "s4": "ok",
            "line-5": "invalidKeyMap",             // malformed JSON
            "s6": "missingDocumentType",           // unknown document type
            "s7": "initiateDocumentTransactionError", // no QR and no transactionId
            "s8": "documentCaptureError",          // invalid base64
            "s9": "documentCaptureError",          // a path that does not exist
            "s10": "invalidQR",                    // a QR that is not a verification QR
            "s11": "ok",
        ])
        #expect(outputs.first { $0.id == "s4" }?.documentStatus?["PHONE"] == "SKIPPED")
        // Results come in completion order; the store has the final word.
        let status = try await CLIRunner.run(["status", "txn-stream-001", "--json", "--store", store])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(object["documentSubmissionStatus"] as? String == "COMPLETED")
    }

    @Test("each answer arrives before the next line is written")
    func interactive() throws {
        let folder = try temporaryFolder("stream-interactive")
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = try InteractiveProcess(["stream", "--store", folder.appendingPathComponent("s.sqlite").path, "--omit-images",
                                              "--allow-path", "Samples"])
        let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=live-1&code=42"
        let conversation: [(String, String, String?)] = [
            (#"{"id":"a","qr":"\#(qr)","type":"EMAIL","email":"a@example.com"}"#, "a", nil),
            (#"{"id":"b","type":"SELFIE""#, "line-2", "invalidKeyMap"),
            (#"{"id":"c","transactionId":"live-1","type":"SELFIE","selfiePath":"Samples/batch/01-complete/selfie.jpg"}"#, "c", nil),
            (#"{"id":"d","transactionId":"nobody","type":"PHONE","phone":"+1 555 0100"}"#, "d", "initiateDocumentTransactionError"),
            (#"{"id":"e","transactionId":"live-1","type":"GOVERNMENT_ID","frontImagePath":"Samples/batch/05-corrupt-image/front.jpg"}"#, "e", "documentCaptureError"),
        ]
        for (line, id, code) in conversation {
            process.write(line)
            let answer = try #require(process.nextLine(timeout: 20), "no answer to \(id) within 20 s")
            let result = try JSONDecoder().decode(ResultLine.self, from: Data(answer.utf8))
            #expect(result.id == id)
            #expect(result.error?.code == code, "\(id): \(result.error?.message ?? "")")
            // The process is still waiting for more input.
            #expect(process.process.isRunning)
        }
        process.closeInput()
        #expect(process.waitForExit())
        #expect(process.stderr.contains("5 documents (3 failed"))
    }

    @Test("SIGTERM stops the intake, lets in-flight documents finish and prints the summary")
    func gracefulShutdown() throws {
        let folder = try temporaryFolder("stream-sigterm")
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = try InteractiveProcess(["stream", "--store", folder.appendingPathComponent("s.sqlite").path, "--omit-images",
                                              "--allow-path", "Samples"])
        let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=term-1&code=1"
        process.write(#"{"id":"x","qr":"\#(qr)","type":"EMAIL","email":"x@example.com"}"#)
        #expect(process.nextLine() != nil)
        kill(process.process.processIdentifier, SIGTERM)
        #expect(process.waitForExit(timeout: 10), "stdin is still open: only the signal can end it")
        #expect(process.process.terminationReason == .exit)
        #expect(process.process.terminationStatus == 0)
        #expect(process.stderr.contains("1 documents (0 failed"))
    }
}
