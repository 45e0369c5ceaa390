import Application
import ArgumentParser
import DocumentOutcomes
import Foundation
import Pipeline
import TransactionStore
import TransactionViews
import VerifyModel

extension VerifyPipeline {
    struct Review: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "review",
            abstract: "The review queue: every failed document, open until an operator resolves it.",
            discussion: """
                list shows the queue; export writes a failed document's kept inputs for a person holding the key; accept \
                collects and submits fields an operator entered; replay sends a failed submission again, or reads a refused \
                capture again with the current readers; reject closes a review with a reason. Actions exit 0 when done, 1 \
                when refused (closed already, held by another operator, failed again: the reason is printed).
                """,
            subcommands: [List.self, Export.self, Accept.self, Replay.self, Reject.self])
    }
}

/// Which review a command acts on: a transaction's document type, or a review's id (an unattached one has only that).
struct ReviewTarget: ParsableArguments {
    @Argument(help: "The transaction.") var transaction: String?
    @Argument(help: "The document type (GOVERNMENT_ID, SELFIE, EMAIL, PHONE, VOICE).") var type: String?
    @Option(help: ArgumentHelp("The review's id, as `review list` shows it.", valueName: "n")) var id: Int64?

    /// Nothing named: the command decides (`replay --all` names no review; the others require one: `required()`).
    var isEmpty: Bool { transaction == nil && type == nil && id == nil }

    func validate() throws {
        if !isEmpty { guard (transaction != nil && type != nil) != (id != nil) else { throw Self.usage } }
        if let type, DocumentType(rawValue: type) == nil { throw ValidationError("'\(type)' is not a document type") }
    }

    static let usage = ValidationError("name TRANSACTION TYPE, or --id N")

    func required() throws {
        if isEmpty { throw Self.usage }
    }

    func entry(_ store: TransactionStore) async throws -> ReviewEntry {
        if let id, let entry = try await store.review(id: id) { return entry }
        if let transaction, let type = type.flatMap(DocumentType.init(rawValue:)),
            let entry = try await store.review(transactionId: transaction, type: type)
        {
            return entry
        }
        throw ReviewRefusal("no such review")
    }
}

/// An action refused for this review: exit 1 with the reason.
struct ReviewRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Who acts: `--operator NAME` or VERIFY_PIPELINE_OPERATOR; the history records it.
struct OperatorOption: ParsableArguments {
    @Option(
        name: .customLong("operator"), help: ArgumentHelp("Who acts (or VERIFY_PIPELINE_OPERATOR), as the history records it.", valueName: "name"))
    var name: String?

    func resolved() throws -> String {
        guard let name = name ?? ProcessInfo.processInfo.environment["VERIFY_PIPELINE_OPERATOR"], !name.isEmpty else {
            throw CommandFailure("name the operator: --operator NAME or VERIFY_PIPELINE_OPERATOR")
        }
        guard name.count <= 64,
            name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._@-".unicodeScalars.contains($0)) })
        else {
            throw CommandFailure("the operator's name must be 1 to 64 of A-Z a-z 0-9 . _ @ -")
        }
        return name
    }
}

extension VerifyPipeline.Review {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the review queue, the soonest expiry first.")

        @Option(help: ArgumentHelp("Only reviews of this error code.", valueName: "code")) var code: String?
        @Option(help: ArgumentHelp("Only reviews in this state: open (default), accepted, replayed, rejected, resolved.", valueName: "state"))
        var state: String?
        @Flag(help: "Every review, closed ones too.") var all = false
        @Flag(help: "One JSON object per review.") var json = false
        @OptionGroup var store: StoreOptions

        @OptionGroup var log: LogOptions

