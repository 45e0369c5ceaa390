import Foundation
import Testing

struct ScanLine: Decodable {
    struct Code: Decodable, Hashable {
        var format: String
        var text: String
    }

    struct Failure: Decodable {
        var code: String
        var message: String
    }

    var source: String
    var barcodes: [Code]?
    var error: Failure?
}

func decodeLines(_ outcome: CLIRunner.Outcome) throws -> [ScanLine] {
    try outcome.lines.map { try JSONDecoder().decode(ScanLine.self, from: Data($0.utf8)) }
}

@Suite("verify-pipeline scan", .serialized)
struct ScanCommandTests {
    static let samples = CLIRunner.root.appendingPathComponent("Samples/images")

    @Test("prints the right text for every sample code, QR and PDF417")
    func scansSamples() async throws {
        let expectedData = try Data(contentsOf: Self.samples.appendingPathComponent("expected.json"))
        let expected = try JSONDecoder().decode([String: [ScanLine.Code]].self, from: expectedData)
        let outcome = try await CLIRunner.run(["scan", "Samples/images", "--json"])
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let lines = try decodeLines(outcome)
        #expect(lines.count == expected.count)
        for line in lines {
            let name = URL(fileURLWithPath: line.source).lastPathComponent
            #expect(line.error == nil)
            #expect(Set(line.barcodes ?? []) == Set(expected[name] ?? []), "\(name)")
        }
        #expect(Set(expected.values.flatMap { $0 }.map(\.format)) == ["QR_CODE", "PDF417"])
    }

