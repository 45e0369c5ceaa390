import Foundation
import NIOCore
import Synchronization

/// Slows guessing the token, through `POST /login` or `Authorization: Bearer`. Each client (an IPv4 address, or an
/// IPv6 /64) has a bucket its wrong tokens fill, draining one every `clientDrain`: once `clientBurst` are in it, every
/// attempt of that client is a 429 until one has drained, the right token too (nothing is compared, so the answer
/// tells nothing). All clients together have one more, of `globalBurst` draining one every `globalDrain`: once it is
/// full, only clients that gave the right token within `trustFor` may try. A session cookie is no attempt (its id
/// is 256 random bits): it opens the view whatever the buckets hold.
final class SignInThrottle: Sendable {
    struct Policy: Sendable {
        var clientBurst = 5.0
        var clientDrain: Duration = .seconds(10)
        var globalBurst = 50.0
        var globalDrain: Duration = .seconds(1)
        var trustFor: Duration = .seconds(Int64(Session.lifetime))
        /// Clients remembered at most; beyond, those whose bucket has drained are forgotten first.
        var maximumClients = 10_000
    }

    private struct Bucket {
        var level = 0.0
        var at: ContinuousClock.Instant

        /// The level once what has drained since `at` is gone.
        func drained(to now: ContinuousClock.Instant, every drain: Duration) -> Bucket {
            Bucket(level: max(0, level - (now - at) / drain), at: now)
        }
    }

    private struct State {
        var clients: [String: Bucket] = [:]
        var global: Bucket
        var trusted: [String: ContinuousClock.Instant] = [:]
    }

    let policy: Policy
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let state: Mutex<State>

    init(policy: Policy = Policy(), clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.policy = policy
        self.clock = clock
        state = Mutex(State(global: Bucket(at: clock())))
    }

    /// How long `client` must wait before it may try a token again; nil when it may now.
    func wait(_ client: String) -> Duration? {
        let now = clock(), policy = policy
        return state.withLock { state -> Duration? in
            let own = (state.clients[client] ?? Bucket(at: now)).drained(to: now, every: policy.clientDrain)
            if own.level > policy.clientBurst - 1 { return policy.clientDrain * (own.level - (policy.clientBurst - 1)) }
            if let until = state.trusted[client], until > now { return nil }
            let global = state.global.drained(to: now, every: policy.globalDrain)
            if global.level > policy.globalBurst - 1 { return policy.globalDrain * (global.level - (policy.globalBurst - 1)) }
            return nil
        }
    }

    /// `client` gave a wrong token.
    func failed(_ client: String) {
        let now = clock(), policy = policy
        state.withLock { state in
            var own = (state.clients[client] ?? Bucket(at: now)).drained(to: now, every: policy.clientDrain)
            own.level += 1
            if state.clients[client] == nil, state.clients.count >= policy.maximumClients {
                state.clients = state.clients.filter { $0.value.drained(to: now, every: policy.clientDrain).level > 0 }
                if state.clients.count >= policy.maximumClients, let any = state.clients.keys.first { state.clients[any] = nil }
            }
            state.clients[client] = own
            state.global = state.global.drained(to: now, every: policy.globalDrain)
            state.global.level += 1
        }
    }

    /// `client` gave the right token: it may try while the others are held back.
    func succeeded(_ client: String) {
        let now = clock(), policy = policy
        state.withLock { state in
            if state.trusted[client] == nil, state.trusted.count >= policy.maximumClients {
                state.trusted = state.trusted.filter { $0.value > now }
                if state.trusted.count >= policy.maximumClients, let any = state.trusted.keys.first { state.trusted[any] = nil }
            }
            state.trusted[client] = now + policy.trustFor
        }
    }

    /// Whom a request comes from: its IPv4 address, or the /64 of its IPv6 one (one host is given a /64 and picks
    /// addresses in it at will); "unknown" without an address.
    static func client(_ address: SocketAddress?) -> String {
        switch address {
        case .v4:
            return address?.ipAddress ?? "unknown"
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            // An IPv4 client of a server listening on `::`.
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12...].map(String.init).joined(separator: ".")
            }
            return bytes[0..<8].map { String(format: "%02x", $0) }.joined() + "::/64"
        default:
            return "unknown"
        }
    }

    /// Whole seconds, rounded up, for `Retry-After`.
    static func seconds(_ wait: Duration) -> Int {
        max(1, Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up)))
    }
}
