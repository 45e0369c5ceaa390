import BlockingWaits
import Foundation
import TransactionStore

/// Runs the built `verify-pipeline` executable, as a user would, and captures what it prints.
struct CLIRunner {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String

        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The repository root, from this file's location.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The executable sits beside the test bundle in SwiftPM's build folder.
    static let executable: URL = {
        var folder = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("verify-pipeline")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug/verify-pipeline")
    }()

    /// The key-encryption key the tests' stores are sealed under (the store requires one by default): a fixed test
    /// value, never a real key.
    static let testStoreKey = Data((0..<32).map { UInt8($0) &* 7 &+ 3 }).base64EncodedString()

    /// How a test opens a store the CLI wrote: with the test key.
    static var storeEncryption: StoreEncryption {
        .ifEncrypted(try! KeyEncryptionKey.from(variable: "VERIFY_PIPELINE_STORE_KEY", environment: ["VERIFY_PIPELINE_STORE_KEY": testStoreKey]))
    }

    /// The environment every CLI run gets: this process's, with the test store key.
    static var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["VERIFY_PIPELINE_STORE_KEY": testStoreKey]) { $1 }
    }

    /// What the CLI reads as its standard input: this process's, text through a pipe, or `/dev/null` (as under
    /// systemd's `StandardInput=null`, `docker run` without `-i` or cron).
    enum Input {
        case inherited
        case text(String)
        case devNull
    }

    /// Runs the CLI to its end, waiting off the cooperative pool.
    static func run(
        _ arguments: [String], in directory: URL = root, environment: [String: String] = [:],
        stdin: String? = nil, executable: URL = executable
    ) async throws -> Outcome {
        try await run(arguments, in: directory, environment: environment, input: stdin.map(Input.text) ?? .inherited, executable: executable)
    }

    static func run(
        _ arguments: [String], in directory: URL = root, environment: [String: String] = [:],
        input: Input, executable: URL = executable
    ) async throws -> Outcome {
        try await offCooperativePool {
            try runBlocking(arguments, in: directory, environment: environment, input: input, executable: executable)
        }
    }

    private static func runBlocking(
        _ arguments: [String], in directory: URL, environment: [String: String],
        input standardInput: Input, executable: URL
    ) throws -> Outcome {
        let process = Process()
        process.environment = Self.environment.merging(environment) { $1 }
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        switch standardInput {
        case .inherited: break
        case .text: process.standardInput = input
        case .devNull: process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        }
        try process.run()
        if case .text(let text) = standardInput {
            input.fileHandleForWriting.write(Data(text.utf8))
            try input.fileHandleForWriting.close()
        }
        // Read both pipes before waiting so a full pipe cannot stall the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}
