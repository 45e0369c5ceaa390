import Foundation
import LoopbackServer
import Testing

/// CONTRACT §8: no message ever holds a store row, a verification code, a token or a document value. Every secret
/// these tests feed in carries the marker "QXZ" (any case), which no id, key or message of the tool contains;
/// the tests then look for the marker, and the birth date in both its forms, in everything a user or a log
/// collector sees: each error message, stderr at trace level, and `status`.
@Suite("No secret in any message", .serialized)
struct NoSecretsInMessagesTests {
    static let marker = "qxz"
    static let birthDate = ("740812", "1974-08-12")

    @Test("errors from every stage, at trace level, over http with a token: no code, token or document value in any message")
    func streamFailures() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("no-secrets-stream")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {GOVERNMENT_ID: REQUIRED, SELFIE: OPTIONAL, EMAIL: OPTIONAL, PHONE: OPTIONAL}
            submitter:
              kind: http
              endpoint: \(server.baseURL)/v1
              tokenEnv: SWEEP_TOKEN
              timeoutSeconds: 2
              retry: {maxAttempts: 2, initialBackoffMs: 10, maxBackoffMs: 20}
            """)
        let store = folder.appendingPathComponent("s.sqlite").path
        let line1 = Self.td3Line1(surname: "QXZSECRETSURNAME", given: "QXZSECRETGIVEN")
        let valid = Self.td3Line2(number: "QXZ123456", birth: Self.birthDate.0, expiry: "351231")
        func qr(_ transaction: String, _ code: String) -> String {
            "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=\(transaction)&code=\(code)"
        }
        func mrz(_ lines: String...) -> String { lines.joined(separator: "\n") }
        func json(_ object: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        let brokenNumberCheck =
            String(valid.prefix(9)) + (valid[valid.index(valid.startIndex, offsetBy: 9)] == "0" ? "1" : "0")
            + String(valid.dropFirst(10))
        let lines: [(id: String, code: String?, line: String)] = [
            (
                "accepted", nil,
                try json([
                    "id": "accepted", "qr": qr("accept-sweep", "CODEQXZ0001"), "type": "GOVERNMENT_ID",
                    "mrz": mrz(line1, valid)
                ])
            ),
            (
                "other-code", "initiateDocumentTransactionError",
                try json(["id": "other-code", "qr": qr("accept-sweep", "CODEQXZ0002"), "type": "EMAIL", "email": "qxz.secret@example.com"])
            ),
            (
                "check-digit", "documentCaptureError",
                try json([
                    "id": "check-digit", "qr": qr("digit-sweep", "CODEQXZ0003"), "type": "GOVERNMENT_ID",
                    "mrz": mrz(line1, brokenNumberCheck)
                ])
            ),
            (
                "not-a-date", "documentCaptureError",
                try json([
                    "id": "not-a-date", "qr": qr("date-sweep", "CODEQXZ0004"), "type": "GOVERNMENT_ID",
                    "mrz": mrz(line1, Self.td3Line2(number: "QXZ123456", birth: "74QXZ2", expiry: "351231"))
                ])
            ),
            (
                "bad-character", "documentCaptureError",
                try json([
                    "id": "bad-character", "qr": qr("char-sweep", "CODEQXZ0005"), "type": "GOVERNMENT_ID",
                    "mrz": mrz(line1.lowercased(), valid)
                ])
            ),
            (
                "disagree", "documentCaptureError",
                try json([
                    "id": "disagree", "qr": qr("conflict-sweep", "CODEQXZ0006"), "type": "GOVERNMENT_ID",
                    "mrz": mrz(line1, valid), "fields": ["lastName": "QXZOTHERSURNAME"]
                ])
            ),
            (
                "base64", "documentCaptureError",
                try json(["id": "base64", "qr": qr("image-sweep", "CODEQXZ0007"), "type": "SELFIE", "selfie": "QXZ!!"])
            ),
            (
                "expired", "documentSubmissionTimeoutError",
                try json([
                    "id": "expired", "qr": qr("expired-sweep", "CODEQXZ0008"), "type": "EMAIL", "email": "qxz.secret@example.com",
                    "createdAt": "2020-01-01T00:00:00Z", "expiresAt": "2020-01-01T00:30:00Z"
                ])
            ),
            (
                "unsafe-code", "invalidQR",
                try json(["id": "unsafe-code", "qr": qr("unsafe-sweep", "QXZ%1B%5B2J"), "type": "EMAIL", "email": "qxz.secret@example.com"])
            ),
            (
                "bad-timestamp", "invalidKeyMap",
                try json([
                    "id": "bad-timestamp", "qr": qr("time-sweep", "CODEQXZ0009"), "type": "EMAIL", "email": "qxz.secret@example.com",
                    "createdAt": "QXZ-not-a-date"
                ])
            ),
            (
                "rejected", "submissionError",
                try json(["id": "rejected", "qr": qr("bad-sweep", "CODEQXZ0010"), "type": "EMAIL", "email": "qxz.secret@example.com"])
            ),
            (
                "gave-up", "submissionError",
                try json(["id": "gave-up", "qr": qr("flaky-sweep", "CODEQXZ0011"), "type": "PHONE", "phone": "+1 555 0100 QXZ"])
            ),
            (
                "outside", "documentCaptureError",
                try json(["id": "outside", "qr": qr("path-sweep", "CODEQXZ0012"), "type": "SELFIE", "selfiePath": "/etc/shadow"])
            ),
            ("line-14", "invalidKeyMap", #"{"id":"cut","qr":"\#(qr("cut-sweep", "CODEQXZ0013"))","email":"qxz.secret@example.com""#)
        ]
        // The first line opens the transaction the second names with another code: it is answered before the rest go in.
        let process = try InteractiveProcess(
            ["stream", "--store", store, "--pipeline", pipeline, "--omit-images", "--log-level", "trace", "--allow-path", "Samples"],
            environment: ["SWEEP_TOKEN": "TOKENQXZ4242"])
        var output: [String] = []
        for (index, entry) in lines.enumerated() {
            process.write(entry.line)
            if index == 0 { output.append(try #require(await process.nextLine(), "no answer to the first line")) }
        }
        process.closeInput()
        while output.count < lines.count, let line = await process.nextLine() { output.append(line) }
        #expect(await process.waitForExit())
        #expect(process.process.terminationStatus == 1)
        let outcome = CLIRunner.Outcome(
            status: process.process.terminationStatus, stdout: output.joined(separator: "\n"),
            stderr: process.stderr)

        let results = try resultLines(outcome.stdout)
        let codes = Dictionary(results.map { ($0.id, $0.error?.code) }, uniquingKeysWith: { first, _ in first })
        for expected in lines {
            #expect(codes[expected.id] == .some(expected.code), "\(expected.id)")
        }
        // The token did reach the server: the marker's absence below is not for want of using it.
        #expect(server.requests.contains { $0.headers["authorization"] == "Bearer TOKENQXZ4242" })
        #expect(outcome.stderr.contains("trace") || outcome.stderr.contains("debug"), "trace logging produced nothing to look at")

        var seen = results.compactMap { $0.error?.message }
        seen.append(outcome.stderr)
        // What status prints for each (text and JSON) and the list, rendered by the code the command prints with.
        seen += try await InProcess.statuses(store, ["accept-sweep", "bad-sweep", "flaky-sweep", "expired-sweep"])
        let list = try await CLIRunner.run(["status", "--store", store])
        seen += [list.stdout, list.stderr]
        Self.expectNoSecret(in: seen)
    }

    @Test("the sample batch at trace level: no value of any sample document in stderr, the error messages or status")
    func sampleBatch() async throws {
        let folder = try temporaryFolder("no-secrets-batch")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("s.sqlite").path
        let outcome = try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--omit-images", "--log-level", "trace"])
        #expect(outcome.status == 1)
        let results = try resultLines(outcome.stdout)
        // The values the samples hold, as the tool itself printed them in the results (the one place they belong).
        let objects = outcome.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let values = Set(objects.flatMap { ($0["document"] as? [String: String] ?? [:]).values }.filter { $0.count >= 5 })
        #expect(values.count >= 10, "the samples' documents hold too few values to make this test mean anything")
        #expect(!outcome.stderr.isEmpty)

        var seen = results.compactMap { $0.error?.message }
        seen.append(outcome.stderr)
        seen += try await InProcess.statuses(store, Set(results.compactMap(\.transactionId)))
        for text in seen {
            for value in values {
                #expect(!text.contains(value), "a sample document value appears in: \(text.prefix(300))")
            }
        }
    }

    static func expectNoSecret(in texts: [String]) {
        for text in texts {
            for secret in [marker, birthDate.0, birthDate.1] {
                if let range = text.range(of: secret, options: .caseInsensitive) {
                    let start = text.index(range.lowerBound, offsetBy: -120, limitedBy: text.startIndex) ?? text.startIndex
                    let end = text.index(range.upperBound, offsetBy: 120, limitedBy: text.endIndex) ?? text.endIndex
                    Issue.record("a secret appears in a message: …\(text[start..<end])…")
                }
            }
        }
    }

    // ICAO 9303 TD3 lines, written out here rather than by the code under test.

    static func td3Line1(surname: String, given: String) -> String {
        pad("P<UTO" + surname + "<<" + given, 44)
    }

    static func td3Line2(number: String, birth: String, expiry: String) -> String {
        let personal = String(repeating: "<", count: 14)
        let fields =
            number + checkDigit(number) + "UTO" + birth + checkDigit(birth) + "F" + expiry + checkDigit(expiry)
            + personal + checkDigit(personal)
        let composite =
            number + checkDigit(number) + birth + checkDigit(birth) + expiry + checkDigit(expiry) + personal
            + checkDigit(personal)
        return fields + checkDigit(composite)
    }

    static func checkDigit(_ text: String) -> String {
        let weights = [7, 3, 1]
        var sum = 0
        for (index, character) in text.unicodeScalars.enumerated() {
            let value: Int =
                switch character {
                case "0"..."9": Int(character.value) - 48
                case "A"..."Z": Int(character.value) - 55
                default: 0
                }
            sum += value * weights[index % 3]
        }
        return String(sum % 10)
    }

    static func pad(_ text: String, _ length: Int) -> String {
        text + String(repeating: "<", count: max(0, length - text.count))
    }
}
