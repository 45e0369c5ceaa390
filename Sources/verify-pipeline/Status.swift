import ArgumentParser
import Foundation
import Protect
import TransactionStore
import VerifyModel

extension VerifyPipeline {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a transaction's statuses, timestamps and history, or list transactions.",
            discussion: "With no TRANSACTION_ID, lists the transactions, most recently updated first. Document fields are never shown."
        )

        @Argument(help: "The transaction to show; omit it to list transactions.")
        var transactionId: String?

        @Option(help: ArgumentHelp("List only transactions in this status.", valueName: "status"))
        var state: DocumentSubmissionStatus?

        @Flag(help: "JSON instead of text (one object; one line per transaction when listing).")
        var json = false

        @Flag(help: "Show the transaction's Protect signals: the decoded payload, the behavioural data, the risk evaluation.")
        var signals = false

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if signals, transactionId == nil {
                throw ValidationError("--signals shows one transaction: give its TRANSACTION_ID")
            }
            if state != nil, transactionId != nil {
                throw ValidationError("--state lists transactions: give it without a TRANSACTION_ID")
            }
        }

        func run() async throws {
            let transactionId = transactionId, json = json, signals = signals, filter = state
            let show: @Sendable (any TransactionStore) async throws -> Void = { store in
                if let transactionId {
                    guard let report = try await store.report(id: transactionId) else {
                        CommandOutput.fail("no transaction '\(transactionId)' in the store")
                        throw ExitCode(1)
                    }
                    if signals {
                        let state = try await store.protectState(of: transactionId, as: ProtectState.self)
                        print(StatusFormat.signals(report.transaction, state: state, json: json))
                    } else {
                        print(json ? StatusFormat.json(report) : StatusFormat.text(report, now: Date()))
                    }
                } else {
                    let summaries = try await store.transactions(status: filter)
                    if json {
                        for summary in summaries { print(StatusFormat.json(summary)) }
                    } else {
                        print(StatusFormat.text(summaries))
                    }
                }
            }
            try await store.withStore(create: false, encryption: try store.anyStore(), show)
        }
    }
}

/// How `status` prints: text for people, JSON with the spec's wire names for programs.
enum StatusFormat {
    static func text(_ report: TransactionReport, now: Date) -> String {
        let transaction = report.transaction
        let expired = now > transaction.expiresAt ? "  (expired)" : ""
        var lines = [
            "Transaction \(transaction.id)  \(transaction.state.submissionStatus.rawValue)",
            "  created  \(Timestamp.string(transaction.createdAt))",
            "  updated  \(Timestamp.string(transaction.updatedAt))",
            "  expires  \(Timestamp.string(transaction.expiresAt))\(expired)",
            "  data     \(report.data.rawValue)\(transaction.purgedAt.map { " at " + Timestamp.string($0) } ?? "")",
            "",
            "  Documents",
        ]
        for type in transaction.state.documents.keys.sorted() {
            let status = transaction.state.documents[type]!.rawValue
            let policy = transaction.policy[type]!.rawValue
            lines.append("    \(pad(type.rawValue, 14)) \(pad(status, 10)) policy \(policy)")
            for document in report.documents where document.type == type {
                let submission = document.submission.map { "submission \($0.outcome.rawValue), \($0.attempts) attempt\($0.attempts == 1 ? "" : "s")" }
                    ?? "not submitted"
                lines.append("      \(document.id)  \(document.source)  \(submission)")
            }
        }
        lines += ["", "  History"]
        for step in report.history {
            lines.append("    \(Timestamp.string(step.at))  \(pad(step.documentType?.rawValue ?? "transaction", 14)) \(step.from) -> \(step.to)  (\(step.reason))")
        }
        return lines.map(\.escapingControls).joined(separator: "\n")
    }

    static func text(_ summaries: [TransactionSummary]) -> String {
        guard !summaries.isEmpty else { return "No transactions." }
        var lines = ["\(pad("TRANSACTION", 28)) \(pad("STATUS", 12)) \(pad("DOCUMENTS", 44)) \(pad("DATA", 8)) UPDATED"]
        for summary in summaries {
            let documents = summary.documents.keys.sorted().map { "\($0.rawValue)=\(summary.documents[$0]!.rawValue)" }.joined(separator: " ")
            lines.append("\(pad(summary.id, 28)) \(pad(summary.status.rawValue, 12)) \(pad(documents, 44)) \(pad(summary.data.rawValue, 8)) \(Timestamp.string(summary.updatedAt))")
        }
        return lines.map(\.escapingControls).joined(separator: "\n")
    }

