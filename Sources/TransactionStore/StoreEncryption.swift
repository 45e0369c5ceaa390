import Crypto
import Foundation
import VerifyModel

/// The key-encryption key: 256 bits from an environment variable (base64 or hex), never from a file or an argument.
/// It does one thing: wrap the store's data key, which seals the values.
package struct KeyEncryptionKey: @unchecked Sendable {  // SymmetricKey is immutable once made
    let key: SymmetricKey
    /// The variable it was read from, for messages.
    package let variable: String

    /// The variable commands read when the pipeline file names none (`store.encryption.keyEnv`).
    package static let defaultVariable = "VERIFY_PIPELINE_STORE_KEY"

    /// The key in `variable`; nil when the variable is unset or empty; an error when it holds no 256-bit key.
    package static func from(variable: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> KeyEncryptionKey?
    {
        guard let text = environment[variable]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        let bytes = text.count == 64 ? Data(hexString: text) : Data(base64Encoded: text)
        guard let bytes, bytes.count == 32 else {
            throw StoreError.cannotOpen("\(variable) must hold a 256-bit key: 32 random bytes in base64 (openssl rand -base64 32) or 64 hex digits")
        }
        // One byte 32 times (all zeros, a placeholder) is no secret: random bytes are never that.
        guard Set(bytes).count > 1 else {
            throw StoreError.cannotOpen("\(variable) holds one byte repeated, not a key: use 32 random bytes (openssl rand -base64 32)")
        }
        return KeyEncryptionKey(key: SymmetricKey(data: bytes), variable: variable)
    }

    package func isSameKey(as other: KeyEncryptionKey) -> Bool { key == other.key }

    /// The data key sealed under this key: what the store keeps.
    func wrap(_ dataKey: DataKey) throws -> String {
        do {
            let bytes = dataKey.key.withUnsafeBytes { Data($0) }
            return try AES.GCM.seal(bytes, using: key, authenticating: Self.wrapping).combined!.base64EncodedString()
        } catch {
            throw StoreError.database("the data key could not be wrapped")
        }
    }

    /// The data key out of its wrapping; nil when this is not the key that wrapped it.
    func unwrap(_ wrapped: String) -> DataKey? {
        guard let combined = Data(base64Encoded: wrapped), let box = try? AES.GCM.SealedBox(combined: combined),
            let bytes = try? AES.GCM.open(box, using: key, authenticating: Self.wrapping), bytes.count == 32
        else { return nil }
        return DataKey(key: SymmetricKey(data: bytes))
    }

    private static let wrapping = Data("verify-pipeline data key v1".utf8)
}

/// What a command brings to open a store with.
package enum StoreEncryption: Sendable {
    /// Everything written is sealed: a new store is encrypted with a new data key; a store already holding
    /// transactions in clear is refused (`verify-pipeline store encrypt` converts it).
    case required(KeyEncryptionKey)
    /// Either kind opens: an encrypted one only with its key (nil: none was given), a clear one as it is.
    case ifEncrypted(KeyEncryptionKey?)

    var key: KeyEncryptionKey? {
        switch self {
        case .required(let key): key
        case .ifEncrypted(let key): key
        }
    }
}

/// The store's data key (AES-256-GCM), unwrapped: it seals each value bound to its place.
package struct DataKey: @unchecked Sendable {  // SymmetricKey is immutable once made
    let key: SymmetricKey

    static func generate() -> DataKey { DataKey(key: SymmetricKey(size: .bits256)) }
}

/// A column whose values are identity data: sealed in an encrypted store. Other modules that keep values sealed with
/// the store's key name their columns too (the work queue's jobs and results).
package struct SealedColumn: RawRepresentable, Sendable, Hashable {
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    static let documentFields = SealedColumn(rawValue: "documents.fields")
    /// A document's plain content digest, from which its fingerprint is made again under a new document secret.
    static let contentDigest = SealedColumn(rawValue: "documents.contentDigest")
    static let verificationCode = SealedColumn(rawValue: "transactions.verificationCode")
    static let signals = SealedColumn(rawValue: "transactions.signals")
    static let protectState = SealedColumn(rawValue: "protectStates.state")
    /// The secret content fingerprints are keyed with (`DocumentIdentity`), one row.
    static let documentIdentity = SealedColumn(rawValue: "documentIdentity.secret")
    /// What a failed document was made from, kept for its review (`ReviewValues`).
    static let reviewInputs = SealedColumn(rawValue: "reviews.inputs")
    /// An operator's note on a rejected review.
    static let reviewNote = SealedColumn(rawValue: "reviews.note")
}

/// Whether a store seals its values, and the sealing and opening itself. A sealed value is `$vp1$` and the base64 of
/// AES-256-GCM's nonce, ciphertext and tag; its associated data names its column and its row, so that a value copied
/// to another row or column does not open, and neither does one with any byte changed.
package enum StoreSealing: Sendable {
    case clear
    case sealed(DataKey)

    static let prefix = "$vp1$"

    package var isSealed: Bool { if case .sealed = self { true } else { false } }

    package func seal(_ text: String, _ column: SealedColumn, row: String) throws -> String {
        guard case .sealed(let dataKey) = self else { return text }
        do {
            let box = try AES.GCM.seal(Data(text.utf8), using: dataKey.key, authenticating: Self.place(column, row))
            return Self.prefix + box.combined!.base64EncodedString()
        } catch {
            throw StoreError.database("a value could not be sealed")
        }
    }

    /// The value as written: in a sealed store, every value must open under the data key at its own place.
    package func open(_ stored: String, _ column: SealedColumn, row: String) throws -> String {
        guard case .sealed(let dataKey) = self else { return stored }
        let text = stored.dropFirst(Self.prefix.count)
        // Canonical base64 only: a changed padding bit must not decode to the same bytes.
        guard stored.hasPrefix(Self.prefix), let combined = Data(base64Encoded: String(text)), combined.base64EncodedString() == text,
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: dataKey.key, authenticating: Self.place(column, row))
        else {
            throw StoreError.tampered("\(column.rawValue) of \(row)")
        }
        return String(decoding: plain, as: UTF8.self)
    }

    func seal(optional text: String?, _ column: SealedColumn, row: String) throws -> String? {
        guard let text else { return nil }
        return try seal(text, column, row: row)
    }

    func open(optional stored: String?, _ column: SealedColumn, row: String) throws -> String? {
        guard let stored else { return nil }
        return try open(stored, column, row: row)
    }

    private static func place(_ column: SealedColumn, _ row: String) -> Data {
        Data("verify-pipeline:\(column.rawValue):\(row)".utf8)
    }

    /// Decides how a store opens from its wrapped data key (nil: it is in clear) and what the command brings. Returns
    /// the sealing and, for a new encrypted store, the wrapped key to record.
    static func decide(
        wrapped: String?, holdsTransactions: Bool, _ encryption: StoreEncryption,
        location: String
    ) throws -> (StoreSealing, newWrapped: String?) {
        if let wrapped {
            guard let key = encryption.key else {
                throw StoreError.cannotOpen(
                    "\(location) is encrypted: set \(KeyEncryptionKey.defaultVariable) (or the variable the pipeline's store.encryption.keyEnv names) to its key-encryption key"
                )
            }
            guard let dataKey = key.unwrap(wrapped) else {
                throw StoreError.cannotOpen("the key in \(key.variable) does not open \(location) (a wrong key, or one rotated out)")
            }
            return (.sealed(dataKey), nil)
        }
        guard case .required(let key) = encryption else { return (.clear, nil) }
        guard !holdsTransactions else {
            throw StoreError.cannotOpen(
                "\(location) holds identity data in clear: encrypt it first with `verify-pipeline store encrypt`, or set store.encryption.enabled: false"
            )
        }
        let dataKey = DataKey.generate()
        return (.sealed(dataKey), try key.wrap(dataKey))
    }
}

/// Whether a transaction's identity data is in the store, and how (`status` shows it).
package enum DataState: String, Sendable, Codable, CaseIterable {
    /// In clear: the store is not encrypted.
    case present
    case sealed
    /// Removed under the retention policy; statuses and history remain.
    case purged
}
