import BlockingWaits
import Foundation
import Testing

/// Every fenced `console` block of README.md and docs/*.md, run as written, its output compared with the doc's.
///
/// Each document runs in one bash session in a folder of its own that holds what `scripts/run-samples` leaves (the
/// samples, `.samples.key`, `.samples.sqlite` with the sample batch run into it), with the built binary first on
/// the PATH. A `$ ` line is a command; the lines after it, up to the next command or the block's end, are its
/// output (stdout and stderr together): `…` stands for anything within a line, and a line that is only `…` for any
/// number of lines. A command shown without output must succeed (exit 0). A block that cannot run here says so on
/// the line before it, `<!-- doc-test: skip (the reason) -->`; `<!-- doc-test: before COMMAND -->` runs a command
/// first without showing it (a file the block's commands expect).
@Suite("The docs' console examples, run as written")
struct DocExamplesTests {
    static let documents: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: CLIRunner.root.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    struct Command {
        var line: Int
        var text: String
        var expected: [String]
        var hidden = false
    }

    /// The commands of a document's console blocks, in order; the skipped blocks' reasons.
    static func commands(_ markdown: String) -> (commands: [Command], skipped: [String]) {
        var commands: [Command] = [], skipped: [String] = []
        var inBlock = false, skipping = false, pendingSkip: String?, before: [String] = []
        for (index, line) in markdown.components(separatedBy: "\n").enumerated() {
            if inBlock {
                if line.hasPrefix("```") {
                    inBlock = false
                } else if !skipping {
                    if line.hasPrefix("$ ") {
                        commands.append(Command(line: index + 1, text: String(line.dropFirst(2)), expected: []))
                    } else if !commands.isEmpty {
                        commands[commands.count - 1].expected.append(line)
                    }
                }
                continue
            }
            if line.hasPrefix("<!-- doc-test: skip") {
                pendingSkip = String(line.dropFirst("<!-- doc-test: skip".count).dropLast(" -->".count)).trimmingCharacters(in: .whitespaces)
            } else if line.hasPrefix("<!-- doc-test: before ") {
                before.append(String(line.dropFirst("<!-- doc-test: before ".count).dropLast(" -->".count)))
            } else if line.hasPrefix("```console") {
                inBlock = true
                skipping = pendingSkip != nil
                if let pendingSkip { skipped.append("line \(index + 1): \(pendingSkip)") }
                if !skipping {
                    commands += before.map { Command(line: index + 1, text: $0, expected: [], hidden: true) }
                }
                pendingSkip = nil
                before = []
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                pendingSkip = nil
                before = []
            }
        }
        return (commands, skipped)
    }

    /// Whether `actual` matches `expected`: `…` within a line is anything, a line of `…` any number of lines.
    static func matches(_ expected: [String], _ actual: [String]) -> Bool {
        let expected = expected.map { $0.trimmingTrailingWhitespace }, actual = actual.map { $0.trimmingTrailingWhitespace }
        var memo: [Int: Bool] = [:]
        func match(_ e: Int, _ a: Int) -> Bool {
            let key = e * (actual.count + 1) + a
            if let known = memo[key] { return known }
            let result: Bool
            if e == expected.count {
                result = a == actual.count
            } else if expected[e] == "…" {
                result = match(e + 1, a) || (a < actual.count && match(e, a + 1))
            } else {
                result = a < actual.count && lineMatches(expected[e], actual[a]) && match(e + 1, a + 1)
            }
            memo[key] = result
            return result
        }
        return match(0, 0)
    }

    static func lineMatches(_ pattern: String, _ line: String) -> Bool {
        let parts = pattern.components(separatedBy: "…")
        guard parts.count > 1 else { return pattern == line }
        var rest = Substring(line)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        let last = parts[parts.count - 1]
        return last.isEmpty || (rest.hasSuffix(last) && rest.count >= last.count)
    }

    @Test("the matcher: … within a line and as lines, nothing else")
    func matcher() {
        #expect(Self.matches(["a …", "…", "z"], ["a b", "c", "d", "z"]))
        #expect(Self.matches(["…", "z"], ["z"]))
        #expect(!Self.matches(["a"], ["a", "b"]))
        #expect(!Self.matches(["a …c"], ["a b"]))
        #expect(Self.matches(["x…y…z"], ["x1y2z"]))
        #expect(!Self.matches(["x…y…z"], ["x1z2y"]))
        let parsed = Self.commands("```console\n$ a\nout\n```\n<!-- doc-test: skip (never exits) -->\n```console\n$ b\n```\n")
        #expect(parsed.commands.map(\.text) == ["a"] && parsed.commands[0].expected == ["out"] && parsed.skipped.count == 1)
        // The docs' examples are found: the tour's and the CLI reference's, each with output to compare.
        for (document, least) in [("README.md", 5), ("docs/CLI.md", 15), ("docs/SECURITY.md", 5)] {
            let markdown = (try? String(contentsOf: CLIRunner.root.appendingPathComponent(document), encoding: .utf8)) ?? ""
            let commands = Self.commands(markdown).commands.filter { !$0.hidden && !$0.expected.isEmpty }
            #expect(commands.count >= least, "\(document): \(commands.count) commands with output")
        }
    }

