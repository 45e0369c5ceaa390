import Foundation
import Testing

/// What a user expects of a Unix tool: logs a shipper can read, completions that complete paths.
@Suite("CLI conventions: JSON logs, completions with path hints")
struct ConventionTests {
    @Test("--log-format json: every log line on stderr is one JSON object with time, level, label and message; no value")
    func jsonLogs() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("json-logs-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:" + folder.appendingPathComponent("store.sqlite").path
        let run = try await CLIRunner.run(
            ["run", "Samples/batch", "--store", store, "--format", "ndjson", "--log-level", "info", "--log-format", "json"])
        #expect(run.status == 1, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        // The command's own summary stays a sentence; everything else is a log line.
        let logs = lines.filter { !$0.hasPrefix("verify-pipeline: ") }
        #expect(logs.count >= 1, "\(run.stderr)")
        for line in logs {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(
                object?["level"] as? String == "info" || object?["level"] as? String == "notice" || object?["level"] as? String == "warning",
                "\(line)")
            #expect(object?["label"] is String && object?["message"] is String && object?["time"] is String, "\(line)")
            for value in ["SAMPLE", "RIVER", "X7B04Q2N1", "1991-03-07", "425122"] { #expect(!line.contains(value), "\(value) in \(line)") }
        }
        #expect(
            logs.contains { $0.contains(#""message":"stages (workers\/queue)""#) || $0.contains(#""message":"stages (workers/queue)""#) }, "\(logs)")
        // Text stays the default; a format that does not exist is a usage error.
        let text = try await CLIRunner.run(["plan", "--log-level", "info"])
        #expect(text.status == 0)
        let wrong = try await CLIRunner.run(["plan", "--log-format", "xml"])
        #expect(wrong.status == 2 && wrong.stderr.contains("log-format"), "\(wrong.stderr)")
    }

    @Test("the bash and zsh completions complete folders for run and enqueue, YAML files for --pipeline, images for scan")
    func completions() async throws {
        let bash = try await CLIRunner.run(["--generate-completion-script", "bash"])
        #expect(bash.status == 0)
        #expect(bash.stdout.contains("yaml") && bash.stdout.contains("yml"), "no YAML extension hint")
        #expect(bash.stdout.contains("webp"), "no image extension hint for scan")
        #expect(bash.stdout.contains("-d") || bash.stdout.contains("directories"), "no directory completion")
        let zsh = try await CLIRunner.run(["--generate-completion-script", "zsh"])
        #expect(zsh.status == 0)
        #expect(zsh.stdout.contains("_files -/") && zsh.stdout.contains("*.yaml"), "zsh: no folder or YAML completion")
    }
}
