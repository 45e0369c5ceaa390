import Foundation
import LoopbackServer
import Testing

@testable import TransactionStore

/// Idle connections held by `idle-connections`, a process of its own (thousands of descriptors in the test
/// process would break Foundation's Process.run() in the tests beside it).
struct IdleConnections {
    static let executable: URL? = {
        var folder = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("idle-connections")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }()

    let process: InteractiveProcess

    /// Opens `count` connections to `port` and returns once they are open; `timeout` bounds the wait for their close.
    /// With `slowBody`, each starts a request whose body comes a byte a second and never ends.
    init(port: Int, count: Int, timeout: Int, slowBody: Bool = false) async throws {
        let executable = try #require(Self.executable, "the idle-connections helper is built with the tests")
        process = try InteractiveProcess(
            executable: executable, [String(port), String(count), String(timeout)] + (slowBody ? ["slow-body"] : []))
        let opened = await process.nextLine(timeout: 60)
        try #require(opened == "open \(count)", "\(opened ?? "no answer") \(process.stderr)")
    }

    /// How many the server closed, and when (seconds after they were opened), once all are closed or the timeout passed.
    func closed() async throws -> (count: Int, seconds: Double) {
        let line = try #require(await process.nextLine(timeout: 120), "the helper did not report")
        let parts = line.split(separator: " ")
        return (Int(parts[1]) ?? -1, Double(parts[3]) ?? -1)
    }

    func stop() async {
        kill(process.process.processIdentifier, SIGKILL)
        _ = await process.waitForExit(timeout: 10)
    }
}

@Suite("Connections held open against the operator's server", .serialized)
struct ConnectionLoadTests {
    /// `serve` over a store the sample batch filled, in `folder`.
    static func serveSamples(_ folder: URL, _ arguments: [String]) async throws -> ServeProcess {
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        #expect(try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--omit-images"]).status == 1)
        return try await ServeProcess(["--store", store] + arguments)
    }

