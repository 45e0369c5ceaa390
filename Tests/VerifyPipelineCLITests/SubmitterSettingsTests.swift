import Foundation
import Testing

/// Submitter settings that would leak a secret or hang the command are configuration errors: exit 2, one line naming
/// the key, before any document is read.
@Suite("verify-pipeline: submitter settings refused at start")
struct SubmitterSettingsTests {
    @Test("submitter.tokenEnv naming the variable --key-env names is exit 2, and nothing is sent")
    func tokenFromTheKeyOption() async throws {
        let folder = try temporaryFolder("token-key-env")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["accept-1"])
        let pipeline = try pipelineFile(folder, "submitter: {kind: http, endpoint: \"http://127.0.0.1:9/v1\", tokenEnv: OTHER_STORE_KEY}\n")
        let store = folder.appendingPathComponent("store.sqlite").path
        let outcome = try await CLIRunner.run(
            ["run", batch.path, "--store", store, "--pipeline", pipeline, "--key-env", "OTHER_STORE_KEY"],
            environment: ["OTHER_STORE_KEY": CLIRunner.testStoreKey])
        #expect(outcome.status == 2, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("'submitter.tokenEnv' names OTHER_STORE_KEY, which holds a secret of the store"), "\(outcome.stderr)")
        #expect(!outcome.stderr.contains(CLIRunner.testStoreKey))
        #expect(outcome.stdout.isEmpty)
    }

    @Test("submitter.tokenEnv naming PGPASSWORD is exit 2 naming the key")
    func tokenFromThePostgresPassword() async throws {
        let folder = try temporaryFolder("token-pgpassword")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["accept-1"])
        let pipeline = try pipelineFile(folder, "submitter: {kind: http, endpoint: \"http://127.0.0.1:9/v1\", tokenEnv: PGPASSWORD}\n")
        let outcome = try await CLIRunner.run(
            ["run", batch.path, "--store", folder.appendingPathComponent("store.sqlite").path, "--pipeline", pipeline],
            environment: ["PGPASSWORD": "not-a-real-password"])
        #expect(outcome.status == 2, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("'submitter.tokenEnv' names PGPASSWORD, which holds a secret of the store"), "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("not-a-real-password"))
    }

    @Test("submitter.caFile naming a FIFO, a folder or a device is exit 2 at once, in one line", arguments: ["fifo", "folder", "device"])
    func caFileNotARegularFile(_ kind: String) async throws {
        let folder = try temporaryFolder("ca-\(kind)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["accept-1"])
        let path: String
        switch kind {
        case "fifo":
            path = folder.appendingPathComponent("ca.pem").path
            try #require(mkfifo(path, 0o600) == 0)
        case "folder":
            path = folder.appendingPathComponent("ca.pem").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        default:
            path = "/dev/zero"
        }
        let pipeline = try pipelineFile(folder, "submitter: {kind: http, endpoint: \"https://127.0.0.1:9/v1\", caFile: \"\(path)\"}\n")
        let outcome = try await CLIRunner.run(
            ["run", batch.path, "--store", folder.appendingPathComponent("store.sqlite").path, "--pipeline", pipeline])
        #expect(outcome.status == 2, "\(outcome.stderr)")
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("'submitter.caFile': \(path) is not a regular file"), "\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
    }
}
