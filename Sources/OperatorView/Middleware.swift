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
        let given = Array(request.headers[.authorization]?.utf8 ?? "".utf8)
        let expected = Array("Bearer ".utf8) + token
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
