import Application
import ArgumentParser
import Foundation
import Logging
import TransactionStore
import TransactionViews
import WorkQueues

/// The `--store` option shared by every command that uses the store.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .customLong("store"),
        help: ArgumentHelp(
            "Where transactions are kept: sqlite:PATH, or postgres://USER@HOST:PORT/DATABASE (password from PGPASSWORD) to share it between processes (default sqlite:./verify-pipeline.sqlite, or $VERIFY_PIPELINE_STORE).",
            valueName: "url"))
    var url: String?

    @Option(
        name: .customLong("key-env"),
        help: ArgumentHelp(
            "The environment variable holding the store's key-encryption key (default: the pipeline's store.encryption.keyEnv, else VERIFY_PIPELINE_STORE_KEY). The key itself is never an argument.",
            valueName: "name"))
    var keyEnv: String?

    func validate() throws {
        do {
            _ = try StoreLocation.resolve(option: url)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The key-encryption key in `--key-env`'s variable, else in `variable`; nil when that is not set. A variable that
    /// holds no key is exit 2.
    func key(default variable: String = KeyEncryptionKey.defaultVariable) throws -> KeyEncryptionKey? {
        try KeyEncryptionKey.from(variable: keyEnv ?? variable)
    }

    /// Where the store is; a location that cannot be one is exit 2.
    func location() throws -> StoreLocation {
        try StoreLocation.resolve(option: url)
    }

    /// For commands that read or manage a store: either kind opens, an encrypted one with its key.
    func anyStore() throws -> StoreEncryption { .ifEncrypted(try key()) }

    /// Runs `body` with the store open; a store that cannot be opened is the spec's exit 2 with a one-line reason.
    func withStore<T: Sendable>(
        create: Bool, readOnly: Bool = false, encryption: StoreEncryption, logger: Logger = Logger(label: "verify-pipeline"),
        _ body: @escaping @Sendable (TransactionStore) async throws -> T
    ) async throws -> T {
        // The work queue's items in a PostgreSQL store's database are purged and sealed again with the store's.
        try await StoreLocation.resolve(option: url).withStore(
            create: create, readOnly: readOnly, encryption: encryption, logger: logger, neighbours: WorkItems.neighbours, body)
    }
}

extension StoreOptions {
    /// Runs `body` with the store and its work queue open; a store without one (SQLite) is a configuration error.
    func withWorkQueue<T: Sendable>(
        create: Bool, encryption: StoreEncryption, logger: Logger,
        _ body: @escaping @Sendable (TransactionStore, any WorkQueue) async throws -> T
    ) async throws -> T {
        try await StoreLocation.resolve(option: url).withWorkQueue(create: create, encryption: encryption, logger: logger, body)
    }
}

/// Where commands print what is not their result.
enum CommandOutput {
    static func fail(_ message: String) {
        standardError("verify-pipeline: \(message.escapingControls)\n")
    }

    /// Writes to stderr with write(2), giving up on an error: a closed pipe or a full disk there must not end the
    /// process with a trap, as Foundation's `FileHandle.write` does.
    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