    /// The time one /healthz takes on a fresh connection, answered 200.
    static func healthz(_ port: Int) async throws -> Duration {
        let clock = ContinuousClock(), start = clock.now
        let answer = try await ServeCommandTests.raw(port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        #expect(answer.status == 200 && answer.body == "ok\n")
        return clock.now - start
    }

    @Test("2,000 idle connections: /healthz and the API keep answering within 1 s, the process stays up, the idle ones close after --idle-timeout")
    func idleConnections() async throws {
        let folder = try temporaryFolder("serve-load")
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try await Self.serveSamples(folder, ["--idle-timeout", "3"])
        let port = try #require(serve.base.port)
        let idle = try await IdleConnections(port: port, count: 2_000, timeout: 90)
        var times: [Duration] = []
        for _ in 0..<11 {
            times.append(try await Self.healthz(port))
            #expect(try await serve.get("/api/overview").status == 200)
        }
        times.sort()
        print("[2,000 idle] /healthz median \(times[5]), slowest \(times[10])")
        // The median, not the slowest: on 2 cores the rest of the suite runs beside this test, and one poll may
        // wait its turn for the CPU (1.9 s was seen once); alone the slowest is about 50 ms.
        #expect(times[5] < .seconds(1))
        #expect(times[10] < .seconds(10))
        #expect(serve.process.process.isRunning)
        let (closed, seconds) = try await idle.closed()
        print("[2,000 idle] \(closed) closed by the server \(seconds) s after they were opened")
        #expect(closed == 2_000)
        #expect(seconds >= 3, "not before the idle timeout")
        #expect(try await Self.healthz(port) < .seconds(1))
        await idle.stop()
        #expect(await serve.stop())
    }

    @Test(
        "slow request bodies (a byte a second: never idle) holding every place: /healthz takes the place of one, all are closed within --request-timeout"
    )
    func slowBodies() async throws {
        let folder = try temporaryFolder("serve-slow-bodies")
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try await Self.serveSamples(folder, ["--max-connections", "40", "--idle-timeout", "600", "--request-timeout", "3"])
        let port = try #require(serve.base.port)
        let clock = ContinuousClock(), start = clock.now
        let slow = try await IdleConnections(port: port, count: 40, timeout: 30, slowBody: true)
        // Every place is held by a request still coming: a new connection takes the place of the one waiting longest.
        var answered = 0
        for _ in 0..<5 where try await Self.healthz(port) < .seconds(1) { answered += 1 }
        #expect(answered == 5)
        let checked = clock.now - start
        let (closed, seconds) = try await slow.closed()
        print("[40 slow bodies] /healthz answered \(answered) of 5 within \(checked); \(closed) closed \(seconds) s after they were opened")
        #expect(closed == 40, "every slow request's connection is closed")
        // 3 s after its first byte, with room for a loaded machine; without the bound none is closed within 30 s.
        #expect(seconds >= 0 && seconds < 15)
        #expect(try await Self.healthz(port) < .seconds(1))
        await slow.stop()
        #expect(await serve.stop())
    }

    @Test(
        "beyond --max-connections a new connection takes the place of the one idle longest: 20 of 70 closed; one is admitted again once others close"
    )
    func connectionCap() async throws {
        let folder = try temporaryFolder("serve-cap")
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = try await Self.serveSamples(folder, ["--max-connections", "50", "--idle-timeout", "600"])
        let port = try #require(serve.base.port)
        // Each helper reports once all its connections are closed, or after its timeout: long enough for a loaded
        // machine to close the 20 (it does so as they arrive), and what the 50 kept open cost the test.
        let held = try await IdleConnections(port: port, count: 50, timeout: 10)
        let extra = try await IdleConnections(port: port, count: 20, timeout: 10)
        // The server's event loops admit connections side by side, and a new one takes the place of the one idle
        // longest, so which of the 70 are closed is not the order they connected in; how many is.
        let extraClosed = try await extra.closed().count, heldClosed = try await held.closed().count
        print("[cap 50] of 20 extra \(extraClosed) closed; of the first 50 \(heldClosed) closed")
        #expect(extraClosed + heldClosed == 20, "70 connections, 50 allowed: 20 closed as they arrived")
        await extra.stop()
        await held.stop()
        // Once they are gone the server answers again (the count went back down).
        var answered = false
        for _ in 0..<100 where !answered {
            answered = (try? await ServeCommandTests.raw(port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").status) == 200
            if !answered { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(answered)
        #expect(await serve.stop())
    }

    @Test("2,000 idle connections on a running stream's --metrics-bind: its submissions all succeed, /healthz answers, the process stays up")
    func idleConnectionsOnMetrics() async throws {
        let folder = try temporaryFolder("metrics-load")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let pipeline = try pipelineFile(
            folder,
            """
            policy:
              documents: {EMAIL: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, PHONE: DISABLED}
            submitter: {kind: http, endpoint: "\(server.baseURL)/v1", timeoutSeconds: 30}
            """)
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        let stream = try InteractiveProcess([
            "stream", "--store", store, "--pipeline", pipeline, "--metrics-bind", "127.0.0.1:0",
            "--idle-timeout", "600"
        ])
        defer { kill(stream.process.processIdentifier, SIGKILL) }
        let port = try await announcedPort(stream)
        let idle = try await IdleConnections(port: port, count: 2_000, timeout: 2)
        var times: [Duration] = []
        for n in 0..<40 {
            let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=load-\(n)&code=C\(n)"
            stream.write(#"{"id":"l\#(n)","qr":"\#(qr)","type":"EMAIL","email":"load\#(n)@example.com"}"#)
            if n % 4 == 0 { times.append(try await Self.healthz(port)) }
        }
        var completed = 0
        for _ in 0..<40 where await stream.nextLine()?.contains(#""documentSubmissionStatus":"COMPLETED""#) == true { completed += 1 }
        times.sort()
        print("[2,000 idle on --metrics-bind] \(completed) of 40 completed; /healthz median \(times[times.count / 2])")
        #expect(completed == 40, "every submission succeeded: \(stream.stderr)")
        #expect(server.requests.count == 40)
        #expect(times[times.count / 2] < .seconds(1))
        #expect(stream.process.isRunning)
        _ = try await idle.closed()
        await idle.stop()
        stream.closeInput()
        #expect(await stream.waitForExit(timeout: 60))
        #expect(stream.process.terminationStatus == 0, "\(stream.stderr)")
    }
}
