import Crypto
import Foundation

/// The browser sessions of the operator's view (`serve` with a token), kept in the store: a sign-out ends one for
/// every `serve` process on the store, and a restart keeps them. A session's id is 32 random bytes, the cookie's
/// value; the store keeps only its HMAC-SHA256 under the token, with its expiry. The id tells nothing about the
/// token, the store's row cannot be turned back into a cookie, and a new token opens none of the sessions signed in
/// under the old one.
package struct OperatorSessions: Sendable {
    let store: TransactionStore
    private let token: [UInt8]

    package init(store: TransactionStore, token: [UInt8]) {
        self.store = store
        self.token = token
    }

    /// A new session, valid until `time + lifetime`: its id. Sessions expired at `time` are deleted first.
    package func open(lifetime: TimeInterval, at time: Date) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let id = Self.base64url(bytes)
        try await store.backend.insertSession(hash: hash(id), expiresAt: time.addingTimeInterval(lifetime), at: time)
        return id
    }

    /// Whether `id` names a session that has not expired at `time` (nor been ended). Anything that is not an id this
    /// type makes is no session, without reading the store.
    package func isOpen(_ id: some StringProtocol, at time: Date) async throws -> Bool {
        guard Self.isWellFormed(id), let expiry = try await store.backend.sessionExpiry(hash: hash(id)) else { return false }
        return expiry > time
    }

    /// Ends the session `id` names, if any.
    package func end(_ id: some StringProtocol) async throws {
        guard Self.isWellFormed(id) else { return }
        try await store.backend.deleteSession(hash: hash(id))
    }

    /// What the store keeps of a session id: its HMAC-SHA256 under the token, in hexadecimal.
    func hash(_ id: some StringProtocol) -> String {
        HMAC<SHA256>.authenticationCode(for: Data("verify-pipeline session|\(id)".utf8), using: SymmetricKey(data: token)).map {
            String(format: "%02x", $0)
        }.joined()
    }

    /// 43 characters of base64url: 32 bytes.
    static func isWellFormed(_ id: some StringProtocol) -> Bool {
        id.utf8.count == 43
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
            }
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
