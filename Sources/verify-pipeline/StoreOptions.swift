import ArgumentParser
import Foundation
import TransactionStore

/// The `--store` option shared by every command that uses the store.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("store"), help: ArgumentHelp(
        "Where transactions are kept: sqlite:PATH (default ./verify-pipeline.sqlite, or $VERIFY_PIPELINE_STORE).",
        valueName: "url"))
    var url: String?

    func validate() throws {
        do {
            _ = try StoreLocation.resolve(option: url)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Opens the store, turning a failure into the spec's exit 2 with a one-line reason.
    func open(create: Bool) throws -> any TransactionStore {
        do {
            return try StoreLocation.resolve(option: url).open(create: create)
        } catch {
            CommandOutput.fail(error.description)
            throw ExitCode(2)
        }
    }
}

/// Where commands print what is not their result.
enum CommandOutput {
    static func fail(_ message: String) {
        FileHandle.standardError.write(Data("verify-pipeline: \(message)\n".utf8))
    }
}
