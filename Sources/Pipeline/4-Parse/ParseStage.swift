import DocumentOutcomes
import Foundation
import Protect
import TransactionStore
import VerifyModel

/// A document ready to be recorded: its fields from every source, and how the store recognises it again.
struct AssembledDocument: Sendable {
    var job: DocumentJob
    var transaction: TransactionReference
    /// The `document` map, images included (base64).
    var fields: DocumentFields
    /// Random for a new document; once recorded, the id the store holds it under (an earlier run's, for the same input).
    var documentId: String
    /// The content's fingerprint under the store's secret: the same input is the same document on one store, and the
    /// fingerprint says nothing about the content to whoever lacks the secret.
    var contentHash: String
    /// The plain digest the fingerprint is made from: only ever stored sealed.
    var contentDigest: String
    var capture: CaptureInfo
    /// What was repaired or dropped while reading the fields (never values), reported with the result.
    var warnings: [String] = []
}

/// The parse stage's value: a document to record, or an explicit skip of an optional one.
enum ParsedDocument: StageValue {
    case document(AssembledDocument)
    case skip(DocumentJob, TransactionReference)

    var transactionId: String? {
        switch self {
        case .document(let document): document.transaction.id
        case .skip(_, let transaction): transaction.id
        }
    }

    var byteCount: Int {
        guard case .document(let document) = self else { return 0 }
        return document.fields.values.values.reduce(0) { $0 + $1.utf8.count }
    }

    var failedInput: FailedInput? {
        switch self {
        case .document(let document):
            FailedInput(document.job, transaction: document.transaction, images: FailedInput.images(in: document.fields))
        case .skip(let job, let transaction): FailedInput(job, transaction: transaction, images: [:])
        }
    }
}

/// Builds the document's fields from its sources, refusing conflicts, and fingerprints its content.
struct ParseStage: Sendable {
    let configuration: PipelineConfiguration
    /// The store's secret: content fingerprints are keyed with it.
    let identity: DocumentIdentity
    let now: @Sendable () -> Date

    func callAsFunction(_ document: ScannedDocument) throws -> ParsedDocument {
        // An explicit skip carries no document: only the track stage acts on it.
        if document.job.skip { return .skip(document.job, document.transaction) }
        let assembled = try DocumentAssembly(configuration: configuration, today: now()).assemble(document)
        let digest = ContentDigest.of(
            type: document.job.type, images: Dictionary(uniqueKeysWithValues: document.images.map { ($0.key.rawValue, $0.value) }),
            fields: assembled.fields)
        return .document(
            AssembledDocument(
                job: document.job, transaction: document.transaction, fields: assembled.fields,
                documentId: DocumentIdentity.newDocumentId(), contentHash: identity.fingerprint(contentDigest: digest),
                contentDigest: digest, capture: document.capture, warnings: assembled.warnings))
    }
}

extension DocumentKey {
    /// The keys that hold images (base64): never stored, never hashed as text.
    static let images: Set<DocumentKey> = [.frontImage, .backImage, .selfie]
}

extension ParseStage: PipelineStage {
    var name: String { "parse" }
    /// Parsing is quick next to decoding and scanning: one worker keeps up with them.
    var workers: Int { 1 }

    func process(_ document: InFlight<ScannedDocument>) throws -> StageResult<ParsedDocument> { .next(try self(document.value)) }
}
