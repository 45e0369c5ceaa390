import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import TransactionStore
import VerifyModel

@testable import OperatorView

/// What a service is expected to follow: the API's answers match its OpenAPI description (checked by an OpenAPI
/// validator from PyPI, which scripts/test installs), one error format, Prometheus text with HELP and TYPE for every
/// family, a request log without values.
@Suite("The operator view's service conventions")
struct ServiceConventionTests {
    /// The Python of the virtual environment scripts/test makes with the pinned validator, or a cancelled test on a
    /// plain `swift test` (a failure under scripts/test, which sets VERIFY_PIPELINE_REQUIRE_POSTGRES).
    static func validatorPython() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let python = environment["VERIFY_PIPELINE_OPENAPI_PYTHON"], FileManager.default.isExecutableFile(atPath: python) {
            return python
        }
        if environment["VERIFY_PIPELINE_REQUIRE_POSTGRES"] == nil {
            try Test.cancel("needs the OpenAPI validator: VERIFY_PIPELINE_OPENAPI_PYTHON is not set (scripts/test installs it)")
        }
        throw Failure(description: "VERIFY_PIPELINE_OPENAPI_PYTHON does not name a Python with openapi-spec-validator: run scripts/test")
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Answer: Codable {
        var method: String
        var route: String
        var status: Int
        var body: String
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs scripts/check-openapi over the description and `answers`; its exit status and what it printed.
    static func check(spec: String, answers: [Answer]) throws -> (status: Int32, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(spec.utf8).write(to: folder.appendingPathComponent("spec.json"))
        try JSONEncoder().encode(answers).write(to: folder.appendingPathComponent("answers.json"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try validatorPython())
        process.arguments = [
            packageRoot.appendingPathComponent("scripts/check-openapi").path, folder.appendingPathComponent("spec.json").path,
            folder.appendingPathComponent("answers.json").path
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// The routes' store, with a failed selfie waiting for review beside the collected government id.
    static func storeWithReview() async throws -> (TransactionStore, URL) {
        let (store, folder) = try await RouteTests.store()
        _ = try await store.recordFailure(
            FailureReport(
                transactionId: "txn-route-1", verificationCode: "CODE-SECRET", type: .selfie, kind: .capture,
                code: .document(.documentCaptureError), message: "selfie: undecodable", field: nil, source: "batch/txn-route-1",
                inputs: "{}"),
            limits: ReviewLimits(), at: Date())
        return (store, folder)
    }

    @Test("every API route's answers, good and bad, match /api/openapi.json, which is valid OpenAPI 3.1")
    func openAPI() async throws {
        let (store, folder) = try await Self.storeWithReview()
        defer { try? FileManager.default.removeItem(at: folder) }
        let router = try OperatorServer.router(.all, store: store, bind: RouteTests.loopback, token: nil)
        // Each request and the route template it is described under.
        let requests: [(uri: String, route: String)] = [
            ("/api/transactions", "/api/transactions"), ("/api/transactions?limit=1", "/api/transactions"),
            ("/api/transactions?state=PROCESS&search=route", "/api/transactions"), ("/api/transactions?state=NOPE", "/api/transactions"),
            ("/api/transactions?limit=0", "/api/transactions"), ("/api/transactions?after=garbage", "/api/transactions"),
            ("/api/transactions/txn-route-1", "/api/transactions/{id}"), ("/api/transactions/none", "/api/transactions/{id}"),
            ("/api/overview", "/api/overview"), ("/api/review", "/api/review"), ("/api/review?state=all&limit=1", "/api/review"),
            ("/api/review?state=nope", "/api/review"), ("/api/review?offset=-1", "/api/review"),
            ("/api/openapi.json", "/api/openapi.json")
        ]
        let answers = try await Application(router: router).test(.router) { client in
            var answers: [Answer] = []
            for request in requests {
                let answer = try await client.execute(uri: request.uri, method: .get) { response in
                    Answer(method: "GET", route: request.route, status: Int(response.status.code), body: String(buffer: response.body))
                }
                #expect(answer.status != 500, "\(request.uri)")
                answers.append(answer)
            }
            return answers
        }
        let spec = try #require(answers.first { $0.route == "/api/openapi.json" }).body
        #expect(Set(answers.map(\.status)) == [200, 400, 404], "\(answers.map { "\($0.route) \($0.status)" })")
        let checked = try Self.check(spec: spec, answers: answers)
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.contains("\(answers.count) answers checked, 0 problems"), "\(checked.output)")

        // The validator fails where the server and the description part: a field the description does not have, an
        // error in the other format, a status it does not list, a route never answered.
        var drifted = answers
        let report = try #require(drifted.firstIndex { $0.route == "/api/transactions/{id}" && $0.status == 200 })
        drifted[report].body = drifted[report].body.replacingOccurrences(of: "\"transactionId\"", with: "\"extra\":1,\"transactionId\"")
        let missing = try #require(drifted.firstIndex { $0.status == 404 })
        drifted[missing].body = #"{"error":"no such transaction"}"#
        drifted.append(Answer(method: "GET", route: "/api/overview", status: 418, body: "{}"))
        drifted.removeAll { $0.route == "/api/openapi.json" }
        let failed = try Self.check(spec: spec, answers: drifted)
        #expect(failed.status == 1, "\(failed.output)")
        for problem in [
            "/api/transactions/{id} 200: at /: Additional properties", "/api/transactions/{id} 404: at /error", "418: status not documented",
            "GET /api/openapi.json: never answered"
        ] {
            #expect(failed.output.contains(problem), "\(problem) in \(failed.output)")
        }
    }

    @Test("every error has one format: JSON on the API, a styled page for a browser, plain text on /metrics and health")
    func errorFormat() async throws {
        let (store, folder) = try await RouteTests.store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let router = try OperatorServer.router(.all, store: store, bind: RouteTests.loopback, token: "a-token-of-thirty-two-characters!!")
        try await Application(router: router).test(.router) { client in
            let bearer: HTTPFields = [.authorization: "Bearer a-token-of-thirty-two-characters!!"]
            for (uri, status, message) in [
                ("/api/transactions/none", 404, "no such transaction"), ("/api/nothing-here", 404, "no such page"),
                ("/api/transactions?limit=5000", 400, "limit is 1 to 1000")
            ] {
                try await client.execute(uri: uri, method: .get, headers: bearer) { response in
                    #expect(Int(response.status.code) == status, "\(uri)")
                    #expect(response.headers[.contentType] == "application/json", "\(uri)")
                    let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: [String: Any]]
                    #expect(body?["error"]?["status"] as? Int == status, "\(uri): \(String(buffer: response.body))")
                    #expect(body?["error"]?["message"] as? String == message, "\(uri): \(String(buffer: response.body))")
                    #expect(body?.keys.sorted() == ["error"] && body?["error"]?.keys.sorted() == ["message", "status"])
                }
            }
            // Without the token, the API's 401 is the same JSON; a page is sent to sign in.
            try await client.execute(uri: "/api/overview", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body) == #"{"error":{"message":"a bearer token is required","status":401}}"# + "\n")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            for uri in ["/transactions/none", "/no-such-page"] {
                try await client.execute(uri: uri, method: .get, headers: bearer) { response in
                    let page = String(buffer: response.body)
                    #expect(response.status == .notFound, "\(uri)")
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                    #expect(page.contains(#"<section class="error-page">"#) && page.contains(#"<link rel="stylesheet" href="/assets/view.css">"#))
                    #expect(page.contains("<span class=\"code\">404</span> Not Found"), "\(page)")
                    // A server with a token: its pages (not the error page, which any visitor may get) can sign out.
                    #expect(!page.contains("action=\"/logout\""))
                }
            }
            try await client.execute(uri: "/", method: .get, headers: bearer) { response in
                #expect(String(buffer: response.body).contains(#"<form class="signout" method="post" action="/logout">"#))
            }
        }
    }

    /// The families of a Prometheus text page, checked as promtool's parser and linter would: every sample in a
    /// family declared once with HELP then TYPE, counters named `_total`, names and labels well formed, numbers
    /// parse. Returns the problems found and the families by name with their type.
    static func exposition(_ text: String) -> (problems: [String], types: [String: String]) {
        var problems: [String] = []
        var types: [String: String] = [:]
        var helped: Set<String> = []
        let name = #/^[a-zA-Z_:][a-zA-Z0-9_:]*$/#
        let sample = #/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (\S+)$/#
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# HELP ") {
                let parts = line.dropFirst(7).split(separator: " ", maxSplits: 1)
                guard parts.count == 2, !parts[1].isEmpty else {
                    problems.append("HELP without text: \(line)")
                    continue
                }
                if !helped.insert(String(parts[0])).inserted { problems.append("HELP twice: \(parts[0])") }
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2, (try? name.wholeMatch(in: String(parts[0]))) != nil,
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1])
                else {
                    problems.append("malformed TYPE: \(line)")
                    continue
                }
                let family = String(parts[0])
                if types[family] != nil { problems.append("TYPE twice: \(family)") }
                if !helped.contains(family) { problems.append("no HELP before TYPE: \(family)") }
                if parts[1] == "counter", !family.hasSuffix("_total") { problems.append("counter not named _total: \(family)") }
                types[family] = String(parts[1])
            } else if line.hasPrefix("#") {
                problems.append("unknown comment: \(line)")
            } else if let match = try? sample.wholeMatch(in: String(line)) {
                let metric = String(match.output.1)
                var declared = types[metric] != nil
                for suffix in ["_bucket", "_sum", "_count"] where metric.hasSuffix(suffix) {
                    let family = String(metric.dropLast(suffix.count))
                    if types[family] == "histogram" || types[family] == "summary" { declared = true }
                }
                if !declared { problems.append("sample without TYPE: \(line)") }
                let value = String(match.output.5)
                if Double(value) == nil, !["NaN", "+Inf", "-Inf"].contains(value) { problems.append("value not a number: \(line)") }
            } else {
                problems.append("malformed sample: \(line)")
            }
        }
        return (problems, types)
    }

    @Test("/metrics: HELP and TYPE for every family, counters for the store's totals, the build, the process")
    func metrics() async throws {
        let (store, folder) = try await Self.storeWithReview()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A pipeline metric of each kind the pipeline makes, as a run would have registered them.
        let registry = OperatorMetrics.registry
        _ = registry.makeCounter(name: "verify_documents_total", labels: [("type", "SELFIE"), ("outcome", "failed")])
        _ = registry.makeGauge(name: "verify_queue_depth", labels: [("stage", "decode")])
        _ = registry.makeDurationHistogram(name: "verify_stage_duration_seconds", labels: [("stage", "decode")], buckets: [.seconds(1)])
        let text = try await MetricsPage(registry: registry, store: store).render()
        let (problems, types) = Self.exposition(text)
        #expect(problems.isEmpty, "\(problems)\n\(text)")
        #expect(types["verify_store_documents_collected_total"] == "counter" && types["verify_store_failed_documents_total"] == "counter")
        #expect(types["verify_stage_duration_seconds"] == "histogram" && types["verify_documents_total"] == "counter")
        #expect(types["process_cpu_seconds_total"] == "counter" && types["process_resident_memory_bytes"] == "gauge")
        #expect(text.contains("verify_store_documents_collected_total 1\n"), "\(text)")
        #expect(text.contains(#"verify_store_failed_documents_total{code="documentCaptureError"} 1"#), "\(text)")
        #expect(text.contains(#"verify_reviews_open_by_code{code="documentCaptureError"} 1"#) && text.contains("verify_reviews_open 1\n"))
        #expect(text.contains(#"verify_pipeline_build_info{version="\#(ToolVersion.current)"} 1"#))
        // The process started before this scrape, and within a day of it.
        let start = try #require(
            text.split(separator: "\n").first { $0.hasPrefix("process_start_time_seconds ") }.flatMap { Double($0.split(separator: " ")[1]) })
        #expect(start <= Date().timeIntervalSince1970 && start > Date().timeIntervalSince1970 - 86_400)
        // No windowed gauge is left.
        #expect(!text.contains("last_5m"))
        // The checker finds what promtool would: a counter without _total, a family without HELP.
        #expect(Self.exposition("# TYPE a_count counter\na_count 1\n").problems.count == 2)
    }

    @Test("the Grafana dashboard in docs/ asks only for metrics /metrics serves")
    func grafanaDashboard() async throws {
        let (store, folder) = try await Self.storeWithReview()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = try await MetricsPage(registry: OperatorMetrics.registry, store: store).render()
        // The store's, the build's and the process's families, and the pipeline's (those a run makes).
        var served = Set(Self.exposition(text).types.keys).union(MetricsPage.help.keys)
        for histogram in ["verify_stage_duration_seconds"] { served.formUnion(["_bucket", "_sum", "_count"].map { histogram + $0 }) }
        let url = Self.packageRoot.appendingPathComponent("docs/grafana/verify-pipeline.json")
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(expressions.count >= 14)
        let names = Set(expressions.flatMap { $0.matches(of: #/\b(verify_[a-z0-9_]+|process_[a-z0-9_]+)\b/#).map { String($0.output.1) } })
        #expect(names.count >= 12, "\(names)")
        #expect(names.subtracting(served).isEmpty, "not served: \(names.subtracting(served).sorted())")
    }

    @Test("/metrics passes `promtool check metrics` (Prometheus' own linter, from Debian's prometheus package)")
    func promtool() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let promtool = environment["VERIFY_PIPELINE_PROMTOOL"], FileManager.default.isExecutableFile(atPath: promtool) else {
            if environment["VERIFY_PIPELINE_REQUIRE_POSTGRES"] == nil {
                try Test.cancel("needs promtool: VERIFY_PIPELINE_PROMTOOL is not set (scripts/test unpacks it)")
            }
            throw Failure(description: "VERIFY_PIPELINE_PROMTOOL does not name promtool: run scripts/test")
        }
        let (store, folder) = try await Self.storeWithReview()
        defer { try? FileManager.default.removeItem(at: folder) }
        let registry = OperatorMetrics.registry
        _ = registry.makeCounter(name: "verify_submission_attempts_total", labels: [("class", "accepted"), ("retry", "false")])
        _ = registry.makeDurationHistogram(name: "verify_stage_duration_seconds", labels: [("stage", "scan")], buckets: [.seconds(1)])
        let text = try await MetricsPage(registry: registry, store: store).render()
        let (status, output) = try Self.run(promtool, ["check", "metrics"], input: text)
        #expect(status == 0 && output.isEmpty, "promtool: \(output)\n\(text)")
        // And it finds what it should: a counter without _total, a family without HELP.
        let (badStatus, badOutput) = try Self.run(promtool, ["check", "metrics"], input: "# TYPE a_count counter\na_count 1\n")
        #expect(badStatus != 0 && badOutput.contains("a_count"), "\(badOutput)")
    }

    static func run(_ executable: String, _ arguments: [String], input: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe(), out = Pipe()
        process.standardInput = stdin
        process.standardOutput = out
        process.standardError = out
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// Log lines a handler was given.
    final class Recorder: LogHandler, @unchecked Sendable {
        let lines = Mutex<[String]>([])
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.withLock { $0.append("\(event.level) \(event.message) \(fields)") }
        }
    }

    @Test("the request log: method, route template, status and duration at info, never an id or a query")
    func requestLog() async throws {
        let (store, folder) = try await RouteTests.store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let recorder = Recorder()
        let logger = Logger(label: "test") { _ in recorder }
        let router = try OperatorServer.router(.all, store: store, bind: RouteTests.loopback, token: nil, logger: logger)
        try await Application(router: router).test(.router) { client in
            _ = try await client.execute(uri: "/transactions/txn-route-1?search=SECRETNAME", method: .get) { $0.status }
            _ = try await client.execute(uri: "/api/transactions?search=SECRETNUMBER", method: .get) { $0.status }
            _ = try await client.execute(uri: "/nowhere/SECRETNAME", method: .get) { $0.status }
        }
        let lines = recorder.lines.withLock { $0 }.filter { $0.hasPrefix("info request") }
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.contains { $0.contains("method=GET") && $0.contains("route=/transactions/{id}") && $0.contains("status=200") })
        #expect(lines.contains { $0.contains("route=/api/transactions") && $0.contains("status=200") })
        #expect(lines.contains { $0.contains("route=unmatched") && $0.contains("status=404") })
        #expect(lines.allSatisfy { $0.contains("duration_ms=") })
        for line in lines { #expect(!line.contains("SECRET") && !line.contains("txn-route-1"), "\(line)") }
    }
}
