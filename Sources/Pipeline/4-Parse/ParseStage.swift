import Crypto
import Foundation
import Protect
import TransactionStore
import VerifyModel

/// A document ready to be recorded: its fields from every source, and an id stable across re-runs.
struct AssembledDocument: Sendable {
    var job: DocumentJob
    var transaction: TransactionReference
    /// The `document` map, images included (base64).
    var fields: DocumentFields
    /// Derived from the transaction and the content under the store's secret: the same input gives the same id in
    /// every run on one store, and says nothing about the content to whoever lacks the secret.
    var documentId: String
    var contentHash: String
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
}

/// Builds the document's fields from its sources, refusing conflicts, and derives its stable id.
struct ParseStage: Sendable {
    let configuration: PipelineConfiguration
    /// The store's secret: ids and content hashes are keyed with it.
    let identity: DocumentIdentity
    let now: @Sendable () -> Date

    func callAsFunction(_ document: ScannedDocument) throws(DocumentFailure) -> ParsedDocument {
        // An explicit skip carries no document: only the track stage acts on it.
        if document.job.skip { return .skip(document.job, document.transaction) }
        let assembled = try DocumentAssembly(configuration: configuration, today: now()).assemble(document)
        let fields = assembled.fields
        var hash = SHA256()
        hash.update(data: Data(document.job.type.rawValue.utf8))
        for (role, bytes) in document.images.sorted(by: { $0.key < $1.key }) {
            hash.update(data: Data(role.rawValue.utf8))
            hash.update(data: Data(SHA256.hash(data: bytes)))
        }
        for key in fields.keys where !DocumentKey.images.contains(key) {
            hash.update(data: Data("\(key.rawValue)=\(fields[key] ?? "")\n".utf8))
        }
        // The plain digest never leaves this function: only its keyed forms are stored and shown.
        let digest = hash.finalize().hexString
        return .document(
            AssembledDocument(
                job: document.job, transaction: document.transaction, fields: fields,
                documentId: identity.documentId(transactionId: document.transaction.id, contentDigest: digest),
                contentHash: identity.contentHash(contentDigest: digest),
                capture: document.capture, warnings: assembled.warnings))
    }
}

extension DocumentKey {
    /// The keys that hold images (base64): never stored, never hashed as text.
    static let images: Set<DocumentKey> = [.frontImage, .backImage, .selfie]
}