    /// The Protect view of a transaction: its payload decoded, its behavioural data and its risk evaluation.
    static func signals(_ transaction: StoredTransaction, state: ProtectState?, json: Bool) -> String {
        var object: [String: Any] = ["transactionId": transaction.id]
        if let data = transaction.signals {
            object["signals"] = ["data": data, "decoded": jsonObject(SignalsPayload(data: data)) ?? NSNull()]
        }
        if let behavior = state?.behavior { object["behavior"] = jsonObject(behavior) ?? NSNull() }
        // A risk answer is shown parsed when it parses, as the text that came otherwise.
        if let risk = state?.riskEvaluation { object["riskEvaluation"] = (try? JSONSerialization.jsonObject(with: Data(risk.utf8))) ?? risk }
        let options: JSONSerialization.WritingOptions = json ? [.sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // An object of strings and parsed JSON always serialises.
        let text = (try? JSONSerialization.data(withJSONObject: object, options: options)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        if json || transaction.signals != nil { return text } // JSON escapes every control character itself
        return "Transaction \(transaction.id) has no Protect signals (protect is not enabled in its pipeline).".escapingControls
    }

    private static func jsonObject(_ value: (some Encodable)?) -> Any? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        // The signals payload always encodes, and what was just encoded always parses back.
        guard let value, let data = try? encoder.encode(value) else { return nil }
        return try? JSONSerialization.jsonObject(with: data)
    }

    struct ReportJSON: Encodable {
        struct Document: Encodable {
            var id: String
            var documentType: String
            var source: String
            var keys: [String]
            var submission: Submission?
        }

        struct Submission: Encodable {
            var outcome: String
            var attempts: Int
            var error: String?
            var updatedAt: String
        }

        struct Step: Encodable {
            var sequence: Int64
            var documentType: String?
            var from: String
            var to: String
            var at: String
            var reason: String
        }

        var transactionId: String
        var documentSubmissionStatus: String
        var documentStatus: [String: String]
        var policy: [String: String]
        var createdAt: String
        var updatedAt: String
        var expiresAt: String
        /// present, sealed or purged.
        var data: String
        var purgedAt: String?
        var documents: [Document]
        var history: [Step]
    }

    static func json(_ report: TransactionReport) -> String {
        let transaction = report.transaction
        let value = ReportJSON(
            transactionId: transaction.id,
            documentSubmissionStatus: transaction.state.submissionStatus.rawValue,
            documentStatus: Dictionary(uniqueKeysWithValues: transaction.state.documents.map { ($0.key.rawValue, $0.value.rawValue) }),
            policy: Dictionary(uniqueKeysWithValues: transaction.policy.map { ($0.key.rawValue, $0.value.rawValue) }),
            createdAt: Timestamp.string(transaction.createdAt), updatedAt: Timestamp.string(transaction.updatedAt),
            expiresAt: Timestamp.string(transaction.expiresAt),
            data: report.data.rawValue, purgedAt: transaction.purgedAt.map(Timestamp.string),
            documents: report.documents.map { document in
                .init(id: document.id, documentType: document.type.rawValue, source: document.source,
                      keys: document.keys.map(\.rawValue),
                      submission: document.submission.map {
                          .init(outcome: $0.outcome.rawValue, attempts: $0.attempts, error: $0.error, updatedAt: Timestamp.string($0.updatedAt))
                      })
            },
            history: report.history.map {
                .init(sequence: $0.sequence, documentType: $0.documentType?.rawValue, from: $0.from, to: $0.to,
                      at: Timestamp.string($0.at), reason: $0.reason)
            })
        return encode(value)
    }

    struct SummaryJSON: Encodable {
        var transactionId: String
        var documentSubmissionStatus: String
        var documentStatus: [String: String]
        var updatedAt: String
        var expiresAt: String
        var data: String
    }

    static func json(_ summary: TransactionSummary) -> String {
        encode(SummaryJSON(transactionId: summary.id, documentSubmissionStatus: summary.status.rawValue,
                           documentStatus: Dictionary(uniqueKeysWithValues: summary.documents.map { ($0.key.rawValue, $0.value.rawValue) }),
                           updatedAt: Timestamp.string(summary.updatedAt), expiresAt: Timestamp.string(summary.expiresAt),
                           data: summary.data.rawValue))
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Report structs of strings, numbers and dates always encode.
        return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

// `--state completed` or `--state COMPLETED`; the help lists the wire spellings.
extension DocumentSubmissionStatus: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.uppercased())
    }
}
