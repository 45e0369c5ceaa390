import Foundation
import HTTPTypes
import Hummingbird

/// Every error the server answers, in one format per audience: the JSON API's `{"error":{"status":404,
/// "message":"…"}}` (the OpenAPI description's `Error`), the pages' own layout for a browser, plain text for
/// `/metrics` and the health routes. `message` is one of the server's own sentences, never a value from a request.
enum ErrorResponse {
    enum Audience: Equatable {
        case api, page, plain
    }

    static func audience(of path: String) -> Audience {
        if path.hasPrefix("/api/") || path == "/api" { return .api }
        if path == "/metrics" || path == "/healthz" || path == "/readyz" { return .plain }
        return .page
    }

    static func make(_ status: HTTPResponse.Status, _ message: String, path: String) -> Response {
        switch audience(of: path) {
        case .api:
            return View.respond(json(status, message), View.json, status: status)
        case .plain:
            return View.respond(message + "\n", "text/plain; charset=utf-8", status: status)
        case .page:
            return View.respond(Pages.errorPage(status: status, message: message), View.html, status: status)
        }
    }

    /// The API's error body: the status code and a sentence.
    static func json(_ status: HTTPResponse.Status, _ message: String) -> String {
        struct Body: Encodable {
            struct Detail: Encodable {
                let status: Int
                let message: String
            }
            let error: Detail
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Body(error: .init(status: status.code, message: message)))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The sentence for an error thrown by a handler or by Hummingbird (an unknown route, a method not allowed).
    static func message(_ error: any HTTPResponseError) -> String {
        if let error = error as? HTTPError, let body = error.body, !body.isEmpty { return body }
        switch error.status {
        case .notFound: return "no such page"
        case .methodNotAllowed: return "method not allowed"
        case .contentTooLarge: return "the request is too large"
        default: return error.status.reasonPhrase.lowercased()
        }
    }

    /// The error's response with the error's own headers (e.g. `Allow`) kept.
    static func make(_ error: any HTTPResponseError, path: String) -> Response {
        var response = make(error.status, message(error), path: path)
        if let error = error as? HTTPError {
            for field in error.headers where field.name != .contentType && field.name != .contentLength {
                response.headers.append(field)
            }
        }
        return response
    }
}
