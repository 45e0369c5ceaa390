import Foundation
import HTTPTypes
import Hummingbird
import Logging
import TransactionStore

/// Every response: nothing cached, nothing framed, no script or style but the view's own, nothing sniffed.
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    static var policy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; "
            + "form-action 'self'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError {
            response = ErrorResponse.make(error, path: request.uri.path)
        } catch is StoreError {
            // Without the store's message, which could name a row.
            response = ErrorResponse.make(.serviceUnavailable, "the store cannot be read just now", path: request.uri.path)
        }
        response.headers[.cacheControl] = "no-store"
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        return response
    }
}

/// With a token, every request but `/healthz` and the login page must carry `Authorization: Bearer TOKEN`, or,
/// from a browser, the session cookie `POST /login` sets when it is given the token: `HttpOnly`,
/// `SameSite=Strict`, a session kept in the store (`OperatorSessions`) for `Session.lifetime` or until
/// `POST /logout` ends it. A page asked for without either is sent to the login page; anything else gets 401.
/// Wrong tokens are throttled (`SignInThrottle`): 429 with `Retry-After`.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]
    let sessions: OperatorSessions
    let throttle: SignInThrottle

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path == "/healthz" || path.hasPrefix("/assets/") { return try await next(request, context) }
        let client = SignInThrottle.client((context as? any RemoteAddressRequestContext)?.remoteAddress)
        if path == "/login" { return try await Session.login(request, token: token, sessions: sessions, throttle: throttle, client: client) }
        if path == "/logout", request.method == .post { return try await Session.logout(request, sessions: sessions) }
        // The scheme's name is case-insensitive (RFC 7235); the token is compared byte for byte.
        let header = request.headers[.authorization] ?? ""
        let scheme = header.prefix { $0 != " " }
        let given = scheme.lowercased() == "bearer" ? Array(header.dropFirst(scheme.count).drop { $0 == " " }.utf8) : []
        if !given.isEmpty {
            if let wait = throttle.wait(client) { return Self.tooMany(wait, path: path) }
            if Session.same(given, token) {
                throttle.succeeded(client)
                return try await next(request, context)
            }
            throttle.failed(client)
        }
        if try await Session.isOpen(cookieHeader: request.headers[.cookie], sessions: sessions, now: Date()) {
            return try await next(request, context)
        }
        if request.method == .get, path == "/" || path == "/review" || path.hasPrefix("/transactions/") {
            var response = Response(status: .seeOther)
            response.headers[.location] = "/login"
            return response
        }
        var response = ErrorResponse.make(.unauthorized, "a bearer token is required", path: path)
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    static func tooMany(_ wait: Duration, path: String) -> Response {
        var response = ErrorResponse.make(.tooManyRequests, "too many wrong tokens: try again later", path: path)
        response.headers[.retryAfter] = String(SignInThrottle.seconds(wait))
        return response
    }
}

/// The browser's way in when a token is required: a login form, and a session cookie naming a session kept in the
/// store.
enum Session {
    static let cookie = "verify_session"
    static let lifetime: TimeInterval = 12 * 3_600

    /// The same time whatever the first differing byte: the comparison tells nothing about the secret.
    static func same(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }

    /// The values of the session cookies a `Cookie` header carries.
    static func ids(_ cookieHeader: String?) -> [Substring] {
        guard let cookieHeader else { return [] }
        return cookieHeader.split(separator: ";").compactMap { pair in
            let parts = pair.drop { $0 == " " }.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == cookie else { return nil }
            return Substring(parts[1].prefix { $0 != " " })
        }
    }

    static func isOpen(cookieHeader: String?, sessions: OperatorSessions, now: Date) async throws -> Bool {
        for id in ids(cookieHeader).prefix(4) where try await sessions.isOpen(id, at: now) { return true }
        return false
    }

    static func login(
        _ request: Request, token: [UInt8], sessions: OperatorSessions, throttle: SignInThrottle, client: String
    ) async throws -> Response {
        guard request.method == .post else { return page(status: .ok, message: nil) }
        if let wait = throttle.wait(client) {
            var response = page(status: .tooManyRequests, message: "Too many wrong tokens from here: try again later.")
            response.headers[.retryAfter] = String(SignInThrottle.seconds(wait))
            return response
        }
        let body = try await request.body.collect(upTo: 4_096)
        let form = String(buffer: body)
        let given =
            form.split(separator: "&").compactMap { field -> String? in
                let parts = field.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0] == "token" else { return nil }
                return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }.first ?? ""
        guard same(Array(given.utf8), token) else {
            throttle.failed(client)
            return page(status: .unauthorized, message: "That is not the token.")
        }
        throttle.succeeded(client)
        let id = try await sessions.open(lifetime: lifetime, at: Date())
        var response = Response(status: .seeOther)
        response.headers[.location] = "/"
        response.headers[.setCookie] = "\(cookie)=\(id); Path=/; Max-Age=\(Int(lifetime)); HttpOnly; SameSite=Strict"
        return response
    }

    /// Ends the sessions the request's cookies name, in the store (for every `serve` on it), and clears the cookie.
    static func logout(_ request: Request, sessions: OperatorSessions) async throws -> Response {
        for id in ids(request.headers[.cookie]).prefix(4) { try await sessions.end(id) }
        return cleared()
    }

    /// Back to the login page, the cookie cleared.
    static func cleared() -> Response {
        var response = Response(status: .seeOther)
        response.headers[.location] = "/login"
        response.headers[.setCookie] = "\(cookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"
        return response
    }

    /// The login form in the pages' own layout; `message` is one of this file's fixed sentences, never input.
    static func page(status: HTTPResponse.Status, message: String?) -> Response {
        let notice = message.map { "<p class=\"error\">\($0)</p>\n" } ?? ""
        let body =
            notice + """
                <form method="post" action="/login"><label>Token <input type="password" name="token" autocomplete="current-password" required></label>
                <button type="submit">Sign in</button></form>
                """
        return View.respond(Pages.layout(title: "Sign in · verify-pipeline", body: body, signOut: false), View.html, status: status)
    }
}

/// Without a token, on a loopback bind: only requests that name this machine (`Host: localhost`, a loopback
/// address, or the bind's host) are answered. A web page's script on a name that DNS rebinds to 127.0.0.1 sends
/// its own name, and gets 421 instead of the API.
struct LoopbackHost<Context: RequestContext>: RouterMiddleware {
    let bindHost: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let authority = request.head.authority ?? ""
        guard Self.namesThisMachine(authority, bindHost: bindHost) else {
            return ErrorResponse.make(.misdirectedRequest, "this server answers only to localhost or a loopback address", path: request.uri.path)
        }
        return try await next(request, context)
    }

    static func namesThisMachine(_ authority: String, bindHost: String) -> Bool {
        var host = Substring(authority)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            host = host[..<colon]
        }
        let name = host.lowercased()
        return name == "localhost" || name == bindHost.lowercased() || BindAddress.isLoopbackLiteral(name)
    }
}

/// The request log, at info: method, the route matched (its template, `/transactions/{id}`, never the id), the status
/// and the time taken. Never a path's values, a query or a header.
struct RequestLog<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, context, status: response.status.code, since: start)
            return response
        } catch {
            log(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, since: start)
            throw error
        }
    }

    func log(_ request: Request, _ context: Context, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        logger.info(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(status)",
                "duration_ms": "\(String(format: "%.1f", milliseconds))"
            ])
    }
}
