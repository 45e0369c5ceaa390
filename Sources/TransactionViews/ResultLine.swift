import DocumentOutcomes
import Foundation

/// A result line (CONTRACT §6): the DocumentSubmissionResponse plus `id`, or `{"id", "error": {"code", "message"}}`.
package struct ResultLine: Encodable {
    package let outcome: DocumentOutcome

    package init(_ outcome: DocumentOutcome) {
        self.outcome = outcome
    }

    enum Key: String, CodingKey {
        case id, documentId, source, error, transactionId, documentType, alreadySubmitted, skipped, warnings
    }

    struct Failure: Encodable {
        var code: String
        var message: String
    }

    /// The encoder result lines are written with: keys sorted, slashes as they are.
    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The line's JSON, without its newline. A result that cannot be encoded still gets a line, so the reader keeps
    /// one line per input; a terminal control JSON leaves raw (C1, bidi marks, from a folder's name or a field) is
    /// escaped.
    package func json(_ encoder: JSONEncoder = ResultLine.encoder) -> Data {
        var data =
            (try? encoder.encode(self))
            ?? Data(#"{"error":{"code":"submissionError","message":"result could not be encoded"}}"#.utf8)
        // Those controls start with one of these bytes, which base64 images never hold.
        if data.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) {
            data = Data(String(decoding: data, as: UTF8.self).escapingTerminalControlsInJSON.utf8)
        }
        return data
    }

    package func encode(to encoder: any Encoder) throws {
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
        if !outcome.warnings.isEmpty { try container.encode(outcome.warnings, forKey: .warnings) }
    }
}
