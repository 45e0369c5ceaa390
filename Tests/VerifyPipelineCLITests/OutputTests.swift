import BlockingWaits
import Foundation
import Testing

/// `--output`: only a regular file is written, in place only once the run has ended; a write error is exit 2.
@Suite("verify-pipeline run --output", .serialized)
struct OutputTests {
    static func leftovers(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
    }

    @Test("the results land in a 0600 file, renamed into place at the end; nothing is left beside it")
    func regularFile() async throws {
        let folder = try temporaryFolder("output-file")
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("results.ndjson")
        try Data("an earlier run's results\n".utf8).write(to: output)
        let outcome = try await CLIRunner.run([
            "run", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path,
            "--omit-images", "--output", output.path
        ])
        #expect(outcome.status == 1 && outcome.stdout.isEmpty, "\(outcome.stderr)")
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 15 && lines.allSatisfy { $0.hasPrefix("{") })
        let mode = try FileManager.default.attributesOfItem(atPath: output.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try Self.leftovers(folder).isEmpty)
        // `-` is standard output.
        let dash = try await CLIRunner.run([
            "run", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path,
            "--omit-images", "--output", "-"
        ])
        #expect(dash.lines.count == 15)
    }

    @Test("a FIFO, a symlink or a folder named by --output is refused with exit 2 and left as it was", arguments: ["fifo", "symlink", "folder"])
    func notARegularFile(_ kind: String) async throws {
        let folder = try temporaryFolder("output-\(kind)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("target").path, victim = folder.appendingPathComponent("victim.txt")
        try Data("keep me\n".utf8).write(to: victim)
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "symlink": try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim.path)
        default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let outcome = try await CLIRunner.run([
            "run", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path,
            "--output", path
        ])
        #expect(outcome.status == 2)
        #expect(outcome.stderr == "verify-pipeline: \(path) exists and is not a regular file; it is left as it is\n")
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me\n")
        var status = stat()
        #expect(lstat(path, &status) == 0)
        let expected: mode_t = kind == "fifo" ? S_IFIFO : kind == "symlink" ? S_IFLNK : S_IFDIR
        #expect(status.st_mode & S_IFMT == expected)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("s.sqlite").path), "refused before any work")
    }

    @Test("stderr a closed pipe: the run ends with its own exit status, the summary lost, never a signal", arguments: ["run", "bad-pipeline"])
    func closedStandardError(_ what: String) async throws {
        let folder = try temporaryFolder("stderr-closed")
        defer { try? FileManager.default.removeItem(at: folder) }
        try "colour: blue\n".write(to: folder.appendingPathComponent("bad.yaml"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = CLIRunner.executable
        process.arguments =
            ["run", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path, "--omit-images"]
            + (what == "run" ? [] : ["--pipeline", folder.appendingPathComponent("bad.yaml").path])
        process.currentDirectoryURL = CLIRunner.root
        process.environment = CLIRunner.environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try err.fileHandleForReading.close()  // nobody reads stderr: every write there fails with EPIPE
        try process.run()
        await offCooperativePool { process.waitUntilExit() }
        #expect(process.terminationReason == .exit, "ended by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == (what == "run" ? 1 : 2), "three sample documents fail on purpose; a bad pipeline is exit 2")
    }

    @Test("stdout a closed pipe (`run … | head`): the run ends quietly, exit 141 as a closed pipe ends a process, nothing on stderr")
    func closedStandardOutput() async throws {
        let folder = try temporaryFolder("stdout-closed")
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = CLIRunner.executable
        process.arguments = ["run", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path]
        process.currentDirectoryURL = CLIRunner.root
        process.environment = CLIRunner.environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try out.fileHandleForReading.close()  // the reader is gone: the first result's write fails with EPIPE
        try process.run()
        try out.fileHandleForWriting.close()
        try err.fileHandleForWriting.close()
        let stderr = await offCooperativePool { err.fileHandleForReading.readDataToEndOfFile() }
        await offCooperativePool { process.waitUntilExit() }
        #expect(process.terminationReason == .exit, "ended by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 141)
        #expect(stderr.isEmpty, "\(String(decoding: stderr, as: UTF8.self))")
    }

    /// The sample batch's values the readable lines must never show (the licence's, the passport's, the card's).
    static let sampleValues = ["T64-220-019", "1990-11-20", "X7B04Q2N1", "SAMPLE", "RIVER", "UT0418822", "EXAMPLE", "alex.sample@example.com"]

    @Test("--format text: a readable line per document (status, type, id, transaction, the error's code and reason), no value")
    func textLines() async throws {
        let folder = try temporaryFolder("text-lines")
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await CLIRunner.run(["run", "Samples/batch", "--store", folder.appendingPathComponent("s.sqlite").path, "--format", "text"])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 15 && lines.allSatisfy { !$0.hasPrefix("{") })
        #expect(lines.filter { $0.hasPrefix("PROCESSED ") }.count == 12, "\(lines)")
        let failed = lines.filter { $0.hasPrefix("FAILED ") }
        #expect(failed.count == 3)
        #expect(
            failed.contains {
                $0.contains("06-bad-mrz/GOVERNMENT_ID  txn-batch-006  documentCaptureError: MRZ check digit for documentNumber does not match")
            }, "\(failed)")
        #expect(failed.contains { $0.contains("07-expired/GOVERNMENT_ID  txn-batch-007  documentSubmissionTimeoutError: ") })
        for value in Self.sampleValues { #expect(!outcome.stdout.contains(value), "a sample value is in the readable lines") }
        #expect(outcome.stderr.contains("15 documents (3 failed, 0 already submitted), 9 transactions (6 completed)"))
    }

    @Test("images only with --include-images: left out of the NDJSON by default, whole with it; --omit-images as before")
    func imagesOnRequest() async throws {
        let folder = try temporaryFolder("images-on-request")
        defer { try? FileManager.default.removeItem(at: folder) }
        func licence(_ extra: [String], _ store: String) async throws -> [String: Any] {
            let outcome = try await CLIRunner.run(["run", "Samples/batch", "--store", folder.appendingPathComponent(store).path] + extra)
            #expect(outcome.status == 1, "\(outcome.stderr)")
            let line = try #require(outcome.stdout.split(separator: "\n").first { $0.contains("\"02-missing-selfie/GOVERNMENT_ID\"") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(object["document"] as? [String: Any])
        }
        #expect(try await licence([], "a.sqlite")["frontImage"] == nil)
        #expect(try await licence(["--omit-images"], "b.sqlite")["frontImage"] == nil)
        let included = try await licence(["--include-images"], "c.sqlite")
        #expect((included["frontImage"] as? String).flatMap { Data(base64Encoded: $0) }?.starts(with: [0xFF, 0xD8]) == true)
        let both = try await CLIRunner.run(["run", "Samples/batch", "--include-images", "--omit-images"])
        #expect(both.status == 2 && both.stderr.contains("contradict"))
    }

    @Test("one document, one transaction: the summary says so in the singular")
    func singularSummary() async throws {
        let folder = try temporaryFolder("singular")
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await CLIRunner.run(
            ["stream", "--store", folder.appendingPathComponent("s.sqlite").path],
            stdin: #"{"id":"one","transactionId":"single-1","type":"EMAIL","email":"one@example.com"}"# + "\n")
        #expect(outcome.stderr.contains("verify-pipeline: 1 document ("), "\(outcome.stderr)")
        #expect(outcome.stderr.contains(" already submitted), 1 transaction ("), "\(outcome.stderr)")
    }

    @Test("a write that fails (the file-size limit here, a full disk alike) ends the run with exit 2 and a clear line, not a signal")
    func writeError() async throws {
        let folder = try temporaryFolder("output-full")
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("results.ndjson").path
        // 1.5 MiB: not room for the results with their images (about 2.4 MB). The limit is on every file the process
        // writes, so the store is in PostgreSQL: a SQLite store's WAL, which grows faster than it is checkpointed
        // when the machine is busy, reached the limit first in one loaded run (its documents then failed: exit 1).
        let store = try await freshPostgresStore()
        let script = "ulimit -f 1536; exec \"$0\" run Samples/batch --store \"$1\" --output \"$2\" --include-images"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script, CLIRunner.executable.path, store, output]
        process.currentDirectoryURL = CLIRunner.root
        process.environment = CLIRunner.environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = await offCooperativePool {
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        #expect(process.terminationReason == .exit && process.terminationStatus == 2, "\(process.terminationReason) \(process.terminationStatus)")
        #expect(stderr.contains("verify-pipeline: cannot write the results to \(output): File too large\n"), "\(stderr)")
        let left = try Self.leftovers(folder)
        #expect(!FileManager.default.fileExists(atPath: output) && left.isEmpty)
    }
}
