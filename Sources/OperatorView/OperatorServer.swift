import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import TransactionStore
import TransactionViews
import VerifyModel

/// The operator's view over HTTP (Hummingbird 2): the whole of it for `serve`, or only `/metrics`, `/healthz` and
/// `/readyz` beside a run (`--metrics-bind`). Either is a `Service`, for the command's service group.
package enum OperatorServer {
    package enum Routes: Sendable {
        /// The dashboard, the transaction pages, the JSON API, metrics and health.
        case all
        /// Metrics and health only.
        case metrics
    }

    /// The server, listening on `bind`; `token` (from the environment) is required of every request but `/healthz`
    /// when given, and must be given for an address other than loopback (with a token, browser sessions are kept in
    /// `store`, which must then be open for writing). `running` learns the port it listens on; `option` names where
    /// the address came from, for the error when it cannot listen.
    package static func make(
        _ routes: Routes, store: TransactionStore, bind: BindAddress, token: String?, logger: Logger,
        option: String = "--bind", limits: ConnectionLimits = ConnectionLimits(),
        running: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> ListeningServer {
        let router = try router(routes, store: store, bind: bind, token: token, logger: logger)
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        let listener = ListeningServer(bind: bind, what: option)
        let registry = ConnectionRegistry(limit: limits.maximumConnections)
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionGuard(registry: registry, requestTimeout: limits.requestTimeout)],
            idleTimeout: ConnectionLimits.timeAmount(limits.idleTimeout))
        listener.attach(
            Application(
                router: router, server: .http1(configuration: http),
                configuration: .init(address: .hostname(bind.host, port: bind.port), serverName: nil),
                onServerRunning: { channel in
                    let port = channel.localAddress?.port ?? bind.port
                    listener.started(port: port)
                    await running(port)
                }, logger: quiet))
        return listener
    }
}

extension OperatorServer {
    /// A logger at warning: the request log (info) left out, for a router made without one (the tests').
    static let quietLogger: Logger = {
        var logger = Logger(label: "verify-pipeline.serve")
        logger.logLevel = .warning
        return logger
    }()

    /// The routes and middleware of a server listening on `bind` (what `make` serves; tests call them in-process,
    /// with a throttle of their own).
    static func router(
        _ routes: Routes, store: TransactionStore, bind: BindAddress, token: String?,
        logger: Logger = OperatorServer.quietLogger, throttle: SignInThrottle = SignInThrottle()
    ) throws -> Router<OperatorContext> {
        guard bind.isLoopback || token != nil else {
            throw OperatorViewError("binding \(bind) (not loopback) needs a bearer token: name the variable holding it with --token-env")
        }
        let router = Router(context: OperatorContext.self)
        router.add(middleware: RequestLog(logger: logger))
        router.add(middleware: SecurityHeaders())
        if let token {
            let token = Array(token.utf8)
            router.add(middleware: BearerToken(token: token, sessions: OperatorSessions(store: store, token: token), throttle: throttle))
        } else {
            router.add(middleware: LoopbackHost(bindHost: bind.host))
        }
        let view: View
        do {
            view = View(store: store, pages: try Pages(signOut: token != nil), readiness: ReadinessProbe(store: store, logger: logger))
        } catch {
            throw OperatorViewError("the page templates do not parse: \(error)")
        }
        view.addHealthAndMetrics(to: router)
        if case .all = routes { view.addPages(to: router) }
        return router
    }
}

/// A request's context: Hummingbird's, and the address it came from (`SignInThrottle` counts by it).
struct OperatorContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// The handlers: each reads the store once or twice, from its indexes, and never shows a document value.
struct View: Sendable {
    let store: TransactionStore
    let pages: Pages
    let readiness: ReadinessProbe
    var metrics: MetricsPage { MetricsPage(registry: OperatorMetrics.registry, store: store) }

    static let html = "text/html; charset=utf-8"
    static let json = "application/json"
    static let dashboardRows = 50
    /// Rows of the review queue's page.
    static let reviewRows = 50
    /// The farthest a review list may start.
    static let maximumOffset = 10_000_000
    /// Documents per minute over this window.
    static let rateWindow: TimeInterval = 600
    /// The throughput chart's minutes (the last hour).
    static let chartMinutes = 60