        func run() async throws {
            var states: Set<ReviewState>? = [.open]
            if all { states = nil }
            if let state {
                guard let value = ReviewState(rawValue: state) else {
                    throw CommandFailure("--state must be one of \(ReviewState.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                states = [value]
            }
            let filter = ReviewFilter(states: states, code: code)
            let entries = try await store.withStore(create: false, readOnly: true, encryption: try store.anyStore()) { store in
                var entries: [ReviewEntry] = [], offset = 0
                while true {
                    let page = try await store.reviews(filter, limit: 500, offset: offset)
                    entries += page.entries
                    guard let next = page.next else { return entries }
                    offset = Int(next)
                }
            }
            if json {
                for entry in entries { print(ReviewViews.json(entry)) }
            } else {
                print(ReviewViews.table(entries, now: Date()))
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a failed document's kept inputs to a new folder (0700, files 0600), for a person holding the key.",
            discussion:
                "Exported files are outside the store's protection and its retention: delete them when done. The export is recorded in the history.")

        @OptionGroup var target: ReviewTarget
        @Option(
            help: ArgumentHelp("The folder to create; an existing path (a symlink included) is refused.", valueName: "dir"),
            completion: .directory) var out: String
        @OptionGroup var operatorOption: OperatorOption
        @OptionGroup var store: StoreOptions

        @OptionGroup var log: LogOptions

        func validate() throws { try target.required() }

        func run() async throws {
            let name = try operatorOption.resolved(), target = target, out = out
            do {
                try await store.withStore(create: false, encryption: try store.anyStore()) { store in
                    let entry = try await target.entry(store)
                    guard entry.inputs == .kept, let json = try await store.reviewInputs(of: entry) else {
                        throw ReviewRefusal("review \(entry.id) keeps no inputs (\(entry.inputs.rawValue)): nothing to export")
                    }
                    let inputs = try RetainedInputs(json: json)
                    try ReviewExport.write(inputs, to: out)
                    try await store.recordExport(entry, operator: name, path: out, at: Date())
                }
            } catch let refusal as ReviewRefusal {
                CommandOutput.fail(refusal.description)
                throw ExitCode(1)
            }
            print(out.escapingControls)
        }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Collect and submit fields an operator entered for a failed document.",
            discussion: """
                FILE is a JSON object of the data model's document keys. The fields go through the parsers and rules captured \
                fields do (mrzData through the MRZ parser and its check digits, barcode through the AAMVA parser, the identity \
                rule for a government id); the document's kept images go with them.
                """)

        @OptionGroup var target: ReviewTarget
        @Option(help: ArgumentHelp("The operator's fields (JSON).", valueName: "file")) var fields: String
        @OptionGroup var operatorOption: OperatorOption
        @OptionGroup var options: ConfigurationOptions

        func validate() throws { try target.required() }

        func run() async throws {
            let name = try operatorOption.resolved()
            guard let data = FileManager.default.contents(atPath: fields) else { throw CommandFailure("cannot read \(fields)") }
            let entered: DocumentFields
            do {
                entered = try ReviewBatch.fields(json: data)
            } catch let error as DocumentFailure {
                CommandOutput.fail("\(error.code.rawValue): \(error.message)")
                throw ExitCode(1)
            }
            try await Self.act(options, target, name) { application, entry in
                try await application.resend([entry], fields: entered, operator: name)
            }
        }

        /// Opens the application, finds the review, acts, and prints each result; exit 1 when any was not done.
        static func act(
            _ options: ConfigurationOptions, _ target: ReviewTarget?, _ name: String, filter: ReviewFilter? = nil,
            _ body: @escaping @Sendable (PipelineApplication, ReviewEntry) async throws -> [ReviewResult]
        ) async throws {
            let configuration = try options.configuration()
            var application = PipelineApplication(
                configuration: configuration, store: try options.store.location(), encryption: try options.storeEncryption(configuration),
                logger: options.makeLogger())
            application.pipelineName = options.pipeline ?? "pipeline"
            let results: [ReviewResult]
            do {
                if let target {
                    let entry = try await application.withStore { store in try await target.entry(store) }
                    results = try await body(application, entry)
                } else {
                    let entries = try await application.withStore { store in try await store.reviews(filter ?? ReviewFilter(), limit: 10_000).entries
                    }
                    results = try await entries.isEmpty ? [] : application.resend(entries, fields: nil, operator: name)
                }
            } catch let refusal as ReviewRefusal {
                CommandOutput.fail(refusal.description)
                throw ExitCode(1)
            }
            for result in results { print(ReviewViews.result(result).escapingControls) }
            if results.isEmpty, target == nil { CommandOutput.fail("no open review to replay") }
            if results.contains(where: { !$0.done }) { throw ExitCode(1) }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a failed submission again under its idempotency key, or read a refused capture again from its kept inputs.")

        @OptionGroup var target: ReviewTarget
        @Flag(help: "Every open review (with --code, of that code).") var all = false
        @Option(help: ArgumentHelp("With --all: only reviews of this error code.", valueName: "code")) var code: String?
        @OptionGroup var operatorOption: OperatorOption
        @OptionGroup var options: ConfigurationOptions

        func validate() throws {
            if all {
                guard target.isEmpty else { throw ValidationError("--all names no review") }
            } else {
                try target.required()
            }
        }

        func run() async throws {
            let name = try operatorOption.resolved()
            try await Accept.act(options, all ? nil : target, name, filter: ReviewFilter(code: code)) { application, entry in
                try await application.resend([entry], fields: nil, operator: name)
            }
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Close a review without a document: an OPTIONAL document becomes SKIPPED, a REQUIRED one stays REQUIRED.")

        @OptionGroup var target: ReviewTarget
        @Option(
            help: ArgumentHelp(
                "Why: \(RejectReason.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "reason"))
        var reason: String
        @Option(help: ArgumentHelp("A note, kept sealed with the transaction and purged with it.", valueName: "text")) var note: String?
        @OptionGroup var operatorOption: OperatorOption
        @OptionGroup var options: ConfigurationOptions

        func validate() throws {
            try target.required()
            guard RejectReason(rawValue: reason) != nil else {
                throw ValidationError("--reason must be one of \(RejectReason.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if let note, note.utf8.count > 4096 { throw ValidationError("--note holds at most 4096 bytes") }
        }

        func run() async throws {
            let name = try operatorOption.resolved(), reason = RejectReason(rawValue: reason) ?? .other, note = note
            try await Accept.act(options, target, name) { application, entry in
                [try await application.reject(entry, reason: reason, note: note, operator: name)]
            }
        }
    }
}
