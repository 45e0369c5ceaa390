import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing
import TransactionStore
import VerifyModel

@testable import OperatorView

/// The operator view's routes in-process, through Hummingbird's test client: the same router `serve` and
/// `--metrics-bind` listen with, over a SQLite store holding one transaction. The subprocess tests keep what
/// only a process shows (binds, signals, connection limits, exit codes).
@Suite("The operator view's routes, in-process")
struct RouteTests {
    static let loopback = try! OperatorView.BindAddress(parsing: "127.0.0.1:0")

    /// A store with one transaction whose government id was collected with a family name and a document number.
    static func store() async throws -> (TransactionStore, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routes-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try await TransactionStore.sqlite(path: folder.appendingPathComponent("store.sqlite").path)
        let t0 = Date()
        _ = try await store.openTransaction(
            NewTransaction(
                id: "txn-route-1", verificationCode: "CODE-SECRET", policy: [.governmentId: .required, .selfie: .optional],
                createdAt: t0, expiresAt: t0.addingTimeInterval(1800)))
        _ = try await store.collect(
            DocumentRecord(
                id: "doc-route-1", transactionId: "txn-route-1", type: .governmentId,
                fields: DocumentFields([.lastName: "SECRETNAME", .documentNumber: "SECRETNUMBER"]),
                source: "batch/txn-route-1", contentHash: "h", createdAt: t0),
            at: t0)
        return (store, folder)
    }

