import BlockingWaits
import Foundation
import Testing

@testable import TransactionStore

/// Connections opened on loopback and left idle, as a client holding them would.
final class IdleConnections: @unchecked Sendable {
    private(set) var descriptors: [Int32] = []

    init(port: Int, count: Int) throws {
        // The test process needs more than the usual 1,024 descriptors too.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw CocoaError(.fileWriteOutOfSpace) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { close(fd); throw CocoaError(.fileReadUnknown) }
            descriptors.append(fd)
        }
    }

    /// How many the server has closed (a read returns end of file), waiting up to `timeout` seconds for it.
    func closedByServer(timeout: Double) -> Int {
        var pending = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let deadline = Date().addingTimeInterval(timeout)
        var closed = 0
        while !pending.isEmpty, Date() < deadline {
            _ = poll(&pending, nfds_t(pending.count), 200)
            var still: [pollfd] = []
            for entry in pending {
                if entry.revents != 0 {
                    var byte: UInt8 = 0
                    if recv(entry.fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { closed += 1; continue }
                }
                still.append(pollfd(fd: entry.fd, events: Int16(POLLIN), revents: 0))
            }
            pending = still
        }
        return closed
    }

    func closeAll() {
        for fd in descriptors { close(fd) }
        descriptors = []
    }
}

@Suite("Connections held open against the operator's server", .serialized)
struct ConnectionLoadTests {
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
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        #expect(try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--omit-images"]).status == 1)
        let serve = try await ServeProcess(["--store", store, "--idle-timeout", "3"])
        let port = try #require(serve.base.port)
        let clock = ContinuousClock(), opened = clock.now
        let idle = try await offCooperativePool { try IdleConnections(port: port, count: 2_000) }
        defer { idle.closeAll() }
        var slowest = Duration.zero
        for _ in 0..<10 {
            slowest = max(slowest, try await Self.healthz(port))
            let api = try await serve.get("/api/overview")
            #expect(api.status == 200)
        }
        print("[2,000 idle] slowest /healthz \(slowest)")
        #expect(slowest < .seconds(1))
        #expect(serve.process.process.isRunning)
        let closed = await offCooperativePool { idle.closedByServer(timeout: 60) }
        let after = clock.now - opened
        print("[2,000 idle] \(closed) closed by the server \(after) after they were opened")
        #expect(closed == 2_000)
        #expect(after >= .seconds(3), "not before the idle timeout")
        #expect(try await Self.healthz(port) < .seconds(1))
        #expect(await serve.stop())
    }

    @Test("beyond --max-connections a new connection is closed as it arrives; one is admitted again once others close")
    func connectionCap() async throws {
        let folder = try temporaryFolder("serve-cap")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("s.sqlite").path
        #expect(try await CLIRunner.run(["run", "Samples/batch", "--store", store, "--omit-images"]).status == 1)
        let serve = try await ServeProcess(["--store", store, "--max-connections", "50", "--idle-timeout", "600"])
        let port = try #require(serve.base.port)
        let held = try await offCooperativePool { try IdleConnections(port: port, count: 50) }
        let extra = try await offCooperativePool { try IdleConnections(port: port, count: 20) }
        #expect(await offCooperativePool { extra.closedByServer(timeout: 10) } == 20, "each of the 20 beyond 50 closed")
        #expect(await offCooperativePool { held.closedByServer(timeout: 1) } == 0, "the first 50 stay open")
        extra.closeAll()
        held.closeAll()
        // Once they are gone the server answers again (the count went back down).
        var answered = false
        for _ in 0..<100 where !answered {
            answered = (try? await ServeCommandTests.raw(port, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").status) == 200
            if !answered { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(answered)
        #expect(await serve.stop())
    }
}