    @Test("every console example of README.md and docs/*.md gives the output it shows", arguments: documents)
    func examples(_ document: String) async throws {
        let markdown = try String(contentsOf: CLIRunner.root.appendingPathComponent(document), encoding: .utf8)
        let (commands, _) = Self.commands(markdown)
        guard !commands.isEmpty else { return }
        let folder = try await Self.sampleFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Each command's stdout, then its stderr (as a terminal shows them: the summary after the results); braces,
        // not a subshell, so that an `export` holds for the commands after it.
        var script = "cd \(folder.path.escapingForShell)\nexec 2>&1\n"
        for (index, command) in commands.enumerated() {
            script += """
                printf '\\n@@doc-test %d\\n' \(index)
                { \(command.text)
                } 2>.doc-test-stderr
                doc_test_status=$?
                cat .doc-test-stderr
                printf '\\n@@doc-test-status %d %d\\n' \(index) "$doc_test_status"

                """
        }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("VERIFY_PIPELINE_") }
        environment["PATH"] = CLIRunner.executable.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = folder.path
        environment["COLUMNS"] = "100"
        let output = try await Self.bash(script, environment: environment)
        // What each command printed, and its exit status.
        var printed: [Int: [String]] = [:], statuses: [Int: Int] = [:]
        var current: Int?
        for line in output.components(separatedBy: "\n") {
            if line.hasPrefix("@@doc-test-status ") {
                let fields = line.split(separator: " ")
                statuses[Int(fields[1])!] = Int(fields[2])!
                current = nil
            } else if line.hasPrefix("@@doc-test ") {
                current = Int(line.dropFirst("@@doc-test ".count))
                printed[current!] = []
            } else if let index = current {
                printed[index]!.append(line)
            }
        }
        for (index, command) in commands.enumerated() {
            var lines = printed[index] ?? []
            // The markers' own line breaks.
            if lines.first == "" { lines.removeFirst() }
            if lines.last == "" { lines.removeLast() }
            var expected = command.expected
            while expected.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { expected.removeLast() }
            let where_ = "\(document):\(command.line): $ \(command.text)"
            if expected.isEmpty {
                #expect(statuses[index] == 0, "\(where_) exited \(statuses[index].map(String.init) ?? "never"):\n\(lines.joined(separator: "\n"))")
            } else {
                #expect(
                    Self.matches(expected, lines),
                    "\(where_)\n--- the doc shows:\n\(expected.joined(separator: "\n"))\n--- it printed:\n\(lines.joined(separator: "\n"))")
            }
        }
    }

    /// A folder as `scripts/run-samples` leaves the repository: the samples and pipelines, a sample key, and the
    /// sample batch run into `.samples.sqlite` under it.
    static func sampleFolder() async throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doc-examples-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["Samples", "Pipelines"] {
            try FileManager.default.createSymbolicLink(
                at: folder.appendingPathComponent(name), withDestinationURL: CLIRunner.root.appendingPathComponent(name))
        }
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try Data((key + "\n").utf8).write(to: folder.appendingPathComponent(".samples.key"))
        let setup = try await CLIRunner.run(
            ["run", "Samples/batch", "--store", "sqlite:.samples.sqlite", "--format", "ndjson"], in: folder,
            environment: ["VERIFY_PIPELINE_STORE_KEY": key])
        #expect(setup.status == 1, "the sample batch fails 3 documents on purpose: \(setup.stderr)")
        return folder
    }

    /// Runs `script` in bash, its output (stdout and stderr together), within two minutes.
    static func bash(_ script: String, environment: [String: String]) async throws -> String {
        try await offCooperativePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["--noprofile", "--norc", "-c", script]
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
            try process.run()
            let killer = DispatchWorkItem {
                if process.isRunning {
                    kill(-process.processIdentifier, SIGKILL)
                    process.terminate()
                }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: killer)
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            killer.cancel()
            return String(decoding: data, as: UTF8.self)
        }
    }
}

extension String {
    fileprivate var trimmingTrailingWhitespace: String {
        var text = Substring(self)
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
        return String(text)
    }

    fileprivate var escapingForShell: String { "'" + replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
