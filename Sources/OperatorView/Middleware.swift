import Foundation
import HTTPTypes
import Hummingbird
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
            response = try error.response(from: request, context: context)
        } catch is StoreError {
            // Without the store's message, which could name a row.
            response = View.respond("the store cannot be read just now\n", "text/plain; charset=utf-8", status: .serviceUnavailable)
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

/// With a token, every request but `/healthz` must carry `Authorization: Bearer TOKEN`.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path == "/healthz" { return try await next(request, context) }
        // The scheme's name is case-insensitive (RFC 7235); the token is compared byte for byte.
        let header = request.headers[.authorization] ?? ""
        let scheme = header.prefix { $0 != " " }
        let given = scheme.lowercased() == "bearer" ? Array(header.dropFirst(scheme.count).drop { $0 == " " }.utf8) : []
        let expected = token
        // The same time whatever the first differing byte: the comparison tells nothing about the token.
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        guard difference == 0 else {
            var response = Response(status: .unauthorized, body: .init(byteBuffer: ByteBuffer(string: "a bearer token is required\n")))
            response.headers[.wwwAuthenticate] = "Bearer"
            response.headers[.contentType] = "text/plain; charset=utf-8"
            return response
        }
        return try await next(request, context)
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
            var response = Response(status: .misdirectedRequest,
                                    body: .init(byteBuffer: ByteBuffer(string: "this server answers only to localhost or a loopback address\n")))
            response.headers[.contentType] = "text/plain; charset=utf-8"
            return response
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