    @Test("scan --json reports an MRZ with how surely each field was read, its mends and unlisted state codes")
    func mrzReport() async throws {
        struct Line: Decodable {
            struct Code: Decodable {
                struct Report: Decodable {
                    struct Confidence: Decodable {
                        var score: Double
                        var margin: Double
                    }

                    var format: String
                    var confidence: [String: Confidence]
                    var repairs: [String]
                    var unknownStates: [String]
                }

                var format: String
                var text: String
                var mrz: Report?
            }

            var barcodes: [Code]
        }
        let outcome = try await CLIRunner.run(["scan", "--json", "--symbologies", "MRZ", "Samples/batch/08-passport-image/front.jpg"])
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let line = try JSONDecoder().decode(Line.self, from: Data(try #require(outcome.lines.first).utf8))
        let code = try #require(line.barcodes.first)
        #expect(code.format == "MRZ" && code.text.hasPrefix("P<UTO"))
        let report = try #require(code.mrz)
        #expect(report.format == "TD3")
        #expect(
            Set(report.confidence.keys) == [
                "documentCode", "issuingState", "name", "documentNumber", "nationality",
                "dateOfBirth", "sex", "dateOfExpiry", "personalIdNumber", "composite"
            ])
        // Returned only when every character led the next by 0.02 or was a bounded mend.
        #expect(report.confidence.values.allSatisfy { $0.score > 0.5 && $0.margin >= 0.02 } || !report.repairs.isEmpty)
        #expect(report.repairs.count <= 2 && report.unknownStates.isEmpty)
    }

    @Test("an MRZ found but not read with confidence is reported as unreadable, naming the field and no value")
    func mrzUnreadable() async throws {
        struct Line: Decodable {
            struct Unreadable: Decodable, Equatable {
                var format: String
                var field: String
                var message: String
            }

            var barcodes: [[String: String]]
            var unreadable: [Unreadable]?
        }
        // A page whose printed birth date (740812) does not match its check digit: a band is there, no reading is.
        let fixture = "Tests/MRZReadingTests/Fixtures/td3-bad-check-digit.png"
        let json = try await CLIRunner.run(["scan", "--json", "--symbologies", "MRZ", fixture])
        #expect(json.status == 0, "stderr: \(json.stderr)")
        let line = try JSONDecoder().decode(Line.self, from: Data(try #require(json.lines.first).utf8))
        #expect(line.barcodes.isEmpty)
        let unreadable = try #require(line.unreadable?.first)
        #expect(line.unreadable?.count == 1 && unreadable.format == "MRZ" && unreadable.field == "dateOfBirth")
        #expect(!json.stdout.contains("740812") && !json.stdout.contains("ERIKSSON"))
        let text = try await CLIRunner.run(["scan", "--symbologies", "MRZ", fixture])
        #expect(text.stdout == "\(fixture): MRZ unreadable (dateOfBirth): \(unreadable.message)\n")
    }

    @Test("an MRZ printed against ICAO 9303, its check digits valid, is reported as printed with the rule it breaks")
    func mrzMisprinted() async throws {
        struct Line: Decodable {
            struct Misprint: Decodable {
                var field: String
                var message: String
                var reason: String
            }
            struct Report: Decodable { var misprint: Misprint? }
            struct Code: Decodable {
                var format: String
                var text: String
                var mrz: Report?
            }

            var barcodes: [Code]
            var unreadable: [[String: String]]?
        }
        // The TD3 specimen born on 29 February 1977, a common year: its check digits computed over what is printed.
        let fixture = "Tests/MRZReadingTests/Fixtures/td3-misprint-february-29.png"
        let json = try await CLIRunner.run(["scan", "--json", "--symbologies", "MRZ", fixture])
        #expect(json.status == 0, "stderr: \(json.stderr)")
        let line = try JSONDecoder().decode(Line.self, from: Data(try #require(json.lines.first).utf8))
        let code = try #require(line.barcodes.first)
        #expect(line.barcodes.count == 1 && line.unreadable == nil)
        #expect(code.text == "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7702299F1204159ZE184226B<<<<<16")
        let misprint = try #require(code.mrz?.misprint)
        #expect(misprint.field == "dateOfBirth" && misprint.reason == "invalidDate")
        #expect(!misprint.message.contains("770229"))
        let text = try await CLIRunner.run(["scan", "--symbologies", "MRZ", fixture])
        #expect(text.stdout.hasSuffix("B<<<<<16\" misprinted (dateOfBirth): \(misprint.message)\n"))
    }

    @Test("each corrupt file gets its own error, the good ones still scan, and the exit status is 1")
    func corruptFilesDoNotStopTheBatch() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scan-corrupt-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let corruptFixtures = CLIRunner.root.appendingPathComponent("Tests/ImageDecodingTests/Fixtures")
        let corrupt = try FileManager.default.contentsOfDirectory(atPath: corruptFixtures.path)
            .filter { $0.hasPrefix("corrupt-") }
        #expect(corrupt.count == 11)
        for name in corrupt {
            try FileManager.default.copyItem(
                at: corruptFixtures.appendingPathComponent(name),
                to: folder.appendingPathComponent(name))
        }
        for name in ["qr-verification-1.png", "licence-back-2.jpg"] {
            try FileManager.default.copyItem(
                at: Self.samples.appendingPathComponent(name),
                to: folder.appendingPathComponent("good-" + name))
        }
        let outcome = try await CLIRunner.run(["scan", folder.path, "--json", "--jobs", "2"])
        #expect(outcome.status == 1)
        let lines = try decodeLines(outcome)
        #expect(lines.count == corrupt.count + 2)
        // Input order: the folder's files sorted by name.
        #expect(
            lines.map { URL(fileURLWithPath: $0.source).lastPathComponent }
                == (corrupt + ["good-qr-verification-1.png", "good-licence-back-2.jpg"]).sorted())
        for line in lines {
            if line.source.contains("/corrupt-") {
                #expect(line.error?.code == "documentCaptureError", "\(line.source)")
                #expect(line.barcodes == nil)
            } else {
                #expect(line.error == nil)
                #expect(line.barcodes?.count == 1, "\(line.source)")
            }
        }
    }

    @Test("a path that does not exist is an error result, not an abort")
    func missingPath() async throws {
        let outcome = try await CLIRunner.run(["scan", "no/such/file.png", "Samples/images/qr-verification-2.jpg", "--json"])
        #expect(outcome.status == 1)
        let lines = try decodeLines(outcome)
        #expect(lines.count == 2)
        #expect(lines[0].error?.code == "documentCaptureError")
        #expect(lines[1].barcodes?.first?.format == "QR_CODE")
    }

    @Test("text: a symbol's controls as a shell writes them (\\x1e, \\n), an image's error on stderr; --raw: the text exactly, one a line")
    func textAndRaw() async throws {
        let back = "Samples/batch/01-complete/back.png", qr = "Samples/batch/01-complete/qr.png"
        let text = try await CLIRunner.run(["scan", back, "no/such/file.png", qr])
        #expect(text.status == 1)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(text.stdout)")
        #expect(lines[0].hasPrefix("\(back): PDF417 \"@\\n\\x1e\\rANSI 636014"), "\(lines[0])")
        #expect(!lines[0].contains("\\u{"))
        #expect(lines[1].hasPrefix("\(qr): QR_CODE \"https://"))
        #expect(text.stderr.contains("no/such/file.png: error documentCaptureError: "), "\(text.stderr)")
        #expect(!text.stdout.contains("no/such/file.png"))
        let raw = try await CLIRunner.run(["scan", "--raw", back, qr])
        #expect(raw.status == 0)
        #expect(raw.stdout.hasPrefix("@\n\u{1E}\rANSI 636014"))
        #expect(raw.stdout.hasSuffix("code=700101\n") && !raw.stdout.contains(back))
        let both = try await CLIRunner.run(["scan", "--raw", "--json", qr])
        #expect(both.status == 2 && both.stderr.contains("two formats"))
    }

    @Test("usage errors exit 2 with a reason")
    func usageErrors() async throws {
        let outcome = try await CLIRunner.run(["scan", "Samples/", "--symbologies", "AZTEC"])
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("unknown symbology 'AZTEC'"))
    }
}
