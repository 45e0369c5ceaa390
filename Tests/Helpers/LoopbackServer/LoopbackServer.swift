import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A real HTTP server on 127.0.0.1 standing in for the submission API and the risk-evaluation API.
/// It behaves like an idempotent API: a document whose Idempotency-Key was accepted before gets 409.
/// The transaction id's first word picks the fault to inject for a key's first requests:
/// `accept`, `flaky` (500 twice), `conflict` (409), `bad` (400), `slowbad` (400 once `refusalsHeld` is cleared), `slow`
/// (accepts the first request and never answers it: the client's own timeout ends it), `drop` (accepts, then closes
/// the connection without an answer), `partial` (accepts: 201, then closes halfway through the body), `moved`, `found`,
/// `seeother`, `temporary` and `permanent` (301, 302, 303, 307 and 308 to `redirectTarget`), `trickle` (200, then a
/// body of a byte a second, counted in `trickledBytes`), `big` (200 with a 2 MB body). The risk
/// evaluation answers at once, or with `riskTrickles` a 200 whose body comes a byte a second.
public final class LoopbackServer: Sendable {
    public struct Request: Sendable {
        public var path: String
        public var headers: [String: String]
        public var body: Data
    }

    struct Ledger: Sendable {
        var requests: [Request] = []
        /// Idempotency-Key -> how many times the server accepted (stored) that document: must never exceed 1.
        var accepted: [String: Int] = [:]
        var seen: [String: Int] = [:]
        /// While set, document requests are read and never answered (a submitter stuck on a dead API).
        var hanging = false
        /// Transactions `fixable-…` are refused with 400 while this holds.
        var refusingFixable = true
        /// Where the redirecting scenarios send the client (another server's base URL).
        var redirectTarget = "http://127.0.0.1:9"
        var riskTrickles = false
        /// While set, `slowbad` requests wait for their 400: the test decides when the refusal comes.
        var refusalsHeld = false
        /// The body bytes the trickling answers have sent so far: a client is reading a trickle once this moves.
        var trickledBytes = 0
    }

    /// Shared by the server and its connection handlers.
    final class LedgerBox: Sendable {
        let state = Mutex(Ledger())
        func withLock<T>(_ body: (inout Ledger) -> T) -> T { state.withLock { body(&$0) } }
    }

    let ledger = LedgerBox()
    let latency: TimeAmount
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    public var port: Int { channel.localAddress?.port ?? 0 }
    public var baseURL: String { "\(isTLS ? "https" : "http")://127.0.0.1:\(port)" }
    let isTLS: Bool

    /// With `certificate` and `key` (PEM files), the server speaks https.
    public init(latency: TimeAmount = .zero, certificate: String? = nil, key: String? = nil) throws {
        self.latency = latency
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let ledger = self.ledger
        var tls: NIOSSLContext?
        if let certificate, let key {
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            tls = try NIOSSLContext(configuration: configuration)
        }
        isTLS = tls != nil
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [tls] channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(ledger: ledger, latency: latency))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    public func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    public var requests: [Request] { ledger.withLock { $0.requests } }
    public func requests(forKey key: String) -> Int { ledger.withLock { $0.seen[key] ?? 0 } }
    public func acceptedCount(forKey key: String) -> Int { ledger.withLock { $0.accepted[key] ?? 0 } }
    public var keys: Set<String> { ledger.withLock { Set($0.seen.keys) } }
    public var redirectTarget: String {
        get { ledger.withLock { $0.redirectTarget } }
        set { ledger.withLock { $0.redirectTarget = newValue } }
    }
    public var hanging: Bool {
        get { ledger.withLock { $0.hanging } }
        set { ledger.withLock { $0.hanging = newValue } }
    }
    /// Whether `fixable-…` transactions are refused with 400 (the endpoint's fault) or accepted (fixed).
    public var refusingFixable: Bool {
        get { ledger.withLock { $0.refusingFixable } }
        set { ledger.withLock { $0.refusingFixable = newValue } }
    }
    public var riskTrickles: Bool {
        get { ledger.withLock { $0.riskTrickles } }
        set { ledger.withLock { $0.riskTrickles = newValue } }
    }
    public var refusalsHeld: Bool {
        get { ledger.withLock { $0.refusalsHeld } }
        set { ledger.withLock { $0.refusalsHeld = newValue } }
    }
    public var trickledBytes: Int { ledger.withLock { $0.trickledBytes } }

