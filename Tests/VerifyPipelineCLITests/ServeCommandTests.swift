import BlockingWaits
import Foundation
import GRDB
import PostgresTestSupport
import Testing
import VerifyModel

@testable import TransactionStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `verify-pipeline serve` running as a user starts it, on a loopback port it picks.
final class ServeProcess: Sendable {
    let process: InteractiveProcess
    let base: URL

    init(_ arguments: [String], environment: [String: String] = [:]) async throws {
        process = try InteractiveProcess(["serve", "--bind", "127.0.0.1:0"] + arguments, environment: environment)
        base = URL(string: "http://127.0.0.1:\(try await announcedPort(process))")!
    }

    struct Answer {
        var status: Int
        var body: String
        var headers: [String: String]
    }

    func get(_ path: String, token: String? = nil) async throws -> Answer {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers[String(describing: name).lowercased()] = String(describing: value) }
        return Answer(status: http.statusCode, body: String(decoding: data, as: UTF8.self), headers: headers)
    }

    func stop() async -> Bool {
        kill(process.process.processIdentifier, SIGTERM)
        return await process.waitForExit(timeout: 15)
    }
}

/// The loopback port a process says it listens on (`... on http://127.0.0.1:PORT/` on stderr), within 30 s.
func announcedPort(_ process: InteractiveProcess) async throws -> Int {
    struct NotListening: Error, CustomStringConvertible {
        var stderr: String
        var description: String { "no listening address announced: \(stderr)" }
    }
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
        if let range = process.stderr.range(of: #"on http://127\.0\.0\.1:\d+/"#, options: .regularExpression),
            let port = Int(process.stderr[range].split(separator: ":").last!.dropLast())
        {
            return port
        }
        guard process.process.isRunning else { break }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw NotListening(stderr: process.stderr)
}

/// Prometheus text: each sample line's name with its labels, and its value.
func prometheusSamples(_ text: String) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
        samples[String(line[..<space])] = value
    }
    return samples
}

/// Whether `text` shows `value`. A value of digits counts only as a whole number: a sample's zip code, 62701, once
/// turned up inside a random document id's hex or a duration on /metrics. Any other value counts anywhere.
func shows(_ text: String, _ value: String) -> Bool {
    guard value.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) else { return text.contains(value) }
    let pattern = "(?<![A-Za-z0-9.])" + NSRegularExpression.escapedPattern(for: value) + "(?![A-Za-z0-9])"
    return text.range(of: pattern, options: .regularExpression) != nil
}

@Suite("The operator's view: verify-pipeline serve", .serialized)
struct ServeCommandTests {
    static let samples = CLIRunner.root.appendingPathComponent("Samples/batch").path
    static let sampleIds = (1...9).map { String(format: "txn-batch-%03d", $0) }