    func addHealthAndMetrics(to router: Router<OperatorContext>) {
        router.get("/healthz") { _, _ in Self.respond("ok\n", "text/plain; charset=utf-8") }
        router.head("/healthz") { _, _ in Self.respond("", "text/plain; charset=utf-8") }
        router.get("/readyz") { _, _ in
            guard await readiness.isReady() else {
                return Self.respond("the store cannot be reached\n", "text/plain; charset=utf-8", status: .serviceUnavailable)
            }
            return Self.respond("ready\n", "text/plain; charset=utf-8")
        }
        router.get("/metrics") { _, _ in
            Self.respond(try await metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
        }
    }

    func addPages(to router: Router<OperatorContext>) {
        router.get("/") { request, _ in
            let query = try Self.listQuery(request, defaultLimit: Self.dashboardRows)
            let now = Date()
            let overview = try await store.overview(collectedSince: now.addingTimeInterval(-Self.rateWindow))
            let page = try await store.transactions(status: query.state, search: query.search, limit: query.limit, after: query.after)
            let throughput = try await store.collectedPerMinute(minutes: Self.chartMinutes, until: now)
            let html = pages.dashboard(
                overview, perMinute: Self.perMinute(overview), throughput: throughput, page: page,
                state: query.state, search: query.search, limit: query.limit, reviews: try await store.reviewCounts(), now: now)
            return Self.respond(html, Self.html)
        }
        router.get("/transactions/{id}") { request, context in
            guard let id = try Self.id(context), let report = try await store.report(id: id) else {
                return ErrorResponse.make(.notFound, "no such transaction", path: request.uri.path)
            }
            return Self.respond(pages.transaction(report), Self.html)
        }
        router.get("/api/transactions") { request, _ in
            let query = try Self.listQuery(request, defaultLimit: 100)
            let page = try await store.transactions(status: query.state, search: query.search, limit: query.limit, after: query.after)
            let next = page.next.map { "\"\($0.text)\"" } ?? "null"
            // Each transaction exactly as `status --json` prints it.
            let body = "{\"next\":\(next),\"transactions\":[" + page.transactions.map(StatusJSON.summary).joined(separator: ",") + "]}\n"
            return Self.respond(body, Self.json)
        }
        router.get("/api/transactions/{id}") { request, context in
            guard let id = try Self.id(context), let report = try await store.report(id: id) else {
                return ErrorResponse.make(.notFound, "no such transaction", path: request.uri.path)
            }
            return Self.respond(StatusJSON.report(report) + "\n", Self.json)
        }
        router.get("/api/overview") { _, _ in
            let now = Date()
            let overview = try await store.overview(collectedSince: now.addingTimeInterval(-Self.rateWindow))
            let throughput = try await store.collectedPerMinute(minutes: Self.chartMinutes, until: now).map(String.init).joined(separator: ",")
            let counts = DocumentSubmissionStatus.allCases.map { "\"\($0.rawValue)\":\(overview.transactions[$0] ?? 0)" }.joined(separator: ",")
            let rate = String(format: "%.2f", Self.perMinute(overview))
            let open = try await store.reviewCounts().open.values.reduce(0, +)
            return Self.respond(
                "{\"collectedPerMinute\":[\(throughput)],\"documentsPerMinute\":\(rate),\"reviewsOpen\":\(open),\"transactions\":{\(counts)}}\n",
                Self.json)
        }
        router.get("/review") { request, _ in
            let query = try Self.reviewQuery(request, defaultLimit: Self.reviewRows, limits: nil)
            let page = try await store.reviews(query.filter, limit: query.limit, offset: query.offset)
            return Self.respond(pages.reviews(page, filter: query.filter, offset: query.offset), Self.html)
        }
        router.get("/api/review") { request, _ in
            let query = try Self.reviewQuery(request, defaultLimit: 100, limits: 1...500)
            let page = try await store.reviews(query.filter, limit: query.limit, offset: query.offset)
            let next = page.next.map(String.init) ?? "null"
            let body = "{\"next\":\(next),\"reviews\":[" + page.entries.map(StatusJSON.review).joined(separator: ",") + "]}\n"
            return Self.respond(body, Self.json)
        }
        router.get("/api/openapi.json") { _, _ in Self.respond(OpenAPIDocument.json, Self.json) }
        router.get("/assets/view.css") { _, _ in Self.respond(Assets.css, "text/css; charset=utf-8") }
        // Answered by the token's middleware (`Session`): routes only so that the router takes them.
        router.get("/login") { _, _ in Session.page(status: .ok, message: nil) }
        router.post("/login") { _, _ in Self.respond("", Self.html, status: .notFound) }
        router.post("/logout") { _, _ in Session.cleared() }
        router.get("/assets/view.js") { _, _ in Self.respond(Assets.js, "text/javascript; charset=utf-8") }
    }

    /// Documents collected per minute over the rate window.
    static func perMinute(_ overview: StoreOverview) -> Double { Double(overview.collected) / (rateWindow / 60) }

    struct ListQuery {
        var state: DocumentSubmissionStatus?
        var search: String?
        var limit: Int
        var after: TransactionCursor?
    }

    /// `state`, `search`, `limit` (1 to 1000) and `after` (a page's `next`); anything else is a 400.
    static func listQuery(_ request: Request, defaultLimit: Int) throws -> ListQuery {
        let parameters = request.uri.queryParameters
        var query = ListQuery(limit: defaultLimit)
        if let state = parameters.get("state"), !state.isEmpty {
            guard let status = DocumentSubmissionStatus(rawValue: state.uppercased()) else {
                throw HTTPError(
                    .badRequest, message: "state must be one of \(DocumentSubmissionStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            query.state = status
        }
        if let search = parameters.get("search"), !search.isEmpty {
            guard search.count <= 128 else { throw HTTPError(.badRequest, message: "search is at most 128 characters") }
            // No id holds one, and PostgreSQL text cannot: a NUL would be a 503 there and cut the search on SQLite.
            guard !search.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw HTTPError(.badRequest, message: "search must not contain control characters")
            }
            query.search = search
        }
        if let limit = parameters.get("limit") {
            guard let value = Int(limit), (1...1000).contains(value) else { throw HTTPError(.badRequest, message: "limit is 1 to 1000") }
            query.limit = value
        }
        if let after = parameters.get("after"), !after.isEmpty {
            guard let cursor = TransactionCursor(text: after) else { throw HTTPError(.badRequest, message: "after is not a page's next") }
            query.after = cursor
        }
        return query
    }

    struct ReviewQuery {
        var filter = ReviewFilter()
        var limit: Int
        var offset = 0
    }

    /// The review queue's filters: `state` (open unless given; `all`, or one state), `code`, `offset`, and `limit`
    /// where `limits` allows one (the API); anything else is a 400.
    static func reviewQuery(_ request: Request, defaultLimit: Int, limits: ClosedRange<Int>?) throws -> ReviewQuery {
        let parameters = request.uri.queryParameters
        var query = ReviewQuery(limit: defaultLimit)
        if let state = parameters.get("state"), !state.isEmpty {
            if state.lowercased() == "all" {
                query.filter.states = nil
            } else if let chosen = ReviewState(rawValue: state.lowercased()) {
                query.filter.states = [chosen]
            } else {
                throw HTTPError(.badRequest, message: "state must be one of all, \(ReviewState.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        if let code = parameters.get("code"), !code.isEmpty {
            guard code.count <= 128, !code.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw HTTPError(.badRequest, message: "code is an error code: at most 128 characters, no control characters")
            }
            query.filter.code = code
        }
        if let offset = parameters.get("offset"), !offset.isEmpty {
            guard let value = Int(offset), (0...maximumOffset).contains(value) else {
                throw HTTPError(.badRequest, message: "offset is 0 to \(maximumOffset)")
            }
            query.offset = value
        }
        if let limits, let limit = parameters.get("limit") {
            guard let value = Int(limit), limits.contains(value) else {
                throw HTTPError(.badRequest, message: "limit is \(limits.lowerBound) to \(limits.upperBound)")
            }
            query.limit = value
        }
        return query
    }

    /// The id in the path; nil for one no store can hold (a NUL), which is then no such transaction.
    static func id(_ context: OperatorContext) throws -> String? {
        let raw = try context.parameters.require("id")
        let id = raw.removingPercentEncoding ?? raw
        return id.contains("\u{0}") ? nil : id
    }

    static func respond(_ text: String, _ type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
