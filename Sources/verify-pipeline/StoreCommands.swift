import Application
import ArgumentParser
import DocumentOutcomes
import Foundation
import Pipeline
import TransactionStore
import TransactionViews

extension VerifyPipeline {
    struct StoreCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store",
            abstract: "Manage the identity data at rest: purge it under the retention policy, encrypt the store, rotate its key.",
            subcommands: [Purge.self, Encrypt.self, RotateKey.self]
        )
    }
}

extension VerifyPipeline.StoreCommand {
    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply the pipeline's retention policy now.",
            discussion: """
                Removes the document fields, verification code and Protect payload of the finished transactions (COMPLETED, \
                or expired with nothing waiting to be submitted) that the pipeline's `retention` selects; their statuses and \
                history stay, and the purge is added to the history. Prints the purged transaction ids; a SQLite store is \
                vacuumed afterwards so the purged bytes leave the file.
                """
        )

        @Option(
            help: ArgumentHelp("The pipeline file whose `retention` section applies.", valueName: "file"),
            completion: .file(extensions: ["yaml", "yml"]))
        var pipeline: String?

        @Flag(help: "Print what would be purged, and change nothing.")
        var dryRun = false

        @OptionGroup var store: StoreOptions

        @OptionGroup var log: LogOptions

        func run() async throws {
            let configuration = try ConfigurationOptions.load(pipeline), dryRun = dryRun
            let retention = configuration.retention, age = configuration.review.inputsMaxAge
            let outcome = try await store.withStore(create: false, encryption: try store.anyStore()) { store in
                try await store.purge(retention, reviewInputsMaxAge: age, at: Date(), dryRun: dryRun)
            }
            if outcome.reviewInputs > 0 {
                CommandOutput.standardError("verify-pipeline: removed the kept inputs of \(outcome.reviewInputs) failed documents by their age\n")
            }
            guard retention.mode != .none else {
                CommandOutput.fail("the pipeline's retention is none: no transaction is purged (set retention.mode to count, age or hybrid)")
                return
            }
            for id in outcome.transactions { print(id.escapingControls) }
            let verb = dryRun ? "would purge" : "purged"
            CommandOutput.standardError(
                """
                verify-pipeline: \(verb) the identity data of \(RunSummary.count(outcome.transactions.count, "transaction")) (\(RunSummary.count(outcome.documents, "document"))) \
                under \(retention.label)\(dryRun ? "; nothing was changed" : "")\n
                """)
        }
    }

    struct Encrypt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Encrypt a store written in clear, in place.",
            discussion: """
                Seals every document's fields, verification code and Protect payload under a new data key wrapped by the \
                key-encryption key in --key-env's variable (VERIFY_PIPELINE_STORE_KEY by default), in one database \
                transaction; a SQLite store is then vacuumed so the clear bytes leave the file. Stop the processes using \
                the store first.
                """
        )

        @OptionGroup var store: StoreOptions

        @OptionGroup var log: LogOptions

        func run() async throws {
            guard let key = try store.key() else {
                throw CommandFailure(
                    "store encrypt needs a key-encryption key: set \(store.keyEnv ?? KeyEncryptionKey.defaultVariable) (32 random bytes in base64: openssl rand -base64 32)"
                )
            }
            let location = try StoreLocation.resolve(option: store.url).description
            let sealed = try await store.withStore(create: false, encryption: .ifEncrypted(key)) { store -> Int? in
                guard !store.isEncrypted else { return nil }
                return try await store.encrypt(with: key, at: Date())
            }
            guard let sealed else {
                CommandOutput.standardError("verify-pipeline: \(location) is encrypted already; nothing was changed\n")
                return
            }
            CommandOutput.standardError(
                "verify-pipeline: sealed \(sealed) values of \(location) under a data key wrapped by the key in \(key.variable)\n")
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Replace the store's data key, under a new key-encryption key.",
            discussion: """
                Opens the store with the key in --key-env's variable (VERIFY_PIPELINE_STORE_KEY by default), makes a new \
                data key wrapped by the key in --new-key-env's variable, and seals every value again under it in one \
                database transaction; the tables are then rewritten so that the old values and wrapping leave their files. \
                The old key opens nothing of the store afterwards. Stop the processes using the store first: PostgreSQL \
                refuses while another session is connected; on SQLite a process still running has its next write refused.
                """
        )

        @Option(
            name: .customLong("new-key-env"), help: ArgumentHelp("The environment variable holding the new key-encryption key.", valueName: "name"))
        var newKeyEnv: String

        @OptionGroup var store: StoreOptions

        @OptionGroup var log: LogOptions

        func run() async throws {
            guard let newKey = try KeyEncryptionKey.from(variable: newKeyEnv) else {
                throw CommandFailure("\(newKeyEnv) (--new-key-env) is not set: set it to the new key-encryption key (openssl rand -base64 32)")
            }
            guard let oldKey = try store.key() else {
                throw CommandFailure("\(store.keyEnv ?? KeyEncryptionKey.defaultVariable) is not set: the store opens with its current key only")
            }
            guard !oldKey.isSameKey(as: newKey) else {
                throw CommandFailure("the new key is the current one: nothing to rotate")
            }
            let location = try StoreLocation.resolve(option: store.url).description
            let sealed = try await store.withStore(create: false, encryption: .ifEncrypted(oldKey)) { store in
                guard store.isEncrypted else {
                    throw StoreError.cannotOpen("\(location) is not encrypted: encrypt it with `verify-pipeline store encrypt`")
                }
                return try await store.rotateKey(to: newKey, at: Date())
            }
            // What the old key can still open differs by backend (docs/SECURITY.md): said as it is.
            let remains =
                location.hasPrefix("postgres")
                ? "the key in \(oldKey.variable) opens none of them; the server's WAL not yet recycled, archives, replicas and backups taken before still hold the old values and wrapping"
                : "the key in \(oldKey.variable) opens none of them; backups taken before still hold the old values and wrapping"
            CommandOutput.standardError(
                "verify-pipeline: sealed \(sealed) values of \(location) again under a new data key wrapped by the key in \(newKey.variable); \(remains)\n"
            )
        }
    }
}
