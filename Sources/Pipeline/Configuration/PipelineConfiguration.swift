import BarcodeScanning
import Foundation
import ImageDecoding
import Protect
import TransactionStore
import VerifyModel
import Yams

/// A pipeline file (CONTRACT §7). Every field has a default, so an empty file is a valid pipeline.
package struct PipelineConfiguration: Sendable, Equatable {
    package struct Stage: Sendable, Equatable {
        package var workers: Int
        /// Documents the queue in front of the stage holds at most.
        package var queue: Int
        /// Bytes (images, document fields) that queue holds at most: large images cannot pile up behind a slow
        /// stage. A single larger document still passes, alone.
        package var queueBytes: Int

        package init(workers: Int, queue: Int, queueBytes: Int = 32 << 20) {
            self.workers = workers
            self.queue = queue
            self.queueBytes = queueBytes
        }

        var limits: QueueLimits { QueueLimits(items: queue, bytes: queueBytes) }
    }

    package enum SubmitterKind: String, Sendable, Equatable {
        case local, http
    }

    package struct Retry: Sendable, Equatable {
        package var maxAttempts = 5
        package var initialBackoffMs = 200
        package var maxBackoffMs = 5000

        package init() {}
    }

    package struct Submitter: Sendable, Equatable {
        package var kind: SubmitterKind = .local
        package var endpoint: URL?
        /// The name of the environment variable holding a bearer token; never the token itself.
        package var tokenEnv: String?
        package var timeoutSeconds: Double = 10
        package var retry = Retry()
        /// PEM certificates trusted for an https endpoint besides the system's (a private CA).
        package var caFile: String?

        package init() {}

        /// How long a claim on a submission lasts (CONTRACT §8): the longest a submission can take (every attempt to its
        /// timeout, every backoff at its cap) and a margin for the store's writes. A process killed mid-send holds
        /// its documents that long before another takes them over.
        package var claimLease: Duration {
            guard kind == .http else { return .seconds(10) }
            let attempts = Double(retry.maxAttempts)
            let seconds = timeoutSeconds * attempts + Double(retry.maxBackoffMs) / 1000 * (attempts - 1) + 10
            return .milliseconds(Int64(seconds * 1000))
        }
    }

    package var name = "default"
    package var documents: [DocumentType: DocumentRequirement] = [
        .governmentId: .required, .selfie: .optional, .email: .optional, .phone: .optional, .voice: .disabled
    ]
    /// expiresAt = createdAt + this, unless the input gives the transaction's own expiry.
    package var transactionLifetime: TimeInterval = 30 * 60
    /// An identity document whose dateOfExpiry has passed is a documentCaptureError.
    package var failExpiredId = true
    /// The stages whose workers or queue the pipeline file sets; `sized(forCores:)` sizes the others.
    package var workersSetByFile: Set<String> = []
    package var queuesSetByFile: Set<String> = []
    package var decode = Stage(workers: 2, queue: 64)
    package var scan = Stage(workers: 2, queue: 64)
    /// One worker (parsing is quick next to decoding and scanning); its queue is the file's to bound.
    package var parse = Stage(workers: 1, queue: 64)
    package var track = Stage(workers: 1, queue: 64)
    package var submit = Stage(workers: 4, queue: 256)
    /// The finished documents waiting to be reported: one reporter, which writes each result as it comes.
    package var report = Stage(workers: 1, queue: 256)
    package var symbologies: Set<BarcodeFormat> = [.qrCode, .pdf417]
    /// A government-id back must carry a readable PDF417 (when PDF417 is enabled).
    package var requireBackBarcode = true
    /// Barcode text that is not AAMVA data (`barcode` on a stream line, `fields.barcode`): refused for a
    /// government id unless a pipeline accepts it, and then it identifies no one on its own.
    package var acceptOpaqueBarcodes = false
    package var maxPixels = 100_000_000
    /// Directories whose files stream lines may name (`frontImagePath`...); with none, such paths are refused.
    package var allowedPaths: [String] = []
    /// An NDJSON line longer than this is answered with an error line, without being held in memory.
    package var maxLineBytes = 64 << 20
    package var protect = ProtectConfiguration()
    package var submitter = Submitter()
    /// Identity data in the store is sealed (`store.encryption`): on unless a pipeline turns it off.
    package var storeEncryption = StoreEncryptionSettings()
    /// How long identity data stays in the store; kept for ever unless a pipeline says otherwise.
    package var retention = Retention()
    /// How often a `worker` applies the retention policy.
    package var retentionInterval: TimeInterval = 3600
    /// How much of failed documents' inputs the store keeps for review (`review`).
    package var review = ReviewLimits()

    package init() {}
}

/// `store.encryption`: whether the store seals identity data, and the variable its key-encryption key is read from.
package struct StoreEncryptionSettings: Sendable, Equatable {
    package var enabled = true
    package var keyEnv = KeyEncryptionKey.defaultVariable

    package init() {}
}

