import Foundation
import Testing

/// A PostgreSQL server of a test's own, for faults that would break every other test on the shared one: a restart
/// (`pg_ctl stop -m immediate` then `start`, as a crash and a supervisor's restart would be). On loopback, a random
/// port, trust authentication, data in a temporary folder; stopped and removed by `stop()`. Needs the server's
/// binaries (Debian's postgresql package, which scripts/test installs); cancelled as `TestPostgres.server()` is
/// where a plain `swift test` has no server to offer.
public final class PrivatePostgres: Sendable {
    public let port: Int
    let folder: URL
    let binaries: URL
    /// As root, the server runs as the `postgres` user (initdb refuses root).
    let runAs: [String]

    public var url: String { url(database: "postgres") }
    public func url(database: String) -> String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }
    var data: String { folder.appendingPathComponent("data").path }

    public init() throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last else {
            if ProcessInfo.processInfo.environment[TestPostgres.required] == nil {
                try Test.cancel("needs PostgreSQL's server binaries in /usr/lib/postgresql (scripts/test installs them)")
            }
            throw TestPostgres.NotConfigured(description: "no PostgreSQL server binaries in /usr/lib/postgresql")
        }
        binaries = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("private-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let runAs = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
        self.runAs = runAs
        if getuid() == 0 {
            try Self.run(["/usr/bin/chown", "postgres", folder.path])
        }
        let data = folder.appendingPathComponent("data").path
        try Self.run(runAs + [binaries.appendingPathComponent("initdb").path, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        // A port below the kernel's ephemeral range (32768-60999 by default), so that no client socket of another test
        // (the load tests open thousands) holds it; another server's random choice can, so a taken one is tried again.
        var started: Int?
        var failure: (any Error)?
        for _ in 0..<5 where started == nil {
            let candidate = Int.random(in: 20_000...32_000)
            do {
                try Self.start(runAs: runAs, binaries: binaries, data: data, folder: folder, port: candidate)
                started = candidate
            } catch {
                failure = error
            }
        }
        guard let started else { throw failure ?? CommandFailed(description: "the server did not start") }
        port = started
    }

    /// Starts the server and waits until it accepts connections (`pg_ctl -w`).
    public func start() throws {
        try Self.start(runAs: runAs, binaries: binaries, data: data, folder: folder, port: port)
    }

    static func start(runAs: [String], binaries: URL, data: String, folder: URL, port: Int) throws {
        try run(
            runAs + [
                binaries.appendingPathComponent("pg_ctl").path, "-D", data, "-l", folder.appendingPathComponent("log").path, "-w",
                "-o", "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", "start"
            ])
    }

    /// Stops the server at once, as a crash would: no session is told, no checkpoint is written.
    public func crash() throws {
        try Self.run(runAs + [binaries.appendingPathComponent("pg_ctl").path, "-D", data, "-m", "immediate", "-w", "stop"])
    }

    /// The server crashed and started again.
    public func restart() throws {
        try crash()
        try start()
    }

    /// Freezes the server (SIGSTOP to it and its backends), as a hung machine or a paused VM: connections stay open
    /// and nothing answers.
    public func freeze() throws { try signalServer(SIGSTOP) }

    /// Lets a frozen server go on.
    public func thaw() throws { try signalServer(SIGCONT) }

    private func signalServer(_ signal: Int32) throws {
        let pidFile = try String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8)
        guard let postmaster = pidFile.split(separator: "\n").first.flatMap({ Int32($0) }) else {
            throw CommandFailed(description: "postmaster.pid names no process")
        }
        let children = try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap(Int32.init).filter { pid in
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            // The fourth field, after the command in parentheses, is the parent's pid.
            guard let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].split(separator: " ").dropFirst().first.flatMap { Int32($0) } == postmaster
        }
        for pid in [postmaster] + children { kill(pid, signal) }
    }

    /// Ends every client session but the caller's (`pg_terminate_backend`), as an administrator or a failover would.
    public func terminateSessions() throws {
        try administer(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
    }

    /// A new, empty database.
    public func createDatabase(_ name: String) throws {
        try administer("CREATE DATABASE \(name)")
    }

    /// One statement as the administrator, through psql.
    func administer(_ statement: String) throws {
        try Self.run([
            binaries.appendingPathComponent("psql").path, "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", "postgres",
            "-v", "ON_ERROR_STOP=1", "-qAt", "-c", statement
        ])
    }

    /// Stops the server and removes its data.
    public func stop() {
        try? crash()
        try? FileManager.default.removeItem(at: folder)
    }

    public struct CommandFailed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs a command to its end, its output to a file. Not with Foundation's `Process`: it learns of the exit through
    /// a descriptor the child inherits, and the server `pg_ctl start` leaves running inherits it too, so the exit of
    /// `pg_ctl` would never be seen.
    static func run(_ arguments: [String]) throws {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("private-pg-\(UUID().uuidString).out").path
        defer { unlink(outputPath) }
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw CommandFailed(description: "cannot create \(outputPath)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, output, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        close(output)
        guard spawned == 0 else { throw CommandFailed(description: "\(arguments[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // Exited (the low 7 bits zero) with status 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw CommandFailed(
                description: "\(URL(fileURLWithPath: arguments.last { !$0.hasPrefix("-") } ?? "").lastPathComponent) failed "
                    + "(wait status \(status)): \(text)")
        }
    }
}
