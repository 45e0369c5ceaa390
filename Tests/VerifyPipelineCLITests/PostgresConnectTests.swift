import Foundation
import PostgresTestSupport
import Testing

/// CONTRACT §8: a PostgreSQL store that cannot be reached, or refuses the credentials, ends the command with exit 2
/// and a one-line reason without the password, within the connect timeout; TLS follows the URL's sslmode.
@Suite("PostgreSQL: connect timeout, authentication errors, TLS", .serialized)
struct PostgresConnectTests {
    static func timed(_ arguments: [String]) async throws -> (CLIRunner.Outcome, Duration) {
        let start = ContinuousClock.now
        let outcome = try await CLIRunner.run(arguments)
        let elapsed = ContinuousClock.now - start
        print("[\(arguments.last ?? "")] exit \(outcome.status) after \(elapsed): \(outcome.stderr.trimmingCharacters(in: .newlines))")
        return (outcome, elapsed)
    }

    static func expectOneLineExit2(_ outcome: CLIRunner.Outcome, _ elapsed: Duration, within limit: Duration, saying reason: String) {
        #expect(outcome.status == 2)
        #expect(elapsed < limit)
        #expect(outcome.stderr.split(separator: "\n").count == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains(reason), "\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
    }

    @Test("a wrong password: exit 2 within 12 s, the server's reason, no password")
    func wrongPassword() async throws {
        let (address, _) = try TestPostgres.server()
        try await TestPostgres.administer([
            "DROP ROLE IF EXISTS verify_password",
            "CREATE ROLE verify_password LOGIN PASSWORD 'the-right-one'"
        ])
        let (outcome, elapsed) = try await Self.timed(["status", "--store", "postgres://verify_password:Wr0ng-Secret@\(address)/postgres"])
        Self.expectOneLineExit2(outcome, elapsed, within: .seconds(12), saying: "password authentication failed")
        #expect(!outcome.stderr.contains("Wr0ng-Secret") && !outcome.stderr.contains("the-right-one"))
        // The right one gets past the log-in (to an empty database: no store there yet, also exit 2, another reason).
        let (right, _) = try await Self.timed(["status", "--store", "postgres://verify_password:the-right-one@\(address)/postgres"])
        #expect(!right.stderr.contains("password authentication failed"), "\(right.stderr)")
    }

    @Test("no password for a role that needs one: exit 2, one line saying to set PGPASSWORD, no library name")
    func missingPassword() async throws {
        let (address, _) = try TestPostgres.server()
        // The test server asks this role (only) for a password (scripts/postgres-throwaway.sh).
        try await TestPostgres.administer([
            "DO $$ BEGIN CREATE ROLE verify_password LOGIN PASSWORD 'the-right-one'; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        ])
        let (outcome, elapsed) = try await Self.timed(["status", "--store", "postgres://verify_password@\(address)/postgres"])
        Self.expectOneLineExit2(outcome, elapsed, within: .seconds(12), saying: "set PGPASSWORD")
        #expect(!outcome.stderr.contains("authMechanism"), "\(outcome.stderr)")
    }

    @Test("a host name that does not resolve: exit 2, one line saying so, no library name")
    func unresolvableHost() async throws {
        let (outcome, elapsed) = try await Self.timed(["status", "--store", "postgres://postgres@no-such-host.invalid:5432/postgres"])
        Self.expectOneLineExit2(outcome, elapsed, within: .seconds(30), saying: "the host name does not resolve")
        #expect(!outcome.stderr.contains("NIOConnectionError"), "\(outcome.stderr)")
    }

    @Test("a closed port: exit 2 within 12 s, connection refused")
    func closedPort() async throws {
        // Bound and closed again: nobody listens there.
        let (probe, port) = try Self.loopbackSocket(listening: false)
        close(probe)
        let (outcome, elapsed) = try await Self.timed(["status", "--store", "postgres://postgres@127.0.0.1:\(port)/postgres"])
        Self.expectOneLineExit2(outcome, elapsed, within: .seconds(12), saying: "Connection refused")
    }

    @Test("a server that accepts and never answers: exit 2 after connectTimeoutSeconds")
    func silentServer() async throws {
        let (listener, port) = try Self.loopbackSocket(listening: true)
        defer { close(listener) }
        // The kernel completes the TCP handshake; nobody ever reads the startup message.
        let (outcome, elapsed) = try await Self.timed(["status", "--store", "postgres://postgres@127.0.0.1:\(port)/postgres?connectTimeoutSeconds=2"])
        Self.expectOneLineExit2(outcome, elapsed, within: .seconds(12), saying: "no answer within 2 s")
        #expect(elapsed >= .seconds(2))
    }

    @Test("verify-full against the test server's certificate: refused without its CA, a working store with sslrootcert")
    func verifyFull() async throws {
        let certificates = try TestPostgres.certificates()
        let database = try await TestPostgres.freshDatabase(prefix: "tls")
        let (untrusted, elapsed) = try await Self.timed(["status", "--store", database + "?sslmode=verify-full"])
        Self.expectOneLineExit2(untrusted, elapsed, within: .seconds(12), saying: "TLS certificate is not trusted")

        let trusted = database + "?sslmode=verify-full&sslrootcert=\(certificates)/ca.pem"
        let folder = try temporaryFolder("pg-tls")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["tls-1"])
        let run = try await CLIRunner.run(["run", batch.path, "--store", trusted])
        #expect(run.status == 0, "\(run.stderr)")
        let status = try await CLIRunner.run(["status", "tls-1", "--store", trusted, "--json"])
        #expect(status.status == 0)
        #expect(status.stdout.contains(#""EMAIL":"PROCESSED""#), "\(status.stdout)")

        let (badOption, _) = try await Self.timed(["status", "--store", database + "?sslmode=sometimes"])
        #expect(badOption.status == 2)
        #expect(badOption.stderr.contains("sslmode must be one of disable, prefer, require, verify-ca, verify-full"))
    }

    /// A TCP socket bound to a free port on loopback, listening or not.
    static func loopbackSocket(listening: Bool) throws -> (Int32, UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in(
            sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
            sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && (!listening || listen(descriptor, 8) == 0)
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard ready else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
