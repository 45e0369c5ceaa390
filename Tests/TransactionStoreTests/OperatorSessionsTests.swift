import Foundation
import Testing

@testable import TransactionStore

/// The operator's view's sessions as the store keeps them, on both backends.
@Suite("Operator sessions in the store")
struct OperatorSessionsTests {
    static let token = Array("operator-sessions-test-token-0123456789abcdef".utf8)

    @Test(
        "a session opens until it expires or is ended, for every process on the store; the store keeps its id's HMAC, not the id; a login deletes expired ones",
        arguments: [StoreKind.sqlite, .postgres])
    func lifecycle(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        let t0 = Date(timeIntervalSince1970: 1_790_000_000)
        let (first, second) = try await location.withStore(create: true) { store in
            let sessions = OperatorSessions(store: store, token: Self.token)
            let first = try await sessions.open(lifetime: 60, at: t0)
            #expect(OperatorSessions.isWellFormed(first) && first.count == 43, "32 random bytes, base64url")
            #expect(try await sessions.isOpen(first, at: t0.addingTimeInterval(59)))
            #expect(try await !sessions.isOpen(first, at: t0.addingTimeInterval(60)), "expired")
            // What is stored is the id's HMAC under the token: the id itself (the cookie) is nowhere in the row.
            let hash = sessions.hash(first)
            #expect(hash.count == 64 && hash != first && !hash.contains(first))
            #expect(try await store.backend.sessionExpiry(hash: hash) != nil)
            // Another token computes other hashes: it opens none of these sessions.
            #expect(try await !OperatorSessions(store: store, token: Self.token + [0x21]).isOpen(first, at: t0))
            // Not an id this type makes: no session, the store not even asked.
            for forged in ["", "x", String(repeating: "A", count: 42), first + "A", String(first.dropLast()) + "!"] {
                #expect(try await !sessions.isOpen(forged, at: t0), "\(forged)")
            }
            // A second sign-in after the first expired deletes it.
            let second = try await sessions.open(lifetime: 600, at: t0.addingTimeInterval(120))
            #expect(try await store.backend.sessionExpiry(hash: hash) == nil, "the expired session was deleted")
            return (first, second)
        }
        // Another process on the store (a restart, or a second `serve`): the session opens there too, and ending it
        // there ends it everywhere.
        try await location.withStore(create: false) { store in
            let sessions = OperatorSessions(store: store, token: Self.token)
            #expect(try await !sessions.isOpen(first, at: t0.addingTimeInterval(120)))
            #expect(try await sessions.isOpen(second, at: t0.addingTimeInterval(121)))
            try await sessions.end(second)
            #expect(try await !sessions.isOpen(second, at: t0.addingTimeInterval(121)))
            try await sessions.end("not-a-session")
        }
    }
}
