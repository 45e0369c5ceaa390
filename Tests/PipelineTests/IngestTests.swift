import DocumentOutcomes
import Foundation
import Testing
import VerifyModel

@testable import Pipeline

@Suite("Ingest: NDJSON lines and batch folders into jobs")
struct IngestTests {
    static let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=t-1&code=C1"

    func failure(_ line: String) -> DocumentFailure? {
        if case .failure(let failure) = StreamLine.parse(line, number: 3) { return failure.failure }
        return nil
    }

    @Test(
        "each malformed line gets its own code and a message naming what is wrong",
        arguments: [
            ("{not json", "invalidKeyMap", "line 3 is not a JSON object"),
            (#"["an", "array"]"#, "invalidKeyMap", "line 3 is not a JSON object"),
            (#"{"id": 5, "type": "EMAIL"}"#, "invalidKeyMap", "'id' must be a non-empty string"),
            (#"{"type": "EMAIL", "colour": "red"}"#, "invalidKeyMap", "'colour' is not a known key"),
            (#"{"qr": "x"}"#, "missingDocumentType", "the line has no 'type'"),
            (
                #"{"type": "PASSPORT", "qr": "x"}"#, "missingDocumentType",
                "'PASSPORT' is not a document type (GOVERNMENT_ID, SELFIE, EMAIL, PHONE, VOICE)"
            ),
            // Names that are not short and plain are told by their length only: no escape sequence, value or megabyte echoed.
            (#"{"type": "EMAIL", "\u001b[2J": "x"}"#, "invalidKeyMap", "a name of 4 bytes is not a known key"),
            (
                #"{"type": "ANNA MARIA ERIKSSON", "qr": "x"}"#, "missingDocumentType",
                "a name of 19 bytes is not a document type (GOVERNMENT_ID, SELFIE, EMAIL, PHONE, VOICE)"
            ),
            (
                #"{"type": "EMAIL", "transactionId": "t", "fields": {"\#(String(repeating: "k", count: 65))": "v"}}"#, "invalidKeyMap",
                "fields: a name of 65 bytes is not a document key with a string value"
            ),
            (#"{"type": "EMAIL", "email": "a@example.com"}"#, "initiateDocumentTransactionError", "the line has neither 'qr' nor 'transactionId'"),
            (#"{"type": "EMAIL", "qr": "not a url"}"#, "invalidQR", nil),
            (#"{"type": "SELFIE", "transactionId": "t", "selfie": "***"}"#, "documentCaptureError", "'selfie' is not valid base64"),
            (#"{"type": "EMAIL", "transactionId": "t"}"#, "noDocumentToSubmitError", "the line carries no document data")
        ])
    func refused(_ line: String, code: String, message: String?) {
        let failure = failure(line)
        #expect(failure?.code.rawValue == code, "\(line)")
        if let message { #expect(failure?.message == message) }
    }

    @Test("a good line becomes a job: its id, type, transaction, images and captured fields")
    func accepted() throws {
        let line =
            #"{"id":"d1","qr":"\#(Self.qr)","type":"GOVERNMENT_ID","frontImage":"AQID","backImagePath":"/x/back.png","mrz":"M","fields":{"firstName":"ANNA"}}"#
        guard case .success(let job) = StreamLine.parse(line, number: 7) else {
            Issue.record("refused: \(line)")
            return
        }
        #expect(job.inputId == "d1" && job.source == "stdin:7" && job.sequence == 7)
        #expect(job.type == .governmentId && job.transactionId == "t-1")
        guard case .inline(let front) = job.images[.front], case .named(let back, let key) = job.images[.back], key == "backImagePath" else {
            Issue.record("images: \(job.images)")
            return
        }
        #expect(front == [1, 2, 3] && back == "/x/back.png")
        #expect(job.mrz == "M" && job.captured[.firstName] == "ANNA")
    }

    @Test("a batch folder: one job per document, a folder without a QR fails each of its documents, flat images pair up")
    func folder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        func write(_ path: String, _ text: String) throws {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try write("a/qr.txt", Self.qr)
        try write("a/fields.json", #"{"email": "a@example.com", "phone": "+1 555 0100"}"#)
        try write("b/fields.json", #"{"email": "b@example.com"}"#)
        try write("c/notes.txt", "nothing here")
        try write("anna-front.jpg", "not decoded at ingest")
        try write("anna-selfie.png", "not decoded at ingest")

        let results = try FolderIngest(root: root).jobs()
        let summary = results.map { result -> String in
            switch result {
            case .success(let job): "\(job.sequence) \(job.inputId ?? "") ok \(job.inputGroup ?? "-")"
            case .failure(let failure): "\(failure.input.sequence) \(failure.input.inputId ?? "") \(failure.failure.code.rawValue)"
            }
        }
        #expect(
            summary == [
                "0 a/EMAIL ok a",
                "1 a/PHONE ok a",
                "2 b/EMAIL initiateDocumentTransactionError",
                "3 c noDocumentToSubmitError",
                "4 anna/GOVERNMENT_ID ok .",
                "5 anna/SELFIE ok ."
            ])
        if case .success(let job) = results[4], case .qrImage(_, let candidates) = job.identity {
            #expect(candidates.map { URL(fileURLWithPath: $0).lastPathComponent } == ["anna-front.jpg", "anna-selfie.png"])
        } else {
            Issue.record("the flat front should look for its QR on its own images")
        }
    }
}
