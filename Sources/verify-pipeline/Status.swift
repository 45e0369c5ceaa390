import ArgumentParser
import Foundation
import Protect
import TransactionStore
import TransactionViews
import VerifyModel

extension VerifyPipeline {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a transaction's statuses, timestamps and history, or list transactions.",
            discussion: "With no TRANSACTION_ID, lists the transactions, most recently updated first. Document fields are never shown."
        )

        @Argument(help: "The transaction to show; omit it to list transactions.")
        var transactionId: String?

        @Option(help: ArgumentHelp("List only transactions in this status.", valueName: "status"))
        var state: DocumentSubmissionStatus?

        @Flag(help: "JSON instead of text (one object; one line per transaction when listing).")
        var json = false

        @Flag(help: "Show the transaction's Protect signals: the decoded payload, the behavioural data, the risk evaluation.")
        var signals = false

        @OptionGroup var store: StoreOptions

        func validate() throws {
            if signals, transactionId == nil {
                throw ValidationError("--signals shows one transaction: give its TRANSACTION_ID")
            }
            if state != nil, transactionId != nil {
                throw ValidationError("--state lists transactions: give it without a TRANSACTION_ID")
            }
        }

        func run() async throws {
            let transactionId = transactionId, json = json, signals = signals, filter = state
            let show: @Sendable (TransactionStore) async throws -> Void = { store in
                if let transactionId {
                    guard let report = try await store.report(id: transactionId) else {
                        CommandOutput.fail("no transaction '\(transactionId)' in the store")
                        throw ExitCode(1)
                    }
                    if signals {
                        let state = try await store.protectState(of: transactionId, as: ProtectState.self)
                        print(StatusText.signals(report.transaction, state: state, json: json))
                    } else {
                        print(json ? StatusJSON.report(report) : StatusText.text(report, now: Date()))
                    }
                } else {
                    let summaries = try await store.transactions(status: filter)
                    if json {
                        for summary in summaries { print(StatusJSON.summary(summary)) }
                    } else {
                        print(StatusText.text(summaries))
                    }
                }
            }
            try await store.withStore(create: false, readOnly: true, encryption: try store.anyStore(), show)
        }
    }
}

// `--state completed` or `--state COMPLETED`; the help lists the wire spellings.
extension DocumentSubmissionStatus: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.uppercased())
    }
}
