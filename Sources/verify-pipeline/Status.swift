import ArgumentParser
import Foundation
import Pipeline
import Protect
import TransactionStore
import TransactionViews
import VerifyModel

extension VerifyPipeline {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a transaction's statuses, timestamps and history, or list transactions.",
            discussion: """
                With no TRANSACTION_ID, lists the transactions, most recently updated first: 50 as text unless --limit says \
                otherwise, every one with --json. Each document type has a column with the document's status in short (req, \
                opt, coll, proc, skip; - when the transaction has no such document). Document fields are never shown.
                """
        )

        @Argument(help: "The transaction to show; omit it to list transactions.")
        var transactionId: String?

        @Option(help: ArgumentHelp("List only transactions in this status.", valueName: "status"))
        var state: DocumentSubmissionStatus?

        @Option(
            help: ArgumentHelp(
                "List at most this many transactions, the most recently updated first; 0: every one. Default: 50 as text, every one with --json.",
                valueName: "n"))
        var limit: Int?

        @Option(help: ArgumentHelp("List only the transactions whose id contains this text (as the dashboard's search).", valueName: "text"))
        var search: String?

        @Option(
            help: ArgumentHelp(
                "List only the transactions updated since then: a time back from now (90s, 30m, 12h, 7d) or a moment (2026-12-01T00:00:00Z).",
                valueName: "duration|time"))
        var since: ListSince?

        @Flag(help: "List every id whole and times to the millisecond, however wide the lines get (else they fit 100 columns).")
        var wide = false

        @Flag(help: "JSON instead of text (one object; one line per transaction when listing).")
        var json = false

        @Flag(help: "Show the transaction's Protect signals: the decoded payload, the behavioural data, the risk evaluation.")
        var signals = false

        @OptionGroup var store: StoreOptions

        @OptionGroup var log: LogOptions

        /// How many transactions the text list shows when `--limit` is not given: a screenful or two.
        static let textLimit = 50

        func validate() throws {
            if signals, transactionId == nil {
                throw ValidationError("--signals shows one transaction: give its TRANSACTION_ID")
            }
            let listing = [
                ("--state", state != nil), ("--limit", limit != nil), ("--search", search != nil), ("--since", since != nil), ("--wide", wide)
            ]
            if transactionId != nil, let option = listing.first(where: \.1)?.0 {
                throw ValidationError("\(option) lists transactions: give it without a TRANSACTION_ID")
            }
            if let limit, limit < 0 { throw ValidationError("--limit is a count: 0 (every one) or more") }
        }

        func run() async throws {
            let body: @Sendable (TransactionStore) async throws -> Void
            if let transactionId {
                body = { [json, signals] store in try await Self.show(transactionId, from: store, json: json, signals: signals) }
            } else {
                let limit = limit ?? (json ? 0 : Self.textLimit)
                let query = ListQuery(state: state, search: search, since: since?.date, limit: limit == 0 ? nil : limit, json: json, wide: wide)
                body = { store in try await Self.list(query, from: store) }
            }
            try await store.withStore(create: false, readOnly: true, encryption: try store.anyStore(), body)
        }

        static func show(_ transactionId: String, from store: TransactionStore, json: Bool, signals: Bool) async throws {
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
        }

        /// What the list shows, as the options gave it.
        struct ListQuery: Sendable {
            var state: DocumentSubmissionStatus?
            var search: String?
            var since: Date?
            /// nil: every one.
            var limit: Int?
            var json: Bool
            var wide: Bool
        }

        static func list(_ query: ListQuery, from store: TransactionStore) async throws {
            let page = try await store.transactions(
                status: query.state, search: query.search.flatMap { $0.isEmpty ? nil : $0 }, changedSince: query.since, limit: query.limit)
            if query.json {
                for summary in page.transactions { print(StatusJSON.summary(summary)) }
                return
            }
            print(StatusText.text(page.transactions, wide: query.wide))
            if page.next != nil {
                CommandOutput.standardError(
                    "verify-pipeline: the \(page.transactions.count) most recently updated are shown; more match (--limit N for N, --limit 0 for all)\n"
                )
            }
        }
    }
}

/// `--since`: a moment, given as itself (`2026-12-01T00:00:00Z`) or as a time back from now (`90s`, `30m`, `12h`, `7d`).
struct ListSince: ExpressibleByArgument {
    var date: Date

    init?(argument: String) {
        // A pipeline file's durations (PipelineConfiguration.duration), here only a unit's: a bare number is no time.
        if let unit = argument.last, "smhd".contains(unit), let span = PipelineConfiguration.duration(argument), span > 0, span < 100 * 365 * 86_400 {
            date = Date().addingTimeInterval(-span)
        } else if let moment = Timestamp.date(argument) {
            date = moment
        } else {
            return nil
        }
    }
}

// `--state completed` or `--state COMPLETED`; the help lists the wire spellings.
extension DocumentSubmissionStatus: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.uppercased())
    }
}