    static func app(
        _ routes: OperatorServer.Routes, token: String? = nil, throttle: SignInThrottle = SignInThrottle()
    ) async throws -> (some ApplicationProtocol, URL) {
        let (store, folder) = try await store()
        let router = try OperatorServer.router(routes, store: store, bind: loopback, token: token, throttle: throttle)
        return (Application(router: router), folder)
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    /// `raw` as an API cursor is written (base64url): forged, it names a time no date holds.
    static func cursor(_ raw: String) -> String {
        Data(raw.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("/healthz, /readyz and /metrics answer beside a run; the pages and the API are not there")
    func metricsRoutes() async throws {
        let (app, folder) = try await Self.app(.metrics)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await app.test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Self.text(response) == "ok\n")
            }
            // /readyz gives the store 1 s to answer: on a machine busy with the rest of the suite a first answer can
            // take longer, and the probe asks again, as a kubelet would.
            var ready: (status: HTTPResponse.Status, text: String) = (.serviceUnavailable, "")
            for _ in 0..<30 where ready.status != .ok {
                ready = try await client.execute(uri: "/readyz", method: .get) { ($0.status, Self.text($0)) }
            }
            #expect(ready.status == .ok)
            #expect(ready.text == "ready\n")
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
                // The required government id is collected, the selfie optional: the transaction is in PROCESS.
                #expect(Self.text(response).contains(#"verify_transactions{status="PROCESS"} 1"# + "\n"), "\(Self.text(response))")
                #expect(Self.text(response).contains("verify_store_documents_collected_total 1\n"), "\(Self.text(response))")
            }
            try await client.execute(uri: "/api/transactions", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test("the API lists and reports the transaction with the document's keys, never its values or the code")
    func api() async throws {
        let (app, folder) = try await Self.app(.all)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await app.test(.router) { client in
            try await client.execute(uri: "/api/transactions", method: .get) { response in
                #expect(response.status == .ok)
                let body = Self.text(response)
                #expect(body.hasPrefix(#"{"next":null,"transactions":[{"#), "\(body)")
                #expect(body.contains(#""transactionId":"txn-route-1""#) && body.contains(#""documentSubmissionStatus":"PROCESS""#), "\(body)")
                #expect(body.contains(#""documentStatus":{"GOVERNMENT_ID":"COLLECTED","SELFIE":"OPTIONAL"}"#), "\(body)")
            }
            try await client.execute(uri: "/api/transactions/txn-route-1", method: .get) { response in
                #expect(response.status == .ok)
                let body = Self.text(response)
                #expect(body.contains("lastName") && body.contains("documentNumber"), "\(body)")
                for secret in ["SECRETNAME", "SECRETNUMBER", "CODE-SECRET"] { #expect(!body.contains(secret), "\(secret) shown") }
            }
            try await client.execute(uri: "/api/transactions/txn-none", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(Self.text(response) == #"{"error":{"message":"no such transaction","status":404}}"# + "\n")
            }
            try await client.execute(uri: "/transactions/txn-route-1", method: .get) { response in
                #expect(response.status == .ok)
                let page = Self.text(response)
                #expect(page.contains("txn-route-1"))
                for secret in ["SECRETNAME", "SECRETNUMBER", "CODE-SECRET"] { #expect(!page.contains(secret), "\(secret) shown") }
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            }
        }
    }

    @Test("a bad query is a 400 with the reason, a forged cursor out of any date's range included; nothing traps")
    func badQueries() async throws {
        let (app, folder) = try await Self.app(.all)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await app.test(.router) { client in
            for forged in ["9223372036854775807|x", "u9223372036854775807|x", "-9223372036854775808|x"] {
                try await client.execute(uri: "/api/transactions?after=\(Self.cursor(forged))", method: .get) { response in
                    #expect(response.status == .badRequest, "\(forged)")
                }
            }
            try await client.execute(uri: "/api/transactions?limit=0", method: .get) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(uri: "/api/transactions?state=NOPE", method: .get) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test("with a token, the API needs it (any case of the scheme, the token byte for byte), pages go to the login, /healthz does not")
    func token() async throws {
        let (guarded, guardedFolder) = try await Self.app(.all, token: "route-test-token")
        defer { try? FileManager.default.removeItem(at: guardedFolder) }
        try await guarded.test(.router) { client in
            try await client.execute(uri: "/api/overview", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            try await client.execute(uri: "/api/overview", method: .get, headers: [.authorization: "bearer route-test-token"]) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/api/overview", method: .get, headers: [.authorization: "Bearer route-test-tokeN"]) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/login")
            }
            try await client.execute(uri: "/review", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/login")
            }
            try await client.execute(uri: "/api/review", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/api/review", method: .get, headers: [.authorization: "Bearer route-test-token"]) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test("the review queue: a failure's reasons escaped on /review and the transaction's page, never its inputs; filters and paging")
    func reviewQueue() async throws {
        let (store, folder) = try await Self.store()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try await store.recordFailure(
            FailureReport(
                transactionId: "txn-route-1", verificationCode: "CODE-SECRET", type: .selfie, kind: .capture,
                code: .document(.documentCaptureError), message: "<script>alert(1)</script> undecodable", field: nil,
                source: "batch/txn-route-1/selfie", inputs: #"{"captured":{"lastName":"SECRETNAME"}}"#),
            limits: ReviewLimits(), at: Date())
        _ = try await store.recordFailure(
            FailureReport(
                transactionId: nil, verificationCode: nil, type: nil, kind: .unattached, code: .document(.initiateDocumentTransactionError),
                message: "the QR names no transaction", field: nil, source: "stdin:7", inputs: nil),
            limits: ReviewLimits(), at: Date())
        let app = Application(router: try OperatorServer.router(.all, store: store, bind: Self.loopback, token: nil))
        try await app.test(.router) { client in
            try await client.execute(uri: "/review", method: .get) { response in
                let page = Self.text(response)
                #expect(response.status == .ok && response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; undecodable") && !page.contains("<script>alert"), "\(page)")
                #expect(page.contains(#"<a href="/transactions/txn-route-1">txn-route-1</a>"#) && page.contains(">unattached<"))
                for secret in ["SECRETNAME", "SECRETNUMBER", "CODE-SECRET"] { #expect(!page.contains(secret), "\(secret) shown") }
            }
            try await client.execute(uri: "/review?code=initiateDocumentTransactionError", method: .get) { response in
                let page = Self.text(response)
                #expect(page.contains("the QR names no transaction") && !page.contains("undecodable"))
            }
            try await client.execute(uri: "/api/review?limit=1", method: .get) { response in
                let body = Self.text(response)
                #expect(body.hasPrefix(#"{"next":1,"reviews":[{"#) && body.components(separatedBy: #""id":"#).count == 2, "\(body)")
            }
            try await client.execute(uri: "/api/review?limit=1&offset=1", method: .get) { response in
                #expect(Self.text(response).hasPrefix(#"{"next":null,"reviews":[{"#))
            }
            try await client.execute(uri: "/api/review?state=accepted", method: .get) { response in
                #expect(Self.text(response) == #"{"next":null,"reviews":[]}"# + "\n")
            }
            for bad in ["state=nope", "limit=0", "limit=501", "offset=-1", "offset=99999999999", "code=a%00b"] {
                try await client.execute(uri: "/api/review?\(bad)", method: .get) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
            }
            try await client.execute(uri: "/transactions/txn-route-1", method: .get) { response in
                let page = Self.text(response)
                #expect(page.contains("<h2>Reviews</h2>") && page.contains("&lt;script&gt;alert(1)&lt;/script&gt; undecodable"))
                #expect(!page.contains("SECRETNAME"))
            }
            try await client.execute(uri: "/", method: .get) { response in
                let page = Self.text(response)
                #expect(page.contains(#"<span class="value" id="reviews-open">2</span>"#), "\(page)")
                #expect(page.contains(#"<a href="/review?code=initiateDocumentTransactionError">"#))
            }
        }
    }

    /// A clock the test moves: the throttle's buckets drain only when it says.
    final class ManualClock: Sendable {
        private let now = Mutex(ContinuousClock.now)
        var instant: ContinuousClock.Instant { now.withLock { $0 } }
        func advance(_ duration: Duration) { now.withLock { $0 += duration } }
    }

    static func form(_ token: String) -> ByteBuffer {
        ByteBuffer(string: "token=" + token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
    }

    static let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    /// The session cookie (`name=value`) a sign-in set.
    static func cookie(_ response: TestResponse) -> String? {
        response.headers[.setCookie].map { String($0.prefix { $0 != ";" }) }
    }

    @Test("wrong tokens are throttled: after 5 a client gets 429 with Retry-After for any token, the right one too, until its bucket drains")
    func throttled() async throws {
        let clock = ManualClock()
        let token = "route-throttle-token-0123456789abcdef"
        let (app, folder) = try await Self.app(.all, token: token, throttle: SignInThrottle(clock: { clock.instant }))
        defer { try? FileManager.default.removeItem(at: folder) }
        try await app.test(.router) { client in
            for attempt in 1...5 {
                try await client.execute(uri: "/login", method: .post, headers: Self.formHeaders, body: Self.form("guess-\(attempt)")) { response in
                    #expect(response.status == .unauthorized, "attempt \(attempt)")
                }
            }
            // Held back: no token is compared, the right one neither, through the form or the header.
            try await client.execute(uri: "/login", method: .post, headers: Self.formHeaders, body: Self.form("guess-6")) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "10")
            }
            try await client.execute(uri: "/login", method: .post, headers: Self.formHeaders, body: Self.form(token)) { response in
                #expect(response.status == .tooManyRequests && Self.cookie(response) == nil)
            }
            try await client.execute(uri: "/api/overview", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] != nil)
            }
            // One failure drains every 10 s: then one more try, the right token signs in.
            clock.advance(.seconds(10))
            let cookie = try await client.execute(uri: "/login", method: .post, headers: Self.formHeaders, body: Self.form(token)) { response in
                #expect(response.status == .seeOther)
                return Self.cookie(response)
            }
            let session = try #require(cookie)
            try await client.execute(uri: "/api/overview", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                #expect(response.status == .ok)
            }
            // Wrong bearer tokens fill the same bucket; a signed-in browser's session is no guess and still opens.
            for _ in 1...5 {
                try await client.execute(uri: "/api/overview", method: .get, headers: [.authorization: "Bearer nope"]) { _ in }
            }
            try await client.execute(uri: "/api/overview", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                #expect(response.status == .tooManyRequests)
            }
            try await client.execute(uri: "/api/overview", method: .get, headers: [.cookie: session]) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test("beyond the global budget of wrong tokens only clients that signed in lately may try; IPv6 clients count by /64")
    func throttleAcrossClients() throws {
        let clock = ManualClock()
        var policy = SignInThrottle.Policy()
        policy.globalBurst = 6
        let throttle = SignInThrottle(policy: policy, clock: { clock.instant })
        throttle.succeeded("known")
        for n in 0..<6 { throttle.failed("client-\(n)") }
        #expect(throttle.wait("client-0") != nil, "one failure of its own, and the global budget spent")
        #expect(throttle.wait("stranger").map { $0 > .zero && $0 <= .seconds(1) } == true, "the global budget is spent")
        #expect(throttle.wait("known") == nil, "a client that gave the right token lately")
        clock.advance(.seconds(1))
        #expect(throttle.wait("stranger") == nil)

        let a = try SocketAddress(ipAddress: "2001:db8:1:2:aaaa::1", port: 1)
        let b = try SocketAddress(ipAddress: "2001:db8:1:2:bbbb::2", port: 2)
        let c = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 3)
        #expect(SignInThrottle.client(a) == SignInThrottle.client(b))
        #expect(SignInThrottle.client(a) != SignInThrottle.client(c))
        #expect(SignInThrottle.client(try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 4)) == "192.0.2.7")
        #expect(SignInThrottle.client(try SocketAddress(ipAddress: "192.0.2.7", port: 5)) == "192.0.2.7")
        #expect(SignInThrottle.client(nil) == "unknown")
    }

    @Test("a session is kept in the store: POST /logout ends it there, for the next router on the store too; a new token opens none")
    func sessions() async throws {
        let (store, folder) = try await Self.store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = "route-session-token-0123456789abcdef"
        let first = Application(router: try OperatorServer.router(.all, store: store, bind: Self.loopback, token: token))
        let second = Application(router: try OperatorServer.router(.all, store: store, bind: Self.loopback, token: token))
        let renewed = Application(router: try OperatorServer.router(.all, store: store, bind: Self.loopback, token: token + "-new"))
        let cookie = try await first.test(.router) { client in
            try await client.execute(uri: "/login", method: .post, headers: Self.formHeaders, body: Self.form(token)) { response in
                #expect(response.status == .seeOther)
                return Self.cookie(response)
            }
        }
        let session = try #require(cookie)
        let value = session.dropFirst("verify_session=".count)
        #expect(value.count == 43 && !value.contains("."), "a random id, no expiry or signature in it")
        try await second.test(.router) { client in
            try await client.execute(uri: "/api/overview", method: .get, headers: [.cookie: session]) { response in
                #expect(response.status == .ok, "the session is the store's: another server on it takes it")
            }
        }
        try await renewed.test(.router) { client in
            try await client.execute(uri: "/api/overview", method: .get, headers: [.cookie: session]) { response in
                #expect(response.status == .unauthorized, "a new token ends every session")
            }
        }
        try await first.test(.router) { client in
            try await client.execute(uri: "/logout", method: .post, headers: [.cookie: session]) { response in
                #expect(response.status == .seeOther && response.headers[.setCookie]?.contains("Max-Age=0") == true)
            }
            try await client.execute(uri: "/api/overview", method: .get, headers: [.cookie: session]) { response in
                #expect(response.status == .unauthorized, "signed out: the cookie opens nothing")
            }
        }
        try await second.test(.router) { client in
            try await client.execute(uri: "/", method: .get, headers: [.cookie: session]) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/login", "ended for every server on the store")
            }
        }
    }

    @Test("the token's strength: 32 characters or more, no repeated piece, varied characters; the reason never quotes it")
    func tokenStrength() {
        #expect(TokenStrength.weakness("0123456789abcdef0123456789abcde") != nil, "31 characters")
        #expect(TokenStrength.weakness(String(repeating: "ab", count: 20)) != nil)
        #expect(TokenStrength.weakness(String(repeating: "passw0rd", count: 5)) != nil)
        #expect(TokenStrength.weakness(String(repeating: "a", count: 30) + "bcdefghij") != nil, "few characters, most the same")
        let weak = "1234"
        #expect(TokenStrength.weakness(weak).map { !$0.contains(weak) } == true)
        #expect(TokenStrength.weakness("t0k3n-\(UUID().uuidString)") == nil)
        #expect(TokenStrength.weakness("3f9a1c77e02b4d58a6c1e9f0b27d4e83") == nil, "openssl rand -hex 16")
    }

    @Test("a router that would listen beyond loopback without a token is refused")
    func tokenRequiredBeyondLoopback() async throws {
        let (store, folder) = try await Self.store()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: OperatorViewError.self) {
            _ = try OperatorServer.router(.all, store: store, bind: try OperatorView.BindAddress(parsing: "0.0.0.0:8080"), token: nil)
        }
    }
}
