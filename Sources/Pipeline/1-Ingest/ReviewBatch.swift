import DocumentOutcomes
import Foundation
import ImageDecoding
import TransactionStore
import VerifyModel

/// Failed documents an operator sends through the line again (CONTRACT §12), each named by its transaction (which its
/// review is attached to) and bound to its review by its sequence.
package struct ReviewBatch: Sendable {
    var jobs: [DocumentJob] = []
    /// The review of each job, by the job's sequence (its outcome's `sequence`).
    package private(set) var reviews: [Int: ReviewEntry] = [:]

    package init() {}

    package var isEmpty: Bool { jobs.isEmpty }

    /// Reads the document again from its kept inputs with the current readers (`review replay`): a failed submission
    /// reads as the document recorded, and is sent again under its idempotency key.
    package mutating func replay(_ entry: ReviewEntry, inputs: RetainedInputs) throws {
        var job = try Self.job(for: entry, source: "review replay", sequence: jobs.count + 1)
        job.images = inputs.imageBytes.mapValues { .inline($0) }
        job.mrz = inputs.mrz
        job.captured = inputs.captured
        add(job, entry)
    }

    /// An operator's fields for the document (`review accept`): they go through the parsers and rules captured fields
    /// do (an `mrzData` through the MRZ parser and its check digits, a `barcode` through the AAMVA parser, the identity
    /// rule); the kept images that decode (a corrupt one is what the operator reviewed) are carried with them unread.
    package mutating func accept(_ entry: ReviewEntry, fields: DocumentFields, inputs: RetainedInputs?) throws {
        var job = try Self.job(for: entry, source: "review accept", sequence: jobs.count + 1)
        let decoder = ImageDecoder()
        job.images = (inputs?.imageBytes ?? [:]).filter { (try? decoder.decode($0.value, targetPixels: 4096)) != nil }.mapValues { .inline($0) }
        job.mrz = fields[.mrzData]
        var captured = fields
        captured[.mrzData] = nil
        job.captured = captured
        job.reviewed = true
        add(job, entry)
    }

    private mutating func add(_ job: DocumentJob, _ entry: ReviewEntry) {
        jobs.append(job)
        reviews[job.sequence] = entry
    }

    private static func job(for entry: ReviewEntry, source: String, sequence: Int) throws -> DocumentJob {
        guard let transactionId = entry.transactionId, let type = entry.documentType, entry.kind != .unattached else {
            throw DocumentFailure(
                .initiateDocumentTransactionError, "review \(entry.id) belongs to no transaction it could prove: it can only be rejected")
        }
        return DocumentJob(sequence: sequence, source: source, type: type, identity: .known(transactionId))
    }

    /// An operator's fields file: a JSON object of the data model's document keys; an unknown key is refused, naming it.
    package static func fields(json: Data) throws -> DocumentFields {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw DocumentFailure(.invalidKeyMap, "the fields file is not a JSON object")
        }
        var fields = DocumentFields()
        for (name, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let key = DocumentKey(rawValue: name) else {
                throw DocumentFailure(.invalidKeyMap, "\(TextInput.quoted(name)) is not a document key")
            }
            guard let text = value as? String else {
                throw DocumentFailure(.invalidKeyMap, "'\(key.rawValue)' must be a string", field: key.rawValue)
            }
            fields[key] = text
        }
        return fields
    }
}

/// Reviews sent through again: a batch known whole at once, of transactions whose input ended long ago.
extension ReviewBatch: DocumentSource {
    package var channel: String { "stream" }
    package var total: Int? { jobs.count }

    package func feed(_ context: SourceContext, admit: @escaping @Sendable (SourceItem) async throws -> Void) async throws {
        for job in jobs { try await admit(SourceItem(job: .success(job))) }
    }
}

extension DocumentSource where Self == ReviewBatch {
    /// Failed documents sent through again from their reviews.
    package static func reviews(_ batch: ReviewBatch) -> ReviewBatch { batch }
}
