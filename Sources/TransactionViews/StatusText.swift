import Foundation
import Protect
import TransactionStore
import VerifyModel

/// How `status` prints: text for people, JSON with the spec's wire names for programs.
package enum StatusText {
    package static func text(_ report: TransactionReport, now: Date) -> String {
        let transaction = report.transaction
        let expired = now > transaction.expiresAt ? "  (expired)" : ""
        var lines = [
            "Transaction \(transaction.id)  \(transaction.state.submissionStatus.rawValue)",
            "  created  \(Timestamp.string(transaction.createdAt))",
            "  updated  \(Timestamp.string(transaction.updatedAt))",
            "  expires  \(Timestamp.string(transaction.expiresAt))\(expired)",
            "  data     \(report.data.rawValue)\(transaction.purgedAt.map { " at " + Timestamp.string($0) } ?? "")",
            "",
            "  Documents"
        ]
        for type in transaction.state.documents.keys.sorted() {
            let status = transaction.state.documents[type]!.rawValue
            let policy = transaction.policy[type]!.rawValue
            lines.append("    \(pad(type.rawValue, 14)) \(pad(status, 10)) policy \(policy)")
            for document in report.documents where document.type == type {
                let submission =
                    document.submission.map { "submission \($0.outcome.rawValue), \($0.attempts) attempt\($0.attempts == 1 ? "" : "s")" }
                    ?? "not submitted"
                lines.append("      \(document.id)  \(document.source)  \(submission)")
            }
        }
        lines += ["", "  History"]
        for step in report.history {
            lines.append(
                "    \(Timestamp.string(step.at))  \(pad(step.documentType?.rawValue ?? "transaction", 14)) \(step.from) -> \(step.to)  (\(step.reason))"
            )
        }
        return lines.map(\.escapingControls).joined(separator: "\n")
    }

    package static func text(_ summaries: [TransactionSummary]) -> String {
        guard !summaries.isEmpty else { return "No transactions." }
        var lines = ["\(pad("TRANSACTION", 28)) \(pad("STATUS", 12)) \(pad("DOCUMENTS", 44)) \(pad("DATA", 8)) UPDATED"]
        for summary in summaries {
            let documents = summary.documents.keys.sorted().map { "\($0.rawValue)=\(summary.documents[$0]!.rawValue)" }.joined(separator: " ")
            lines.append(
                "\(pad(summary.id, 28)) \(pad(summary.status.rawValue, 12)) \(pad(documents, 44)) \(pad(summary.data.rawValue, 8)) \(Timestamp.string(summary.updatedAt))"
            )
        }
        return lines.map(\.escapingControls).joined(separator: "\n")
    }

    /// The Protect view of a transaction: its payload decoded, its behavioural data and its risk evaluation.
    package static func signals(_ transaction: StoredTransaction, state: ProtectState?, json: Bool) -> String {
        var object: [String: Any] = ["transactionId": transaction.id]
        if let data = transaction.signals {
            object["signals"] = ["data": data, "decoded": jsonObject(SignalsPayload(data: data)) ?? NSNull()]
        }
        if let behavior = state?.behavior { object["behavior"] = jsonObject(behavior) ?? NSNull() }
        // A risk answer is shown parsed when it parses, as the text that came otherwise.
        if let risk = state?.riskEvaluation { object["riskEvaluation"] = (try? JSONSerialization.jsonObject(with: Data(risk.utf8))) ?? risk }
        let options: JSONSerialization.WritingOptions =
            json ? [.sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // An object of strings and parsed JSON always serialises.
        let text = (try? JSONSerialization.data(withJSONObject: object, options: options)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        if json || transaction.signals != nil { return text }  // JSON escapes every control character itself
        return "Transaction \(transaction.id) has no Protect signals (protect is not enabled in its pipeline).".escapingControls
    }

    private static func jsonObject(_ value: (some Encodable)?) -> Any? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        // The signals payload always encodes, and what was just encoded always parses back.
        guard let value, let data = try? encoder.encode(value) else { return nil }
        return try? JSONSerialization.jsonObject(with: data)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
