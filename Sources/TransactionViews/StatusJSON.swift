import Foundation
import TransactionStore
import VerifyModel

/// A transaction and a line of the transaction list as JSON, with the contract's wire names: what `status --json`
/// prints and the operator's API serves, byte for byte. Document fields are never in it, only their keys.
package enum StatusJSON {
    struct Report: Encodable {
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

    struct Summary: Encodable {
        var transactionId: String
        var documentSubmissionStatus: String
        var documentStatus: [String: String]
        var updatedAt: String
        var expiresAt: String
        var data: String
    }

    package static func report(_ report: TransactionReport) -> String {
        let transaction = report.transaction
        let value = Report(
            transactionId: transaction.id,
            documentSubmissionStatus: transaction.state.submissionStatus.rawValue,
            documentStatus: Dictionary(uniqueKeysWithValues: transaction.state.documents.map { ($0.key.rawValue, $0.value.rawValue) }),
            policy: Dictionary(uniqueKeysWithValues: transaction.policy.map { ($0.key.rawValue, $0.value.rawValue) }),
            createdAt: Timestamp.string(transaction.createdAt), updatedAt: Timestamp.string(transaction.updatedAt),
            expiresAt: Timestamp.string(transaction.expiresAt),
            data: report.data.rawValue, purgedAt: transaction.purgedAt.map(Timestamp.string),
            documents: report.documents.map { document in
                .init(
                    id: document.id, documentType: document.type.rawValue, source: document.source,
                    keys: document.keys.map(\.rawValue),
                    submission: document.submission.map {
                        .init(outcome: $0.outcome.rawValue, attempts: $0.attempts, error: $0.error, updatedAt: Timestamp.string($0.updatedAt))
                    })
            },
            history: report.history.map {
                .init(
                    sequence: $0.sequence, documentType: $0.documentType?.rawValue, from: $0.from, to: $0.to,
                    at: Timestamp.string($0.at), reason: $0.reason)
            })
        return encode(value)
    }

    package static func summary(_ summary: TransactionSummary) -> String {
        encode(
            Summary(
                transactionId: summary.id, documentSubmissionStatus: summary.status.rawValue,
                documentStatus: Dictionary(uniqueKeysWithValues: summary.documents.map { ($0.key.rawValue, $0.value.rawValue) }),
                updatedAt: Timestamp.string(summary.updatedAt), expiresAt: Timestamp.string(summary.expiresAt),
                data: summary.data.rawValue))
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Report structs of strings, numbers and dates always encode.
        return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self).escapingTerminalControlsInJSON
    }
}
