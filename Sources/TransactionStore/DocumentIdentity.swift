import Crypto
import Foundation
import VerifyModel

/// The store's secret for naming documents. A document's id and its stored content hash are HMAC-SHA256 under it, so
/// that neither tells anything about the content to whoever lacks the secret: trying candidate emails or phone numbers
/// against an id shown by `serve`, `status`, a result or an Idempotency-Key finds nothing. Made once per store and
/// never changed (ids stay stable across runs and processes); kept sealed under the data key in an encrypted store.
package struct DocumentIdentity: @unchecked Sendable {  // SymmetricKey is immutable once made
    let key: SymmetricKey

    static func generate() -> DocumentIdentity { DocumentIdentity(key: SymmetricKey(size: .bits256)) }

    /// The secret as its column holds it before sealing: base64 of its 32 bytes.
    var stored: String { key.withUnsafeBytes { Data($0) }.base64EncodedString() }

    init(key: SymmetricKey) {
        self.key = key
    }

    init(stored text: String) throws(StoreError) {
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
            throw .database("the store's document secret is not a 256-bit key")
        }
        key = SymmetricKey(data: bytes)
    }

    /// A document's id from its transaction and the SHA-256 of its content (`contentDigest`, hex, never stored): the
    /// same input gives the same id in every run on this store, and another id on any other store.
    package func documentId(transactionId: String, contentDigest: String) -> String {
        "doc-" + mac("id\n\(transactionId)\n\(contentDigest)").prefix(32)
    }

    /// The content hash the store keeps for a document.
    package func contentHash(contentDigest: String) -> String {
        "hmac-sha256:" + mac("content\n\(contentDigest)")
    }

    private func mac(_ text: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)).hexString
    }

    // MARK: - Stores written before the secret

    /// A document as an earlier version stored it: its id and content hash were plain SHA-256, which anyone can
    /// recompute from guessed content. Nil when the document is keyed already.
    struct Rename: Sendable {
        var from: String
        var to: String
        var contentHash: String
    }

    /// The keyed id and hash of a document an earlier version stored (content hash `sha256:` and the digest).
    func rename(id: String, transactionId: String, contentHash: String) -> Rename? {
        let legacy = "sha256:"
        guard contentHash.hasPrefix(legacy) else { return nil }
        let digest = String(contentHash.dropFirst(legacy.count))
        return Rename(
            from: id, to: documentId(transactionId: transactionId, contentDigest: digest),
            contentHash: self.contentHash(contentDigest: digest))
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