    static let redirects: [String: HTTPResponseStatus] = [
        "moved": .movedPermanently, "found": .found, "seeother": .seeOther, "temporary": .temporaryRedirect, "permanent": .permanentRedirect
    ]

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let ledger: LedgerBox
        let latency: TimeAmount
        var head: HTTPRequestHead?
        var body = Data()

        init(ledger: LedgerBox, latency: TimeAmount) {
            self.ledger = ledger
            self.latency = latency
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = Data()
            case .body(var buffer):
                body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            case .end:
                guard let head else { return }
                respond(context: context, head: head)
            }
        }

        private func respond(context: ChannelHandlerContext, head: HTTPRequestHead) {
            let headers = Dictionary(head.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
            let request = Request(path: head.uri, headers: headers, body: body)
            if head.uri.hasSuffix("/riskEvaluations") {
                let trickles = ledger.withLock { ledger in
                    ledger.requests.append(request)
                    return ledger.riskTrickles
                }
                if trickles {
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Length", value: "100000")
                    context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                    trickle(context)
                } else {
                    send(context, status: .ok, body: #"{"id":"risk-1","result":{"level":"LOW"}}"#)
                }
                return
            }
            let key = headers["idempotency-key"] ?? ""
            let transaction = head.uri.split(separator: "/").drop { $0 != "transactions" }.dropFirst().first.map(String.init) ?? ""
            let scenario = transaction.split(separator: "-").first.map(String.init) ?? "accept"
            let (attempt, alreadyAccepted, hanging, target, refusingFixable) = ledger.withLock { ledger -> (Int, Bool, Bool, String, Bool) in
                ledger.requests.append(request)
                ledger.seen[key, default: 0] += 1
                return (
                    ledger.seen[key, default: 0], (ledger.accepted[key] ?? 0) > 0, ledger.hanging, ledger.redirectTarget, ledger.refusingFixable
                )
            }
            if hanging { return }
            func accept() { ledger.withLock { $0.accepted[key, default: 0] += 1 } }
            if alreadyAccepted {
                send(context, status: .conflict, body: #"{"error":"already accepted"}"#)
                return
            }
            switch scenario {
            case "flaky" where attempt <= 2:
                send(context, status: .internalServerError, body: #"{"error":"try again"}"#)
            case "conflict":
                send(context, status: .conflict, body: #"{"error":"already accepted"}"#)
            case "bad",
                "fixable" where refusingFixable:
                send(context, status: .badRequest, body: #"{"error":"bad document"}"#)
            case "slowbad":
                refuseWhenReleased(context)
            case "slow" where attempt == 1:
                accept()
            case "drop" where attempt == 1:
                accept()
                context.close(promise: nil)
            case "partial":
                accept()
                var responseHead = HTTPHeaders()
                responseHead.add(name: "Content-Length", value: "200")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .created, headers: responseHead))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: #"{"status":"acc"#)))), promise: nil)
                context.close(promise: nil)
            case _ where LoopbackServer.redirects[scenario] != nil:
                var headers = HTTPHeaders()
                headers.add(name: "Location", value: target + head.uri)
                headers.add(name: "Content-Length", value: "0")
                let status = LoopbackServer.redirects[scenario] ?? .found
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case "trickle":
                accept()
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "100000")
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                trickle(context)
            case "big":
                accept()
                send(context, status: .ok, body: String(repeating: "x", count: 2_000_000))
            default:
                accept()
                if latency == .zero {
                    send(context, status: .created, body: #"{"status":"accepted"}"#)
                } else {
                    context.eventLoop.scheduleTask(in: latency) { self.send(context, status: .created, body: #"{"status":"accepted"}"#) }
                }
            }
        }

        /// A byte a second, for as long as the client listens.
        private func trickle(_ context: ChannelHandlerContext) {
            context.eventLoop.scheduleTask(in: .seconds(1)) {
                guard context.channel.isActive else { return }
                context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: " ")))), promise: nil)
                self.ledger.withLock { $0.trickledBytes += 1 }
                self.trickle(context)
            }
        }

        /// A 400 as soon as `refusalsHeld` is cleared, looked at every 10 ms.
        private func refuseWhenReleased(_ context: ChannelHandlerContext) {
            guard ledger.withLock({ $0.refusalsHeld }) else {
                send(context, status: .badRequest, body: #"{"error":"bad document"}"#)
                return
            }
            context.eventLoop.scheduleTask(in: .milliseconds(10)) { self.refuseWhenReleased(context) }
        }

        private func send(_ context: ChannelHandlerContext, status: HTTPResponseStatus, body: String) {
            guard context.channel.isActive else { return }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: "\(body.utf8.count)")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
