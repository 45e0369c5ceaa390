import ArgumentParser
import Foundation
import Logging
import TransactionStore
import WorkQueues

/// The `--store` option shared by every command that uses the store.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("store"), help: ArgumentHelp(
        "Where transactions are kept: sqlite:PATH (default ./verify-pipeline.sqlite, or $VERIFY_PIPELINE_STORE).",
        valueName: "url"))
    var url: String?

    @Option(name: .customLong("key-env"), help: ArgumentHelp(
        "The environment variable holding the store's key-encryption key (default: the pipeline's store.encryption.keyEnv, else VERIFY_PIPELINE_STORE_KEY). The key itself is never an argument.",
        valueName: "name"))
    var keyEnv: String?

    func validate() throws {
        do {
            _ = try StoreLocation.resolve(option: url)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The key-encryption key in `--key-env`'s variable, else in `variable`; nil when that is not set. A variable that
    /// holds no key is exit 2.
    func key(default variable: String = KeyEncryptionKey.defaultVariable) throws -> KeyEncryptionKey? {
        do {
            return try KeyEncryptionKey.from(variable: keyEnv ?? variable)
        } catch {
            CommandOutput.fail(error.description)
            throw ExitCode(2)
        }
    }

    /// For commands that read or manage a store: either kind opens, an encrypted one with its key.
    func anyStore() throws -> StoreEncryption { .ifEncrypted(try key()) }

    /// Runs `body` with the store open; a store that cannot be opened is the spec's exit 2 with a one-line reason.
    func withStore<T: Sendable>(create: Bool, encryption: StoreEncryption, logger: Logger = Logger(label: "verify-pipeline"),
                                _ body: @escaping @Sendable (any TransactionStore) async throws -> T) async throws -> T {
        do {
            return try await StoreLocation.resolve(option: url).withStore(create: create, encryption: encryption, logger: logger, body)
        } catch let error as StoreError {
            CommandOutput.fail(error.description)
            throw ExitCode(2)
        }
    }
}

extension StoreOptions {
    /// Runs `body` with the store and its work queue open; a store without one (SQLite) is a configuration error.
    func withWorkQueue<T: Sendable>(create: Bool, encryption: StoreEncryption, logger: Logger,
                                    _ body: @escaping @Sendable (any TransactionStore, any WorkQueue) async throws -> T) async throws -> T {
        do {
            return try await StoreLocation.resolve(option: url).withWorkQueue(create: create, encryption: encryption, logger: logger, body)
        } catch let error as StoreError {
            CommandOutput.fail(error.description)
            throw ExitCode(2)
        }
    }
}

/// Where commands print what is not their result.
enum CommandOutput {
    static func fail(_ message: String) {
        FileHandle.standardError.write(Data("verify-pipeline: \(message.escapingControls)\n".utf8))
    }
}

extension String {
    /// For a terminal: control characters (C0, DEL, C1) and bidirectional overrides become visible `\u{..}`
    /// escapes, so that stored text (a folder's name, a reason) cannot move the cursor, clear the screen or
    /// reorder what is shown. Line breaks between lines are the caller's.
    var escapingControls: String {
        var escaped = ""
        for scalar in unicodeScalars {
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) {
                escaped += "\\u{" + String(value, radix: 16, uppercase: true) + "}"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
