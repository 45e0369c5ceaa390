import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
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

    static func app(_ routes: OperatorServer.Routes, token: String? = nil) async throws -> (some ApplicationProtocol, URL) {
        let (store, folder) = try await store()
        let router = try OperatorServer.router(routes, store: store, bind: loopback, token: token)
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
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Self.text(response) == "ready\n")
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
                // The required government id is collected, the selfie optional: the transaction is in PROCESS.
                #expect(Self.text(response).contains(#"verify_transactions{status="PROCESS"} 1.0"#), "\(Self.text(response))")
                #expect(Self.text(response).contains("verify_documents_collected_last_5m 1.0"), "\(Self.text(response))")
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
                #expect(Self.text(response) == "{\"error\":\"no such transaction\"}\n")
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
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
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
