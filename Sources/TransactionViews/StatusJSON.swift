import Foundation
import TransactionStore
import VerifyModel

/// A transaction and a line of the transaction list as JSON, with the contract's wire names: what `status --json`
/// prints and the operator's API serves, byte for byte. Document fields are never in it, only their keys.
package enum StatusJSON {
    struct Report: Encodable {
        struct Document: Encodable {
            /// nil for a document that failed before anything of it was collected (only its review says it came).
            var id: String?
            var documentType: String
            var source: String
            var keys: [String]
            var submission: Submission?
            /// A failed document's error and review (CONTRACT §12): on the document the review names, else the
            /// latest of its type.
            var error: Failure?
            var review: Review?
        }

        struct Failure: Encodable {
            var code: String
            var message: String
            var field: String?
        }

        struct Review: Encodable {
            var id: Int64
            var state: String
            var kind: String
            var attempt: Int
            var failedAt: String
            var inputs: String
            var resolvedAt: String?
            var resolution: String?
            var resolvedBy: String?
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
        /// The environment the transaction's QR named; absent when it named none.
        var envId: String?
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
        var documents = report.documents.map { document -> Report.Document in
            .init(
                id: document.id, documentType: document.type.rawValue, source: document.source,
                keys: document.keys.map(\.rawValue),
                submission: document.submission.map {
                    .init(outcome: $0.outcome.rawValue, attempts: $0.attempts, error: $0.error, updatedAt: Timestamp.string($0.updatedAt))
                })
        }
        // A failed document is listed even when nothing of it was collected.
        for entry in report.reviews {
            guard let type = entry.documentType?.rawValue else { continue }
            let index =
                entry.documentId.flatMap { id in documents.firstIndex { $0.id == id } }
                ?? documents.lastIndex { $0.documentType == type }
            if let index {
                documents[index].error = failure(entry)
                documents[index].review = documentReview(entry)
            } else {
                documents.append(
                    .init(id: nil, documentType: type, source: entry.source, keys: [], error: failure(entry), review: documentReview(entry)))
            }
        }
        let value = Report(
            transactionId: transaction.id, envId: transaction.envId,
            documentSubmissionStatus: transaction.state.submissionStatus.rawValue,
            documentStatus: Dictionary(uniqueKeysWithValues: transaction.state.documents.map { ($0.key.rawValue, $0.value.rawValue) }),
            policy: Dictionary(uniqueKeysWithValues: transaction.policy.map { ($0.key.rawValue, $0.value.rawValue) }),
            createdAt: Timestamp.string(transaction.createdAt), updatedAt: Timestamp.string(transaction.updatedAt),
            expiresAt: Timestamp.string(transaction.expiresAt),
            data: report.data.rawValue, purgedAt: transaction.purgedAt.map(Timestamp.string),
            documents: documents,
            history: report.history.map {
                .init(
                    sequence: $0.sequence, documentType: $0.documentType?.rawValue, from: $0.from, to: $0.to,
                    at: Timestamp.string($0.at), reason: $0.reason)
            })
        return encode(value)
    }

    static func failure(_ entry: ReviewEntry) -> Report.Failure {
        .init(code: entry.code, message: entry.message, field: entry.field)
    }

    static func documentReview(_ entry: ReviewEntry) -> Report.Review {
        .init(
            id: entry.id, state: entry.state.rawValue, kind: entry.kind.rawValue, attempt: entry.attempt,
            failedAt: Timestamp.string(entry.failedAt), inputs: entry.inputs.rawValue, resolvedAt: entry.resolvedAt.map(Timestamp.string),
            resolution: entry.resolution, resolvedBy: entry.resolvedBy)
    }

    /// A review as the operator's API lists it (`/api/review`): its reasons, never a value. Fields without a value are
    /// left out, as in `status --json`.
    package static func review(_ entry: ReviewEntry) -> String {
        encode(
            ReviewItem(
                id: entry.id, transactionId: entry.transactionId, documentType: entry.documentType?.rawValue, kind: entry.kind.rawValue,
                code: entry.code, message: entry.message, field: entry.field, source: entry.source, attempt: entry.attempt,
                failedAt: Timestamp.string(entry.failedAt), state: entry.state.rawValue, inputs: entry.inputs.rawValue,
                expiresAt: entry.expiresAt.map(Timestamp.string), resolvedAt: entry.resolvedAt.map(Timestamp.string),
                resolution: entry.resolution, resolvedBy: entry.resolvedBy))
    }

    struct ReviewItem: Encodable {
        var id: Int64
        var transactionId: String?
        var documentType: String?
        var kind: String
        var code: String
        var message: String
        var field: String?
        var source: String
        var attempt: Int
        var failedAt: String
        var state: String
        var inputs: String
        var expiresAt: String?
        var resolvedAt: String?
        var resolution: String?
        var resolvedBy: String?
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
