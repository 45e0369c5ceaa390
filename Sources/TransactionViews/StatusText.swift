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
            "  envId    \(transaction.envId ?? "-")",
            "",
            "  Documents"
        ]
        let reviewed = report.reviews.compactMap(\.documentType)
        for type in Set(transaction.state.documents.keys).union(reviewed).sorted() {
            if let status = transaction.state.documents[type]?.rawValue, let policy = transaction.policy[type]?.rawValue {
                lines.append("    \(type.rawValue.padded(to: 14)) \(status.padded(to: 10)) policy \(policy)")
            } else {
                lines.append("    \(type.rawValue.padded(to: 14)) not in the transaction's policy")
            }
            for document in report.documents where document.type == type {
                lines.append("      \(document.id)  \(document.source)  \(document.submission.map(submissionText) ?? "not submitted")")
            }
            for entry in report.reviews where entry.documentType == type { lines.append("      " + reviewLine(entry)) }
        }
        lines += ["", "  History"]
        for step in report.history {
            lines.append(
                "    \(Timestamp.string(step.at))  \((step.documentType?.rawValue ?? "transaction").padded(to: 14)) \(step.from) -> \(step.to)  (\(step.reason))"
            )
        }
        return lines.map(\.escapingControls).joined(separator: "\n")
    }

    /// A failed document's review: its state, code, field and message (a reason, never a value), how often it failed.
    /// `review open: documentCaptureError (documentNumber) "the MRZ ..." attempt 1, failed 2026-...`
    package static func reviewLine(_ entry: ReviewEntry) -> String {
        var line = "review \(entry.state.rawValue): \(entry.code)\(entry.field.map { " (\($0))" } ?? "") \"\(entry.message)\""
        line += " attempt \(entry.attempt), failed \(Timestamp.string(entry.failedAt))"
        if let resolved = entry.resolvedAt {
            line += ", \(entry.state.rawValue) \(Timestamp.string(resolved))\(entry.resolvedBy.map { " by \($0)" } ?? "")"
            if let resolution = entry.resolution { line += " (\(resolution))" }
        }
        line += "; review \(entry.id) (\(entry.kind.rawValue)), inputs \(entry.inputs.rawValue)"
        return line.escapingControls
    }

    /// `submission FAILED, 2 attempts: the service answered 503`: the outcome, and the error when there was one.
    static func submissionText(_ submission: SubmissionRecord) -> String {
        let text = "submission \(submission.outcome.rawValue), \(submission.attempts) attempt\(submission.attempts == 1 ? "" : "s")"
        return submission.error.map { text + ": " + $0 } ?? text
    }

    /// The widest a line of the transaction list is, unless `wide`.
    package static let listWidth = 100

    /// The transaction list as a table: its id, its status, a column per document type any of them has, whether its
    /// data is present, sealed or purged, when it changed. Within `listWidth` columns, long ids shortened in the middle
    /// and times to the second; `wide`: every id whole, times to the millisecond.
    package static func text(_ summaries: [TransactionSummary], wide: Bool = false) -> String {
        guard !summaries.isEmpty else { return "No transactions." }
        let types = DocumentType.allCases.filter { type in summaries.contains { $0.documents[type] != nil } }
        var table = TextTable(headers: ["TRANSACTION", "STATUS"] + types.map(\.listHeading) + ["DATA", "UPDATED"], shrinking: 0)
        for summary in summaries {
            let updated = wide ? Timestamp.string(summary.updatedAt) : summary.updatedAt.formatted(Self.secondsFormat)
            table.append(
                [summary.id, summary.status.rawValue] + types.map { summary.documents[$0]?.listWord ?? "-" } + [summary.data.rawValue, updated])
        }
        return table.lines(width: wide ? nil : listWidth).joined(separator: "\n")
    }

    /// `2026-11-22T10:27:31Z`: the list's times.
    private static let secondsFormat = Date.ISO8601FormatStyle(timeZone: .gmt)

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

}

extension DocumentType {
    /// Its column's heading in the transaction list.
    var listHeading: String { self == .governmentId ? "GOV_ID" : rawValue }
}

extension DocumentStatus {
    /// Its word in the transaction list: the start of its name, in lower case.
    var listWord: String {
        switch self {
        case .required: "req"
        case .optional: "opt"
        case .collected: "coll"
        case .processed: "proc"
        case .skipped: "skip"
        }
    }
}
