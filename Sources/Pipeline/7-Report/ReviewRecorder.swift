import DocumentOutcomes
import Foundation
import ImageDecoding
import Logging
import Metrics
import TransactionStore
import VerifyModel

/// What a failed document was made from, as the store keeps it for its review (sealed): its images, MRZ text and
/// captured fields. Read again by the current readers (`review replay`), or carried with an operator's fields
/// (`review accept`).
package struct RetainedInputs: Codable, Sendable, Equatable {
    package var type: DocumentType
    /// Base64, by role.
    package var images: [ImageRole: String] = [:]
    package var mrz: String?
    package var captured = DocumentFields()

    init(_ failed: FailedInput, images: [ImageRole: [UInt8]]) {
        type = failed.job.type
        self.images = images.mapValues { Data($0).base64EncodedString() }
        mrz = failed.job.mrz
        captured = failed.job.captured
    }

    package init(json: String) throws(DocumentFailure) {
        do {
            self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
        } catch {
            throw DocumentFailure(.invalidKeyMap, "the review's kept inputs cannot be read by this version")
        }
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings, and maps of strings, always encode.
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The images' bytes.
    package var imageBytes: [ImageRole: [UInt8]] {
        images.compactMapValues { Data(base64Encoded: $0).map { [UInt8]($0) } }
    }
}

/// Records every failed document in the store (CONTRACT §12), with its inputs when it is attached to its transaction.
struct ReviewRecorder: Sendable {
    let store: TransactionStore
    let limits: ReviewLimits
    /// Where paths named by stream lines may be read: a failure before decoding reads its images as the decode stage does.
    let allowedPaths: FileConfinement
    let logger: Logger

    /// Records the outcome's failure; false when the store could not be written (a worker then gives the document back).
    func record(_ document: FinishedDocument, at time: Date) async -> Bool {
        let outcome = document.outcome
        guard let failure = outcome.failure else { return true }
        Counter(label: "verify_failed_documents_total", dimensions: [("code", failure.code.rawValue)]).increment()
        let failed = document.failedInput
        var report = FailureReport(
            transactionId: failed?.transactionId, verificationCode: failed?.verificationCode, type: outcome.documentType,
            kind: failed?.documentId != nil ? .submission : .capture, code: failure.code, message: failure.message, field: failure.field,
            source: outcome.source, inputs: failed.flatMap(inputs), documentId: failed?.documentId)
        // A failed `review accept` leaves the review the inputs that failed first, not the operator's fields.
        report.keepInputs = failed?.job.reviewed == true
        do throws {
            try await store.recordFailure(report, limits: limits, at: time)
            return true
        } catch {
            logger.warning(
                "a failed document could not be recorded for review",
                metadata: ["input.sequence": "\(outcome.sequence)", "error.code": "\(FailureCode(of: error))"])
            return false
        }
    }

    /// The document's inputs as JSON, its images read when the line had not read them yet; nil for one that names no
    /// transaction (nothing of it is kept).
    private func inputs(_ failed: FailedInput) -> String? {
        guard failed.transactionId != nil else { return nil }
        var images = failed.images ?? [:]
        if failed.images == nil {
            for (role, source) in failed.job.images {
                switch source {
                case .inline(let bytes): images[role] = bytes
                case .file(let path): images[role] = try? ImageFile.read(path, resolved: true)
                case .named(let path, _): images[role] = allowedPaths.resolve(path).flatMap { try? ImageFile.read($0, resolved: true) }
                }
            }
        }
        return RetainedInputs(failed, images: images).json
    }
}
