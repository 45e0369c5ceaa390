import Crypto
import Foundation
import VerifyModel

/// The store's secret for recognising a document it recorded before. A document's id is random and carries nothing;
/// the store keeps a fingerprint of its content, HMAC-SHA256 under this secret, so that a re-run of the same input on
/// this store finds its document, while the fingerprint tells nothing about the content to whoever lacks the secret.
/// Kept sealed under the data key in an encrypted store, and made anew whenever the data key changes (`store
/// encrypt`, `store rotate-key`), the fingerprints recomputed under it from the documents' sealed digests.
package struct DocumentIdentity: @unchecked Sendable {  // SymmetricKey is immutable once made
    let key: SymmetricKey

    static func generate() -> DocumentIdentity { DocumentIdentity(key: SymmetricKey(size: .bits256)) }

    /// The secret as its column holds it before sealing: base64 of its 32 bytes.
    var stored: String { key.withUnsafeBytes { Data($0) }.base64EncodedString() }

    init(key: SymmetricKey) {
        self.key = key
    }

    init(stored text: String) throws {
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
            throw StoreError.database("the store's document secret is not a 256-bit key")
        }
        key = SymmetricKey(data: bytes)
    }

    /// A new document's id: 128 random bits, nothing of the document or the store in it.
    package static func newDocumentId() -> String {
        "doc-" + SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }.hexString
    }

    /// The fingerprint the store keeps of a document's content (`contentDigest`, `ContentDigest.of`): the same content
    /// gives the same fingerprint on this store until its key changes, and nothing anyone without the secret can match.
    package func fingerprint(contentDigest: String) -> String {
        "hmac-sha256:" + Data(HMAC<SHA256>.authenticationCode(for: Data("content\n\(contentDigest)".utf8), using: key)).hexString
    }

    // MARK: - Documents an earlier version named from their content

    /// What becomes of a document an earlier version named from its content (a plain SHA-256, or an HMAC under this
    /// secret): a random id, and its fingerprint and digest when they can be known. A purged document keeps neither.
    func rename(_ document: LegacyDocument, fields: DocumentFields?) -> (fingerprint: String, digest: String?) {
        guard let fields else { return ("", nil) }
        let unkeyed = "sha256:"
        if document.contentHash.hasPrefix(unkeyed) {
            let digest = String(document.contentHash.dropFirst(unkeyed.count))
            return (fingerprint(contentDigest: digest), digest)
        }
        // An HMAC under this secret: its digest is known again when the document held no image (its fields are all of
        // it). One that did keeps its fingerprint, which a re-run still matches until the key changes.
        let digest = ContentDigest.of(type: document.type, images: [:], fields: fields)
        return fingerprint(contentDigest: digest) == document.contentHash ? (document.contentHash, digest) : (document.contentHash, nil)
    }

    /// `text` (a transition's reason, a work item's result) with every renamed document id in it replaced.
    static func renaming(_ text: String, _ renames: [String: String]) -> String {
        guard text.contains("doc-") else { return text }
        let bytes = Array(text.utf8), prefix = Array("doc-".utf8), length = prefix.count + 32
        var result: [UInt8] = [], index = 0
        result.reserveCapacity(bytes.count)
        while index < bytes.count {
            if index + length <= bytes.count, bytes[index..<index + prefix.count].elementsEqual(prefix),
                let renamed = renames[String(decoding: bytes[index..<index + length], as: UTF8.self)]
            {
                result.append(contentsOf: renamed.utf8)
                index += length
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}

/// The plain SHA-256 of a document's content: its type, the SHA-256 of each image (by role), and its text fields. Never
/// stored in clear, never shown: the store keeps it sealed (to recompute fingerprints under a new secret) and keyed.
package enum ContentDigest {
    /// `images` by role name (`front`, `back`, `selfie`); the image keys of `fields` are left out (they are the images).
    package static func of(type: DocumentType, images: [String: [UInt8]], fields: DocumentFields) -> String {
        var hash = SHA256()
        hash.update(data: Data(type.rawValue.utf8))
        for (role, bytes) in images.sorted(by: { $0.key < $1.key }) {
            hash.update(data: Data(role.utf8))
            hash.update(data: Data(SHA256.hash(data: bytes)))
        }
        for key in fields.keys where !imageKeys.contains(key) {
            hash.update(data: Data("\(key.rawValue)=\(fields[key] ?? "")\n".utf8))
        }
        return hash.finalize().hexString
    }

    private static let imageKeys: Set<DocumentKey> = [.frontImage, .backImage, .selfie]
}

/// A document as the store recorded it: its id, and which submission of its type in its transaction it is.
package struct RecordedDocument: Sendable, Equatable {
    package var id: String
    package var transactionId: String
    package var type: DocumentType
    /// 1 for the first document of its type in its transaction, one more for each later one (a type collected again
    /// after its submission failed). A re-run of the same document keeps it.
    package var revision: Int

    package init(id: String, transactionId: String, type: DocumentType, revision: Int) {
        self.id = id
        self.transactionId = transactionId
        self.type = type
        self.revision = revision
    }

    /// The submission's `Idempotency-Key`: SHA-256 of the transaction, the type and the revision, and nothing else. No
    /// content and no secret: every store of every deployment gives the same document the same key, so the API sees a
    /// repeat from another store as a repeat, and the key verifies no guess at the content.
    package var idempotencyKey: String {
        let text = "verify-pipeline submission v1\n\(transactionId)\n\(type.rawValue)\n\(revision)"
        return "vp1-" + SHA256.hash(data: Data(text.utf8)).hexString
    }
}