    /// A store filled by the sample batch, and the identity values the batch printed (which no page may show).
    static func sampleStore(_ folder: URL) async throws -> (store: String, values: Set<String>) {
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let run = try await InProcess.run(samples, store: store)
        #expect(run.summary.failed > 0 && run.summary.transactions == 9 && run.summary.completed == 6, "\(run.summary)")
        var values: Set<String> = []
        for line in run.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            for (key, value) in object["document"] as? [String: String] ?? [:] where !["sex", "country", "nationality"].contains(key) {
                values.formUnion(
                    value.split(whereSeparator: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true })
                        .map(String.init).filter { $0.count >= 4 })
            }
        }
        return (store, values)
    }

    /// A forged `after=` cursor whose time no store can hold (milliseconds of 2^63 - 1 trapped PostgreSQL's date
    /// encoding and killed the process) is a 400; one at the far end of what a store holds reads an empty page.
    @Test("a forged cursor is a 400 on both stores, and serve goes on", arguments: SampleStore.allCases)
    func forgedCursor(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("serve-cursor")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await kind.fresh(folder, "s")
        let run = try await InProcess.run(Self.samples, store: store)
        #expect(run.summary.transactions == 9, "\(run.summary)")
        let serve = try await ServeProcess(["--store", store])
        func cursor(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        for forged in ["9223372036854775807|x", "u9223372036854775807|x", "-9223372036854775808|x", "u-1|x", "u253402300800000000|x"] {
            for path in ["/api/transactions?after=", "/?after="] {
                let answer = try await serve.get(path + cursor(forged))
                #expect(answer.status == 400, "\(kind) \(path)\(forged): \(answer.status)")
            }
        }
        let farthest = try await serve.get("/api/transactions?after=" + cursor("u253402300799999999|~"))
        #expect(farthest.status == 200 && farthest.body.contains("txn-batch-001"), "every sample transaction comes before the end of 9999")
        #expect(try await serve.get("/healthz").status == 200, "still up")
        #expect(await serve.stop())
    }

    @Test("every route against the sample batch's store: the API equals status --json, /metrics matches the run, no page shows a value")
    func routes() async throws {
        let folder = try temporaryFolder("serve-routes")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, values) = try await Self.sampleStore(folder)
        #expect(values.count >= 25)
        let serve = try await ServeProcess(["--store", store])

        let health = try await serve.get("/healthz"), ready = try await serve.get("/readyz")
        #expect(health.status == 200 && health.body == "ok\n" && ready.status == 200 && ready.body == "ready\n")

        let dashboard = try await serve.get("/")
        #expect(dashboard.status == 200 && dashboard.headers["content-type"] == "text/html; charset=utf-8")
        #expect(dashboard.headers["cache-control"] == "no-store")
        #expect(dashboard.headers["content-security-policy"]?.hasPrefix("default-src 'none'; script-src 'self'") == true)
        #expect(dashboard.headers["x-content-type-options"] == "nosniff" && dashboard.headers["x-frame-options"] == "DENY")
        for id in Self.sampleIds { #expect(dashboard.body.contains(">\(id)</a>"), "\(id) on the dashboard") }
        #expect(dashboard.body.contains(#"data-count="COMPLETED">6<"#) && dashboard.body.contains(#"data-count="TOTAL">9<"#))
        let completedOnly = try await serve.get("/?state=COMPLETED")
        #expect(completedOnly.body.components(separatedBy: "<tr><td><a href=").count - 1 == 6)
        let searched = try await serve.get("/?search=batch-00")
        #expect(searched.body.components(separatedBy: "<tr><td><a href=").count - 1 == 9)
        #expect(try await serve.get("/?search=batch-004").body.components(separatedBy: "<tr><td><a href=").count - 1 == 1)
        #expect(try await serve.get("/?state=bogus").status == 400)

        let page = try await serve.get("/transactions/txn-batch-001")
        #expect(page.status == 200 && page.body.contains("PROCESS → COMPLETED") && page.body.contains(#"<ol class="timeline">"#))
        #expect(page.body.contains("<dt>data</dt><dd>sealed</dd>"), "\(page.body)")
        #expect(!dashboard.body.contains("Older transactions"))
        #expect(try await serve.get("/?state=COMPLETED").body.contains("Older transactions") == false)
        #expect(try await serve.get("/transactions/txn-batch-404").status == 404)
        #expect(try await serve.get("/assets/view.js").status == 200)

        // The API: each transaction byte for byte as status --json prints it (the command once, the presentation module
        // it prints with for the rest); the list in pages that cover it once.
        let statuses = try await InProcess.statuses(store, Self.sampleIds)
        for (index, id) in Self.sampleIds.enumerated() {
            let api = try await serve.get("/api/transactions/\(id)")
            #expect(api.status == 200 && api.headers["content-type"] == "application/json")
            #expect(api.body == statuses[2 * index + 1] + "\n", "\(id)")
        }
        let status = try await CLIRunner.run(["status", Self.sampleIds[0], "--json", "--store", store])
        #expect(status.stdout == statuses[1] + "\n")
        #expect(try await serve.get("/api/transactions/nope").status == 404)
        var listed: [String] = [], after = "", pages = 0
        repeat {
            let answer = try await serve.get("/api/transactions?limit=4" + (after.isEmpty ? "" : "&after=\(after)"))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            for transaction in object["transactions"] as? [[String: Any]] ?? [] {
                let data = try JSONSerialization.data(withJSONObject: transaction, options: [.sortedKeys, .withoutEscapingSlashes])
                listed.append(String(decoding: data, as: UTF8.self))
            }
            after = object["next"] as? String ?? ""
            pages += 1
        } while !after.isEmpty && pages < 10
        #expect(pages == 3)
        let statusList = try await CLIRunner.run(["status", "--json", "--store", store]).lines
        #expect(Set(listed) == Set(statusList) && listed.count == 9)
        let completed = try await serve.get("/api/transactions?state=completed")
        #expect(completed.body.components(separatedBy: "\"transactionId\"").count - 1 == 6)
        #expect(try await serve.get("/api/transactions?limit=0").status == 400)

        // /metrics parses as Prometheus text; its counts are the run's: 9 transactions, 6 completed.
        let metrics = try await serve.get("/metrics")
        #expect(metrics.status == 200 && metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let samples = prometheusSamples(metrics.body)
        #expect(samples[#"verify_transactions{status="COMPLETED"}"#] == 6)
        #expect(DocumentSubmissionStatus.allCases.compactMap { samples["verify_transactions{status=\"\($0.rawValue)\"}"] }.reduce(0, +) == 9)
        #expect(
            metrics.body.split(separator: "\n").allSatisfy {
                $0.hasPrefix("#") || $0.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [0-9.e+-]+$"#, options: .regularExpression) != nil
            })

        // The review queue: the batch's three failed government ids (two refused, one expired), all open.
        let reviewsOpen = try await serve.get("/api/review")
        #expect(reviewsOpen.status == 200 && reviewsOpen.headers["content-type"] == "application/json")
        let queue = try #require(try JSONSerialization.jsonObject(with: Data(reviewsOpen.body.utf8)) as? [String: Any])
        #expect(queue["next"] is NSNull, "\(reviewsOpen.body)")
        let entries = try #require(queue["reviews"] as? [[String: Any]])
        #expect(
            entries.map { "\($0["transactionId"] ?? "-") \($0["documentType"] ?? "-")" }.sorted()
                == ["txn-batch-005 GOVERNMENT_ID", "txn-batch-006 GOVERNMENT_ID", "txn-batch-007 GOVERNMENT_ID"], "\(reviewsOpen.body)")
        #expect(entries.allSatisfy { $0["state"] as? String == "open" && $0["attempt"] as? Int == 1 && $0["failedAt"] is String })
        #expect(
            entries.compactMap { $0["code"] as? String }.sorted()
                == ["documentCaptureError", "documentCaptureError", "documentSubmissionTimeoutError"], "\(reviewsOpen.body)")
        #expect(entries.allSatisfy { ($0["message"] as? String)?.isEmpty == false && $0["expiresAt"] is String && $0["id"] is Int })
        let timedOut = try #require(try await serve.get("/api/review?code=documentSubmissionTimeoutError").body.data(using: .utf8))
        let onlyExpired = try #require(try JSONSerialization.jsonObject(with: timedOut) as? [String: Any])["reviews"] as? [[String: Any]]
        #expect(onlyExpired?.map { $0["transactionId"] as? String } == ["txn-batch-007"])
        let allStates = try await serve.get("/api/review?state=all&limit=2")
        let firstTwo = try #require(try JSONSerialization.jsonObject(with: Data(allStates.body.utf8)) as? [String: Any])
        #expect((firstTwo["reviews"] as? [[String: Any]])?.count == 2 && firstTwo["next"] as? Int == 2, "\(allStates.body)")
        let rest = try await serve.get("/api/review?state=all&limit=2&offset=2")
        #expect(rest.body.hasPrefix(#"{"next":null,"reviews":[{"#), "\(rest.body)")
        #expect(try await serve.get("/api/review?state=closed").status == 400)
        #expect(try await serve.get("/review?state=bogus").status == 400)
        #expect(try await serve.get("/api/review?limit=0").status == 400)
        #expect(try await serve.get("/api/review?limit=501").status == 400)
        #expect(try await serve.get("/api/review?offset=-1").status == 400)
        #expect(try await serve.get("/api/review?state=rejected").body == #"{"next":null,"reviews":[]}"# + "\n")

        // The transaction's report carries its failed document's error and review.
        let refused = try await serve.get("/api/transactions/txn-batch-005")
        let refusedReport = try #require(try JSONSerialization.jsonObject(with: Data(refused.body.utf8)) as? [String: Any])
        let governmentIds = (refusedReport["documents"] as? [[String: Any]] ?? []).filter { $0["documentType"] as? String == "GOVERNMENT_ID" }
        let failed = try #require(governmentIds.first { $0["review"] != nil }, "\(refused.body)")
        #expect((failed["error"] as? [String: Any])?["code"] as? String == "documentCaptureError", "\(refused.body)")
        #expect((failed["review"] as? [String: Any])?["state"] as? String == "open", "\(refused.body)")
        #expect(governmentIds.filter { $0["review"] != nil }.count == 1)

        // The queue's page lists the three, each linking to its transaction; a code filters it.
        let queuePage = try await serve.get("/review")
        #expect(queuePage.status == 200 && queuePage.headers["content-type"] == "text/html; charset=utf-8")
        #expect(queuePage.headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true)
        for id in ["txn-batch-005", "txn-batch-006", "txn-batch-007"] {
            #expect(queuePage.body.contains(#"<a href="/transactions/\#(id)">\#(id)</a>"#), "\(id) in the queue")
        }
        #expect(queuePage.body.components(separatedBy: #"<span class="review review-open">"#).count - 1 == 3)
        let timedOutPage = try await serve.get("/review?code=documentSubmissionTimeoutError")
        #expect(timedOutPage.body.contains(">txn-batch-007</a>") && !timedOutPage.body.contains(">txn-batch-005</a>"))
        #expect(dashboard.body.contains(#"<span class="value" id="reviews-open">3</span>"#), "the overview counts them")
        let failedPage = try await serve.get("/transactions/txn-batch-006")
        #expect(failedPage.body.contains("<h2>Reviews</h2>") && failedPage.body.contains("documentCaptureError"))

        // /metrics: the store's open reviews and failed documents by code.
        #expect(samples["verify_reviews_open"] == 3, "\(metrics.body)")
        #expect(samples[#"verify_reviews_open_by_code{code="documentCaptureError"}"#] == 2)
        #expect(samples[#"verify_store_failed_documents_total{code="documentSubmissionTimeoutError"}"#] == 1)
        #expect(metrics.body.components(separatedBy: "# TYPE verify_reviews_open gauge").count == 2)

        // No page or answer shows a document value.
        var shown = dashboard.body + page.body + metrics.body + reviewsOpen.body + allStates.body + rest.body + queuePage.body
        for id in Self.sampleIds {
            shown += try await serve.get("/transactions/\(id)").body + (try await serve.get("/api/transactions/\(id)").body)
        }
        let leaked = values.filter { shows(shown, $0) }
        #expect(leaked.isEmpty, "\(leaked.count) document values shown")
        #expect(await serve.stop())
    }

    @Test("an id holding <script> is escaped; a bind beyond loopback needs a token, which every request but /healthz must carry")
    func hostileIdAndTokens() async throws {
        let folder = try temporaryFolder("serve-hostile")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let hostile = "<script>alert(1)</script>\"'&"
        let store = try await TransactionStore.sqlite(path: path)
        _ = try await store.openTransaction(
            NewTransaction(
                id: hostile, verificationCode: "c", policy: [.governmentId: .required],
                createdAt: Date(), expiresAt: Date().addingTimeInterval(600)))
        let serve = try await ServeProcess(["--store", "sqlite:" + path])
        let dashboard = try await serve.get("/")
        #expect(dashboard.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(dashboard.body)")
        #expect(!dashboard.body.contains("<script>alert"))
        let page = try await serve.get("/transactions/%3Cscript%3Ealert(1)%3C%2Fscript%3E%22'%26")
        #expect(page.status == 200 && page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !page.body.contains("<script>alert"))
        #expect(await serve.stop())

        let open = try await CLIRunner.run(["serve", "--bind", "0.0.0.0:0", "--store", "sqlite:" + path])
        #expect(open.status == 2 && open.stderr.split(separator: "\n").count == 1 && open.stderr.contains("needs a bearer token"), "\(open.stderr)")
        let unset = try await CLIRunner.run(["serve", "--bind", "0.0.0.0:0", "--token-env", "SERVE_TEST_TOKEN", "--store", "sqlite:" + path])
        #expect(unset.status == 2 && unset.stderr.contains("SERVE_TEST_TOKEN (--token-env) is not set"))

        let token = "t0k3n-\(UUID().uuidString)"
        let guarded = try await ServeProcess(
            ["--token-env", "SERVE_TEST_TOKEN", "--store", "sqlite:" + path],
            environment: ["SERVE_TEST_TOKEN": token])
        #expect(try await guarded.get("/api/overview").status == 401)
        let unsigned = try await guarded.get("/")  // a page: sent on to the login form
        #expect(unsigned.status == 200 && unsigned.body.contains(#"<form method="post" action="/login">"#) && !unsigned.body.contains("txn"))
        #expect(try await guarded.get("/metrics", token: "wrong").status == 401)
        #expect(try await guarded.get("/", token: token).status == 200)
        #expect(try await guarded.get("/healthz").status == 200)
        #expect(await guarded.stop())
        #expect(!guarded.process.stderr.contains(token))
    }

    /// One HTTP/1.1 request written as given (any Host header, any method) on a fresh connection, from the loopback
    /// address `source`; the answer's status code and body.
    static func raw(_ port: Int, _ request: String, keepHead: Bool = false, from source: String = "127.0.0.1") async throws -> (
        status: Int, body: String
    ) {
        try await offCooperativePool { () throws -> (Int, String) in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw CocoaError(.fileReadUnknown) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw CocoaError(.fileReadUnknown) }
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            var answer = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count <= 0 { break }
                answer += buffer[0..<count]
            }
            let text = String(decoding: answer, as: UTF8.self)
            let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
            let body = keepHead ? text : text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            return (status, body)
        }
    }

    @Test(
        "token-less loopback: only loopback Host names answered, HEAD /healthz, NUL in search or id, stored controls shown escaped; a token's scheme in any case"
    )
    func loopbackHardening() async throws {
        let folder = try temporaryFolder("serve-loopback")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        // A folder name (the transaction id here) with a right-to-left override, BEL and ESC.
        let controlled = "txn-\u{202E}gpj.exe-\u{7}\u{1B}[2J"
        let store = try await TransactionStore.sqlite(path: path)
        _ = try await store.openTransaction(
            NewTransaction(
                id: controlled, verificationCode: "c", policy: [.governmentId: .required],
                createdAt: Date(), expiresAt: Date().addingTimeInterval(600)))
        let serve = try await ServeProcess(["--store", "sqlite:" + path])
        let port = try #require(serve.base.port)
        func get(_ path: String, host: String, method: String = "GET") async throws -> (status: Int, body: String) {
            try await Self.raw(port, "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
        }
        for host in ["localhost", "127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", "127.9.9.9"] {
            #expect(try await get("/api/overview", host: host).status == 200, "\(host)")
        }
        for host in ["rebound.example", "rebound.example:\(port)", "127.0.0.1.nip.io", "127.attacker.example"] {
            #expect(try await get("/api/overview", host: host).status == 421, "\(host)")
        }
        #expect(try await get("/healthz", host: "localhost", method: "HEAD").status == 200)
        #expect(try await serve.get("/?search=a%00b").status == 400)
        #expect(try await serve.get("/api/transactions?search=%00").status == 400)
        #expect(try await serve.get("/api/transactions/a%00b").status == 404)
        #expect(try await serve.get("/transactions/a%00b").status == 404)

        let dashboard = try await serve.get("/")
        #expect(dashboard.body.contains(#"txn-\u{202E}gpj.exe-\u{7}\u{1B}[2J"#), "\(dashboard.body)")
        #expect(!dashboard.body.contains("\u{202E}") && !dashboard.body.contains("\u{7}") && !dashboard.body.contains("\u{1B}"))
        #expect(dashboard.body.contains(#"<tbody id="rows" data-limit="50">"#), "the script polls as many rows as were served")
        let page = try await serve.get("/transactions/" + controlled.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        #expect(page.status == 200 && page.body.contains(#"\u{202E}"#) && !page.body.contains("\u{202E}"))
        #expect(await serve.stop())

        let token = "t0k3n-\(UUID().uuidString)"
        let guarded = try await ServeProcess(
            ["--token-env", "SERVE_TEST_TOKEN", "--store", "sqlite:" + path],
            environment: ["SERVE_TEST_TOKEN": token])
        let guardedPort = try #require(guarded.base.port)
        for scheme in ["Bearer", "bearer", "BEARER"] {
            let answer = try await Self.raw(
                guardedPort, "GET /api/overview HTTP/1.1\r\nHost: x\r\nAuthorization: \(scheme) \(token)\r\nConnection: close\r\n\r\n")
            #expect(answer.status == 200, "\(scheme)")
        }
        #expect(
            try await Self.raw(guardedPort, "GET /api/overview HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(token)\r\nConnection: close\r\n\r\n")
                .status == 401)
        #expect(await guarded.stop())

        // A host name that starts with 127. is not loopback: it needs a token like any other address.
        let named = try await CLIRunner.run(["serve", "--bind", "127.attacker.example:0", "--store", "sqlite:" + path])
        #expect(named.status == 2 && named.stderr.contains("needs a bearer token"), "\(named.stderr)")
    }

    @Test(
        "with a token, a browser signs in once: /login takes the token and sets an HttpOnly, SameSite=Strict session cookie that opens the pages and the API"
    )
    func browserLogin() async throws {
        let folder = try temporaryFolder("serve-login")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, _) = try await Self.sampleStore(folder)
        let token = "t0k3n-\(UUID().uuidString)"
        let serve = try await ServeProcess(["--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: ["SERVE_TEST_TOKEN": token])
        let port = try #require(serve.base.port)
        func send(_ lines: [String], body: String = "") async throws -> (status: Int, head: String, body: String) {
            let request =
                lines.joined(separator: "\r\n") + "\r\nHost: localhost\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            let answer = try await Self.rawWithHead(port, request)
            return answer
        }
        // A page without a token or cookie goes to the login form; the API says 401.
        let page = try await send(["GET / HTTP/1.1"])
        #expect(page.status == 303 && page.head.contains("\r\nlocation: /login"), "\(page.head)")
        #expect(try await send(["GET /api/overview HTTP/1.1"]).status == 401)
        let form = try await send(["GET /login HTTP/1.1"])
        #expect(form.status == 200 && form.body.contains(#"<form method="post" action="/login">"#))
        // A wrong token: 401, no cookie.
        let wrong = try await send(["POST /login HTTP/1.1", "Content-Type: application/x-www-form-urlencoded"], body: "token=nope")
        #expect(wrong.status == 401 && !wrong.head.lowercased().contains("set-cookie"))
        // The token: a session cookie, HttpOnly and SameSite=Strict, and back to the dashboard.
        let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let signedIn = try await send(["POST /login HTTP/1.1", "Content-Type: application/x-www-form-urlencoded"], body: "token=\(encoded)")
        #expect(signedIn.status == 303 && signedIn.head.contains("\r\nlocation: /"))
        let setCookie = try #require(signedIn.head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("set-cookie: ") })
        #expect(setCookie.contains("; HttpOnly") && setCookie.contains("; SameSite=Strict") && setCookie.contains("; Path=/"))
        #expect(!setCookie.contains(token), "the cookie is not the token")
        let cookie = String(setCookie.dropFirst("set-cookie: ".count).prefix { $0 != ";" })
        let dashboard = try await send(["GET / HTTP/1.1", "Cookie: \(cookie)"])
        #expect(dashboard.status == 200 && dashboard.body.contains(">txn-batch-001</a>"))
        #expect(try await send(["GET /api/overview HTTP/1.1", "Cookie: \(cookie)"]).status == 200)
        // A cookie changed in any way opens nothing.
        let value = cookie.dropFirst("verify_session=".count)
        let flipped = String(value.dropLast()) + (value.last == "A" ? "B" : "A")
        for forged in ["verify_session=" + flipped, cookie + "x", "verify_session=" + value.dropLast(), "verify_session=1.AAAA"] {
            #expect(try await send(["GET /api/overview HTTP/1.1", "Cookie: \(forged)"]).status == 401, "\(forged)")
        }
        #expect(await serve.stop())
        let renewed = try await ServeProcess(["--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: ["SERVE_TEST_TOKEN": token + "-new"])
        let renewedPort = try #require(renewed.base.port)
        let old = try await Self.rawWithHead(
            renewedPort, "GET /api/overview HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\nConnection: close\r\n\r\n")
        #expect(old.status == 401, "a new token ends every session")
        #expect(await renewed.stop())
        #expect(!serve.process.stderr.contains(token))
    }

    /// As `raw`, with the answer's head (status line and headers, names lower-cased) besides its body.
    static func rawWithHead(_ port: Int, _ request: String, from source: String = "127.0.0.1") async throws -> (
        status: Int, head: String, body: String
    ) {
        let answer = try await raw(port, request, keepHead: true, from: source)
        let parts = answer.body.components(separatedBy: "\r\n\r\n")
        let head = parts[0].components(separatedBy: "\r\n").enumerated().map { index, line in
            guard index > 0, let colon = line.firstIndex(of: ":") else { return line }
            return line[..<colon].lowercased() + line[colon...]
        }.joined(separator: "\r\n")
        return (answer.status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// Debian's chromium, which scripts/test installs.
    static func chromium(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await offCooperativePool { try chromiumBlocking(arguments) }
    }

    private static func chromiumBlocking(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chromium")
        process.arguments =
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--user-data-dir=" + FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID())").path
            ] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("a real browser on a store of 60 transactions: the script's poll keeps the 50 rows the server rendered")
    func browserKeepsEveryRow() async throws {
        let folder = try temporaryFolder("serve-rows")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let store = try await TransactionStore.sqlite(path: path)
        let start = Date()
        for n in 0..<60 {
            let at = start.addingTimeInterval(Double(n))
            _ = try await store.openTransaction(
                NewTransaction(
                    id: String(format: "rows-%02d", n), verificationCode: "c", policy: [.email: .required],
                    createdAt: at, expiresAt: at.addingTimeInterval(600)))
        }
        let serve = try await ServeProcess(["--store", "sqlite:" + path])
        let dashboard = try await Self.chromium(["--virtual-time-budget=7000", "--dump-dom", serve.base.absoluteString + "/"])
        #expect(dashboard.output.contains(#"<tbody id="rows" data-limit="50" data-refreshed="50">"#), "\(dashboard.output)")
        #expect(dashboard.output.components(separatedBy: "<tr>").count - 1 == 51, "a header row and 50 rows")
        #expect(dashboard.output.contains(">rows-10</a>") && !dashboard.output.contains(">rows-09</a>"), "the newest 50")
        #expect(await serve.stop())
    }

    @Test("a real browser: headless Chromium renders the dashboard and a transaction page, the script keeps the table")
    func browser() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "scripts/test installs Debian's chromium")
        let folder = try temporaryFolder("serve-browser")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, values) = try await Self.sampleStore(folder)
        let serve = try await ServeProcess(["--store", store])
        // Long enough for the page's script to poll and rebuild the table at least once.
        let dashboard = try await Self.chromium(["--virtual-time-budget=7000", "--dump-dom", serve.base.absoluteString + "/"])
        #expect(dashboard.status == 0)
        for id in Self.sampleIds { #expect(dashboard.output.contains(">\(id)</a>"), "\(id) in the rendered dashboard") }
        #expect(dashboard.output.contains(#"<span class="status status-COMPLETED">COMPLETED</span>"#))
        #expect(dashboard.output.contains(#"<span class="status status-NOT_STARTED">NOT_STARTED</span>"#))
        #expect(dashboard.output.contains(#"data-count="COMPLETED">6<"#))
        // The page's script polled the API and rebuilt the table from it.
        #expect(dashboard.output.contains(#"<tbody id="rows" data-limit="50" data-refreshed="9">"#), "\(dashboard.output)")
        let page = try await Self.chromium(["--dump-dom", serve.base.absoluteString + "/transactions/txn-batch-004"])
        #expect(page.output.contains("txn-batch-004") && page.output.contains("PROCESS → COMPLETED") && page.output.contains("GOVERNMENT_ID"))
        #expect(values.filter { shows(dashboard.output, $0) || shows(page.output, $0) }.isEmpty)
        // After the script's polls: badges in the server's order (DocumentType's), times in words with the exact one
        // on hover, the throughput chart drawn.
        #expect(
            dashboard.output.contains(
                #"GOVERNMENT_ID PROCESSED</span> <span class="doc doc-PROCESSED">SELFIE PROCESSED</span> <span class="doc doc-PROCESSED">EMAIL PROCESSED"#
            ), "badge order after a refresh")
        #expect(dashboard.output.contains(#"ago</time>"#) && dashboard.output.contains(#"<time datetime="20"#))
        // The chart: a bar a minute for the last hour, the sample's 12 collected documents in the last minute or two.
        let chart = try #require(dashboard.output.firstMatch(of: #/<svg id="throughput"[^>]*>(.*?)</svg>/#)).output.1
        #expect(chart.components(separatedBy: "<rect").count - 1 == 60, "\(chart)")
        let drawn = chart.matches(of: #/<title>(\d+) documents/#).map { Int($0.output.1)! }
        #expect(drawn.reduce(0, +) == 12, "\(drawn)")
        // The sample's expired transaction carries the badge.
        #expect(page.output.contains(#"<span class="badge expired">expired</span>"#) == false)
        let expired = try await Self.chromium(["--dump-dom", serve.base.absoluteString + "/transactions/txn-batch-007"])
        #expect(expired.output.contains(#"<span class="badge expired">expired</span>"#))
        // Screenshots (scripts/screenshots keeps them in docs/screenshots): the overview, a transaction, an error page,
        // and the sign-in page of a server with a token.
        let signIn = try await ServeProcess(
            ["--store", store, "--token-env", "SCREENSHOT_TOKEN"], environment: ["SCREENSHOT_TOKEN": Self.strongToken])
        let shots = ProcessInfo.processInfo.environment["VERIFY_PIPELINE_SCREENSHOTS"].map(URL.init(fileURLWithPath:)) ?? folder
        for (name, url) in [
            ("dashboard.png", serve.base.absoluteString + "/"), ("transaction.png", serve.base.absoluteString + "/transactions/txn-batch-005"),
            ("error.png", serve.base.absoluteString + "/transactions/txn-none"), ("sign-in.png", signIn.base.absoluteString + "/login")
        ] {
            let file = shots.appendingPathComponent(name)
            _ = try await Self.chromium([
                "--virtual-time-budget=16000", "--window-size=1280,900", "--hide-scrollbars", "--screenshot=\(file.path)", url
            ])
            let png = try Data(contentsOf: file)
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000, "\(name): \(png.count) bytes")
        }
        #expect(await signIn.stop())
        #expect(await serve.stop())
    }

    @Test("worker --metrics-bind: items taken over from a killed worker count as lease expiries; its document counter equals its output")
    func workerMetrics() async throws {
        let store = try await freshPostgresStore()
        let folder = try temporaryFolder("serve-worker-metrics")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<20).map { "lease-\($0)" }, phone: false)
        let pipeline = try pipelineFile(
            folder, "policy:\n  documents: {EMAIL: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, PHONE: DISABLED}\n")
        #expect(try await CLIRunner.run(["enqueue", batch.path, "--store", store, "--pipeline", pipeline]).status == 0)
        // The first worker claims a handful, prints one result and dies holding the rest.
        let doomed = try InteractiveProcess(["worker", "--lease-seconds", "2", "--store", store, "--pipeline", pipeline])
        #expect(await doomed.nextLine() != nil)
        kill(doomed.process.processIdentifier, SIGKILL)
        #expect(await doomed.waitForExit())
        // What the dead worker finished is done for good; the rest is the survivor's.
        let done =
            Int(try await TestPostgres.text(store, "SELECT count(*)::text FROM work_items WHERE kind = 'document' AND state = 'DONE'") ?? "") ?? -1
        #expect(done >= 0 && done <= 20)
        let survivor = try InteractiveProcess([
            "worker", "--lease-seconds", "2", "--store", store, "--pipeline", pipeline,
            "--metrics-bind", "127.0.0.1:0"
        ])
        defer { kill(survivor.process.processIdentifier, SIGKILL) }
        // Until the queue is done, read from the worker's own metrics (state, not silence): the dead worker's
        // items come free once their 2-second leases run out.
        let port = try await announcedPort(survivor)
        var printed = 0
        var samples: [String: Double] = [:]
        let deadline = Date().addingTimeInterval(90)
        repeat {
            while await survivor.nextLine(timeout: 0.5) != nil { printed += 1 }
            let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
            samples = prometheusSamples(String(decoding: data, as: UTF8.self))
        } while (samples[#"verify_transactions{status="COMPLETED"}"#] != 20
            || samples.filter { $0.key.hasPrefix("verify_documents_total{") }.values.reduce(0, +) != Double(printed))
            && Date() < deadline
        // The dead worker's printed documents whose items it had not yet marked done are redone: between the items
        // it left and all 20.
        #expect(printed >= 20 - done && printed <= 20, "the dead worker finished \(done)")
        #expect((samples["verify_work_lease_expiries_total"] ?? 0) >= 1, "\(samples.filter { $0.key.contains("lease") })")
        #expect(samples.filter { $0.key.hasPrefix("verify_documents_total{") }.values.reduce(0, +) == Double(printed))
        #expect(samples[#"verify_transactions{status="COMPLETED"}"#] == 20)
        kill(survivor.process.processIdentifier, SIGTERM)
        #expect(await survivor.waitForExit(timeout: 20))
    }

    @Test("stream --metrics-bind: /metrics while it runs, its document counters equal the run's summary")
    func streamMetrics() async throws {
        let folder = try temporaryFolder("serve-metrics")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let stream = try InteractiveProcess(["stream", "--store", store, "--metrics-bind", "127.0.0.1:0"])
        defer { kill(stream.process.processIdentifier, SIGKILL) }
        let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=metrics-1&code=C1"
        stream.write(#"{"id":"a","qr":"\#(qr)","type":"EMAIL","email":"m1@example.com"}"#)
        stream.write(#"{"id":"b","transactionId":"metrics-1","type":"PHONE","phone":"+1 555 0100"}"#)
        stream.write(#"{"id":"c","qr":"not a url","type":"EMAIL","email":"x@example.com"}"#)
        for _ in 0..<3 { #expect(await stream.nextLine() != nil) }
        let port = try await announcedPort(stream)
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        let text = String(decoding: data, as: UTF8.self)
        let samples = prometheusSamples(text)
        // Every family a running pipeline made has its help text (swift-metrics gives none: /metrics adds it).
        let families = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) }
        #expect(families.count >= 8 && families.contains("verify_stage_duration_seconds"), "\(families)")
        for family in families { #expect(text.contains("# HELP \(family) "), "\(family) has no HELP:\n\(text)") }
        let documents = samples.filter { $0.key.hasPrefix("verify_documents_total{") }
        #expect(documents.values.reduce(0, +) == 3, "\(documents)")
        #expect(documents.filter { $0.key.contains(#"outcome="failed""#) }.values.reduce(0, +) == 1)
        #expect(
            samples[#"verify_documents_total{outcome="processed",type="EMAIL"}"#] == 1
                || samples[#"verify_documents_total{type="EMAIL",outcome="processed"}"#] == 1, "\(documents)")
        #expect(samples.keys.contains { $0.hasPrefix(#"verify_stage_duration_seconds_count{stage="track"}"#) })
        #expect(samples[#"verify_transactions{status="STARTED"}"#] == 1 || samples[#"verify_transactions{status="PROCESS"}"#] == 1)
        stream.closeInput()
        #expect(await stream.waitForExit(timeout: 30))
        #expect(stream.stderr.contains("3 documents (1 failed, 0 already submitted), 1 transaction"), "\(stream.stderr)")
    }
}

/// Signing in to the operator's view: the token's strength, wrong tokens throttled, sessions kept in the store.
extension ServeCommandTests {
    static let strongToken = "t0k3n-\(UUID().uuidString)"

    /// `POST /login` with `token`, from `source`: the answer, and the session cookie (`name=value`) it set.
    static func signIn(_ port: Int, _ token: String, from source: String = "127.0.0.1") async throws -> (
        status: Int, head: String, cookie: String?
    ) {
        let body = "token=" + token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let answer = try await rawWithHead(
            port,
            "POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)", from: source)
        let cookie = answer.head.components(separatedBy: "\r\n").first { $0.hasPrefix("set-cookie: verify_session=") }
            .map { String($0.dropFirst("set-cookie: ".count).prefix { $0 != ";" }) }
        return (answer.status, answer.head, cookie)
    }

    static func overview(_ port: Int, cookie: String) async throws -> Int {
        try await raw(port, "GET /api/overview HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\nConnection: close\r\n\r\n").status
    }

    @Test("a weak token is refused at start: exit 2, one line naming the variable, never the value")
    func weakToken() async throws {
        let folder = try temporaryFolder("serve-weak-token")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        for weak in ["1", "abc", "s3cr3t-but-short-9f8e7d6c", String(repeating: "Qx7!", count: 10), String(repeating: "z", count: 40) + "Qx7"] {
            // A process, not a run to its end: a serve that takes the token would serve until it is stopped.
            let serve = try InteractiveProcess(
                ["serve", "--bind", "127.0.0.1:0", "--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: ["SERVE_TEST_TOKEN": weak])
            let exited = await serve.waitForExit(timeout: 30)
            if !exited { kill(serve.process.processIdentifier, SIGKILL) }
            #expect(exited && serve.process.terminationStatus == 2, "\(weak.count) characters: \(serve.stderr)")
            #expect(serve.stderr.split(separator: "\n").count == 1 && serve.stderr.contains("SERVE_TEST_TOKEN (--token-env) is too weak"))
            #expect(!serve.stderr.contains(weak), "the message quotes the token")
        }
    }

    @Test("--token-env naming a variable that holds a store secret (the store key's, PGPASSWORD) is refused, naming it")
    func tokenFromStoreSecret() async throws {
        let folder = try temporaryFolder("serve-secret-token")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        for (variable, extra) in [("VERIFY_PIPELINE_STORE_KEY", [String]()), ("PGPASSWORD", []), ("OTHER_KEY", ["--key-env", "OTHER_KEY"])] {
            let serve = try InteractiveProcess(
                ["serve", "--bind", "127.0.0.1:0", "--token-env", variable, "--store", store] + extra,
                environment: [variable: Self.strongToken])
            let exited = await serve.waitForExit(timeout: 30)
            if !exited { kill(serve.process.processIdentifier, SIGKILL) }
            #expect(exited && serve.process.terminationStatus == 2, "\(variable): \(serve.stderr)")
            #expect(serve.stderr.contains("--token-env names \(variable), which holds a store secret"), "\(serve.stderr)")
            #expect(!serve.stderr.contains(Self.strongToken))
        }
    }

    @Test("wrong tokens are throttled per client: the sixth gets 429 with Retry-After, right or wrong; from another address the right token signs in")
    func throttledSignIn() async throws {
        let folder = try temporaryFolder("serve-throttle")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        _ = try await TransactionStore.sqlite(path: folder.appendingPathComponent("s.sqlite").path)
        let serve = try await ServeProcess(["--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: ["SERVE_TEST_TOKEN": Self.strongToken])
        let port = try #require(serve.base.port)
        for attempt in 1...5 { #expect(try await Self.signIn(port, "guess-\(attempt)").status == 401, "attempt \(attempt)") }
        let held = try await Self.signIn(port, "guess-6")
        #expect(held.status == 429 && held.head.contains("\r\nretry-after: "), "\(held.head)")
        // Held back, the right token is not even compared: guessing learns nothing while it lasts.
        let right = try await Self.signIn(port, Self.strongToken)
        #expect(right.status == 429 && right.cookie == nil)
        #expect(try await serve.get("/api/overview", token: Self.strongToken).status == 429)
        // Another client is not held back by these failures.
        let other = try await Self.signIn(port, Self.strongToken, from: "127.0.0.2")
        #expect(other.status == 303 && other.cookie != nil, "\(other.head)")
        #expect(try await Self.overview(port, cookie: try #require(other.cookie)) == 200)
        #expect(await serve.stop())
        #expect(!serve.process.stderr.contains(Self.strongToken))
    }

    @Test(
        "sessions are the store's: a second serve and a restart take the cookie, POST /logout ends it for both, a new token opens none, the store keeps no cookie",
        arguments: SampleStore.allCases)
    func storedSessions(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("serve-sessions")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await kind.fresh(folder, "s")
        try await StoreLocation.resolve(option: store).withStore(create: true) { _ in }
        let environment = ["SERVE_TEST_TOKEN": Self.strongToken]
        let first = try await ServeProcess(["--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: environment)
        let second = try await ServeProcess(["--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: environment)
        let firstPort = try #require(first.base.port), secondPort = try #require(second.base.port)
        let cookie = try #require(try await Self.signIn(firstPort, Self.strongToken).cookie)
        let value = String(cookie.dropFirst("verify_session=".count))
        #expect(value.count == 43 && !value.contains("."), "a random id: nothing of an expiry or a signature")
        #expect(try await Self.overview(firstPort, cookie: cookie) == 200)
        #expect(try await Self.overview(secondPort, cookie: cookie) == 200, "another serve on the store takes it")

        // The store keeps one row for it, and not the cookie's value.
        let rows: [String]
        switch kind {
        case .sqlite:
            let database = try DatabaseQueue(path: String(store.dropFirst("sqlite:".count)))
            rows = try await database.read { db in try String.fetchAll(db, sql: "SELECT idHash || ' ' || expiresAt FROM operatorSessions") }
            try database.close()
        case .postgres:
            rows = [try await TestPostgres.text(store, "SELECT string_agg(id_hash || ' ' || expires_at::text, ',') FROM operator_sessions") ?? ""]
        }
        #expect(rows.count == 1 && rows[0].count > 64 && !rows[0].contains(value), "\(rows)")

        // A restart keeps it; a new token opens none.
        #expect(await first.stop())
        let restarted = try await ServeProcess(["--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: environment)
        let restartedPort = try #require(restarted.base.port)
        #expect(try await Self.overview(restartedPort, cookie: cookie) == 200, "a restart keeps the session")
        let renewed = try await ServeProcess(
            ["--token-env", "SERVE_TEST_TOKEN", "--store", store], environment: ["SERVE_TEST_TOKEN": Self.strongToken + "-new"])
        #expect(try await Self.overview(try #require(renewed.base.port), cookie: cookie) == 401, "a new token ends every session")
        #expect(await renewed.stop())

        // Signed out on one: ended on every serve of the store, pages included.
        let out = try await Self.rawWithHead(
            secondPort, "POST /logout HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(out.status == 303 && out.head.contains("Max-Age=0"))
        #expect(try await Self.overview(secondPort, cookie: cookie) == 401)
        #expect(try await Self.overview(restartedPort, cookie: cookie) == 401)
        let page = try await Self.rawWithHead(restartedPort, "GET / HTTP/1.1\r\nHost: localhost\r\nCookie: \(cookie)\r\nConnection: close\r\n\r\n")
        #expect(page.status == 303 && page.head.contains("\r\nlocation: /login"))
        #expect(await second.stop())
        #expect(await restarted.stop())
    }
}
