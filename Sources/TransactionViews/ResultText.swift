import DocumentOutcomes
import VerifyModel

/// One document's result as a person at a terminal reads it (`run` and `stream` there): its status, type, input id
/// and transaction, and for a failure the error's code and message; never a value of the document (the NDJSON
/// line carries those, with `--format ndjson`).
///
///     PROCESSED  EMAIL          01-complete/EMAIL  txn-batch-001
///     FAILED     GOVERNMENT_ID  05-corrupt-image/GOVERNMENT_ID  txn-batch-005  documentCaptureError: front image: …
package struct ResultText {
    package let outcome: DocumentOutcome

    package init(_ outcome: DocumentOutcome) {
        self.outcome = outcome
    }

    /// The status word: the document's status after this result, `FAILED`, or `SKIPPED`.
    var status: String {
        if outcome.failure != nil { return "FAILED" }
        if let response = outcome.response, let status = response.documentStatus[response.documentType] { return status.rawValue }
        return outcome.skipped ? "SKIPPED" : "DONE"
    }

    package var line: String {
        let type = outcome.response?.documentType.rawValue ?? outcome.documentType?.rawValue ?? "-"
        var parts = [status.padded(to: 10), type.padded(to: 14), (outcome.inputId ?? outcome.source).escapingControls]
        if let transaction = outcome.response?.transactionId ?? outcome.transactionId { parts.append(transaction.escapingControls) }
        if let failure = outcome.failure { parts.append("\(failure.code.rawValue): \(failure.message.escapingControls)") }
        var notes: [String] = []
        if outcome.alreadySubmitted { notes.append("already submitted") }
        if !outcome.warnings.isEmpty { notes.append(outcome.warnings.count == 1 ? "1 warning" : "\(outcome.warnings.count) warnings") }
        return parts.joined(separator: "  ").trimmingTrailingSpaces + (notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))")
    }

}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