/// A pipeline file that cannot be used: a configuration error (exit 2), naming the key at fault.
package struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }

    init(_ message: String) { self.message = message }
}

extension PipelineConfiguration {
    /// Reads a pipeline file.
    package init(contentsOf url: URL) throws(ConfigurationError) {
        let text: String
        do throws(BoundedFile.ReadError) {
            text = try BoundedFile.readText(FileConfinement.resolve(url.path) ?? url.path, limit: TextInput.maxBytes)
        } catch {
            throw ConfigurationError("cannot read the pipeline file \(url.path): \(error.message)")
        }
        try self.init(yaml: text, name: url.lastPathComponent)
    }

    /// A YAML error on one line, where it is first: `line 3, column 4: did not find expected ',' or ']' (while
    /// parsing a flow sequence from line 2, column 16)`. Never the file's text (libyaml's message quotes the line).
    static func oneLine(_ error: any Error) -> String {
        func at(_ mark: Mark, _ problem: String, _ context: YamlError.Context?) -> String {
            let problem = problem.split(whereSeparator: \.isNewline).joined(separator: " ")
            let around = context.map { " (\($0.text) from line \($0.mark.line), column \($0.mark.column))" } ?? ""
            return "line \(mark.line), column \(mark.column): \(problem)\(around)"
        }
        switch error as? YamlError {
        case .scanner(let context, let problem, let mark, _)?, .parser(let context, let problem, let mark, _)?,
            .composer(let context, let problem, let mark, _)?:
            return at(mark, problem, context)
        case .duplicatedKeysInMapping(let duplicates, let context)?:
            return "line \(context.mark.line), column \(context.mark.column): keys given twice: \(duplicates.sorted().joined(separator: ", "))"
        case .reader(let problem, let offset, _, _)?:
            return "\(problem)" + (offset.map { " at byte \($0)" } ?? "")
        default:
            return "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
        }
    }

    /// Parses pipeline YAML; unknown keys are refused with their path (e.g. `stages.scan.wokers`). Each section is read
    /// by its own function, into its own type where it has one.
    package init(yaml: String, name file: String = "pipeline") throws(ConfigurationError) {
        self.init()
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError("\(file) is not valid YAML: \(Self.oneLine(error))")
        }
        guard let root else { return }
        let top = try YAMLSection(root, path: "", file: file)
        try top.only(["name", "policy", "ingest", "stages", "scan", "protect", "submitter", "store", "retention", "review"])
        if let value = try top.string("name") { name = value }
        if let section = try top.section("policy") { try readPolicy(section) }
        if let section = try top.section("ingest") { try readIngest(section) }
        if let section = try top.section("stages") { try readStages(section) }
        if let section = try top.section("scan") { try readScan(section) }
        if let section = try top.section("protect") { protect = try ProtectConfiguration(section) }
        if let section = try top.section("submitter") { submitter = try Submitter(section) }
        if let section = try top.section("store") { try storeEncryption.read(section) }
        if let variable = submitter.tokenEnv, storeSecretVariables.contains(variable) {
            throw ConfigurationError(
                "\(file): 'submitter.tokenEnv' names \(variable), which holds a secret of the store: the bearer token is sent to the endpoint; give the token a variable of its own"
            )
        }
        if let section = try top.section("retention") { try readRetention(section) }
        if let section = try top.section("review") { try review.read(section) }
    }

    /// The variables that hold the store's secrets, which no other setting may name: the key-encryption key's (the
    /// pipeline's and the default), and PostgreSQL's password.
    package var storeSecretVariables: Set<String> {
        [storeEncryption.keyEnv, KeyEncryptionKey.defaultVariable, "PGPASSWORD"]
    }

    static let retentionAges: ClosedRange<TimeInterval> = 60...(3650 * 86_400)
    static let retentionIntervals: ClosedRange<TimeInterval> = 10...(7 * 86_400)

    /// The transaction lifetimes a pipeline may set: from a second to a year.
    static let lifetimes: ClosedRange<TimeInterval> = 1...(365 * 86_400)

    /// A name for an environment variable that holds a secret: the file names the variable, never the secret.
    static func isVariableName(_ text: String) -> Bool {
        text.range(of: #"^[A-Za-z_][A-Za-z0-9_]{0,127}$"#, options: .regularExpression) != nil
    }

    /// `90s`, `30m`, `12h`, `7d`, or plain seconds; nil for anything else, infinities and NaN included.
    package static func duration(_ text: String) -> TimeInterval? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let value: Double? = if let unit = text.last, let scale = units[unit] { Double(text.dropLast()).map { $0 * scale } } else { Double(text) }
        guard let value, value.isFinite else { return nil }
        return value
    }
}
