import Foundation
import Pipeline
import VerifyModel

/// Writes one NDJSON line per document, each as soon as it is done (no buffering across lines).
actor OutputWriter {
    private let handle: FileHandle
    private let ownsHandle: Bool
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(path: String?) throws {
        if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission)
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            ownsHandle = true
        } else {
            handle = FileHandle.standardOutput
            ownsHandle = false
        }
    }

    func write(_ outcome: DocumentOutcome) {
        // A result line that cannot be encoded still gets a line, so the reader keeps one line per input.
        var data = (try? encoder.encode(ResultLine(outcome: outcome))) ?? Data(#"{"error":{"code":"submissionError","message":"result could not be encoded"}}"#.utf8)
        data.append(0x0A)
        handle.write(data)
    }

    func close() {
        // Every line was written as it came; a failing close has nothing left to lose.
        if ownsHandle { try? handle.close() }
    }
}

/// A result line (SPEC §6): the DocumentSubmissionResponse plus `id`, or `{"id", "error": {"code", "message"}}`.
struct ResultLine: Encodable {
    let outcome: DocumentOutcome

    enum Key: String, CodingKey {
        case id, documentId, source, error, transactionId, documentType, alreadySubmitted, skipped
    }

    struct Failure: Encodable {
        var code: String
        var message: String
    }

    func encode(to encoder: any Encoder) throws {
        if let response = outcome.response { try response.encode(to: encoder) }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(outcome.inputId ?? outcome.source, forKey: .id)
        try container.encode(outcome.source, forKey: .source)
        try container.encodeIfPresent(outcome.documentId, forKey: .documentId)
        if outcome.response == nil {
            try container.encodeIfPresent(outcome.transactionId, forKey: .transactionId)
            try container.encodeIfPresent(outcome.documentType?.rawValue, forKey: .documentType)
        }
        if let failure = outcome.failure {
            try container.encode(Failure(code: failure.code.rawValue, message: failure.message), forKey: .error)
        }
        if outcome.alreadySubmitted { try container.encode(true, forKey: .alreadySubmitted) }
        if outcome.skipped { try container.encode(true, forKey: .skipped) }
    }
}
