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
    package var track = Stage(workers: 1, queue: 64)
    package var submit = Stage(workers: 4, queue: 256)
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

    /// Parses pipeline YAML; unknown keys are refused with their path (e.g. `stages.scan.wokers`).
    package init(yaml: String, name file: String = "pipeline") throws(ConfigurationError) {
        self.init()
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError("\(file) is not valid YAML: \(Self.oneLine(error))")
        }
        guard let root else { return }
        let top = try Section(root, path: "", file: file)
        try top.only(["name", "policy", "ingest", "stages", "scan", "protect", "submitter", "store", "retention", "review"])
        if let value = try top.string("name") { name = value }

        if let policy = try top.section("policy") {
            try policy.only(["documents", "transactionLifetime", "failExpiredId"])
            if let documentsSection = try policy.section("documents") {
                var documents: [DocumentType: DocumentRequirement] = Dictionary(uniqueKeysWithValues: DocumentType.allCases.map { ($0, .disabled) })
                for key in documentsSection.keys {
                    guard let type = DocumentType(rawValue: key) else {
                        throw documentsSection.error(
                            key, "unknown document type (known: \(DocumentType.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    let value = try documentsSection.string(key) ?? ""
                    guard let requirement = DocumentRequirement(rawValue: value.uppercased()) else {
                        throw documentsSection.error(key, "must be REQUIRED, OPTIONAL or DISABLED, not '\(value)'")
                    }
                    documents[type] = requirement
                }
                guard documents.values.contains(where: { $0 != .disabled }) else {
                    throw documentsSection.error(nil, "enables no document type")
                }
                self.documents = documents
            }
            if let lifetime = try policy.string("transactionLifetime") {
                guard let seconds = Self.duration(lifetime), Self.lifetimes.contains(seconds) else {
                    throw policy.error("transactionLifetime", "must be a duration from 1s to 365d such as 90s, 30m, 12h or 7d")
                }
                transactionLifetime = seconds
            }
            if let value = try policy.bool("failExpiredId") { failExpiredId = value }
        }

        if let ingest = try top.section("ingest") {
            try ingest.only(["allowedPaths", "maxLineBytes"])
            if let paths = try ingest.strings("allowedPaths") {
                guard !paths.contains(where: \.isEmpty) else { throw ingest.error("allowedPaths", "must not hold an empty path") }
                allowedPaths = paths
            }
            if let value = try ingest.int("maxLineBytes", in: 1024...(1 << 30)) { maxLineBytes = value }
        }

        if let stages = try top.section("stages") {
            try stages.only(["decode", "scan", "track", "submit"])
            for (key, path) in [("decode", \PipelineConfiguration.decode), ("scan", \.scan), ("track", \.track), ("submit", \.submit)] {
                guard let stage = try stages.section(key) else { continue }
                try stage.only(["workers", "queue", "queueMiB"])
                if let workers = try stage.int("workers", in: 1...256) {
                    self[keyPath: path].workers = workers
                    workersSetByFile.insert(key)
                }
                if let queue = try stage.int("queue", in: 1...100_000) {
                    self[keyPath: path].queue = queue
                    queuesSetByFile.insert(key)
                }
                if let mebibytes = try stage.int("queueMiB", in: 1...65_536) { self[keyPath: path].queueBytes = mebibytes << 20 }
            }
        }

        if let scan = try top.section("scan") {
            try scan.only(["symbologies", "requireBackBarcode", "opaqueBarcodes", "maxPixels"])
            if let names = try scan.strings("symbologies") {
                do {
                    symbologies = try BarcodeFormat.parseList(names)
                } catch {
                    throw scan.error("symbologies", error.description)
                }
            }
            if let value = try scan.bool("requireBackBarcode") { requireBackBarcode = value }
            switch try scan.string("opaqueBarcodes")?.lowercased() {
            case nil, "refuse": break
            case "accept": acceptOpaqueBarcodes = true
            case let other?:
                throw scan.error("opaqueBarcodes", "must be accept or refuse, not '\(other.count <= 16 ? other : "\(other.count) characters")'")
            }
            if let value = try scan.int("maxPixels", in: 1...1_000_000_000) { maxPixels = value }
        }

        if let section = try top.section("protect") {
            try section.only([
                "enabled", "envId", "deviceAttributesToIgnore", "isBehavioralDataCollection", "isConsoleLogEnabled",
                "isLazyMetadata", "customHost", "pauseBehavioralDataOnSuccess", "resumeBehavioralDataOnStart"
            ])
            var protect = ProtectConfiguration()
            protect.enabled = try section.bool("enabled") ?? false
            protect.envId = try section.string("envId")
            protect.deviceAttributesToIgnore = try section.strings("deviceAttributesToIgnore") ?? []
            protect.isBehavioralDataCollection = try section.bool("isBehavioralDataCollection") ?? true
            protect.isConsoleLogEnabled = try section.bool("isConsoleLogEnabled") ?? false
            protect.isLazyMetadata = try section.bool("isLazyMetadata") ?? false
            protect.customHost = try section.string("customHost")
            protect.pauseBehavioralDataOnSuccess = try section.bool("pauseBehavioralDataOnSuccess") ?? false
            protect.resumeBehavioralDataOnStart = try section.bool("resumeBehavioralDataOnStart") ?? false
            if protect.enabled, protect.envId?.isEmpty ?? true {
                throw section.error("envId", "is required when protect is enabled")
            }
            self.protect = protect
        }

        if let section = try top.section("submitter") {
            try section.only(["kind", "endpoint", "tokenEnv", "timeoutSeconds", "retry", "caFile"])
            var submitter = Submitter()
            if let kind = try section.string("kind") {
                guard let value = SubmitterKind(rawValue: kind) else {
                    throw section.error("kind", "must be local or http, not '\(kind)'")
                }
                submitter.kind = value
            }
            if let endpoint = try section.string("endpoint") {
                guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                    throw section.error("endpoint", "must be an http(s) URL")
                }
                submitter.endpoint = url
            }
            if let name = try section.string("tokenEnv") {
                guard Self.isVariableName(name) else {
                    throw section.error("tokenEnv", "must name an environment variable (letters, digits and _), not hold a token")
                }
                submitter.tokenEnv = name
            }
            submitter.caFile = try section.string("caFile")
            if let timeout = try section.double("timeoutSeconds", in: 0.1...3600) { submitter.timeoutSeconds = timeout }
            if let retry = try section.section("retry") {
                try retry.only(["maxAttempts", "initialBackoffMs", "maxBackoffMs"])
                if let value = try retry.int("maxAttempts", in: 1...100) { submitter.retry.maxAttempts = value }
                if let value = try retry.int("initialBackoffMs", in: 0...600_000) { submitter.retry.initialBackoffMs = value }
                if let value = try retry.int("maxBackoffMs", in: 0...3_600_000) { submitter.retry.maxBackoffMs = value }
            }
            if submitter.kind == .http, submitter.endpoint == nil {
                throw section.error("endpoint", "is required for the http submitter")
            }
            self.submitter = submitter
        }

        if let store = try top.section("store") {
            try store.only(["encryption"])
            if let encryption = try store.section("encryption") {
                try encryption.only(["enabled", "keyEnv"])
                if let enabled = try encryption.bool("enabled") { storeEncryption.enabled = enabled }
                if let name = try encryption.string("keyEnv") {
                    guard Self.isVariableName(name) else {
                        throw encryption.error("keyEnv", "must name an environment variable (letters, digits and _), not hold a key")
                    }
                    storeEncryption.keyEnv = name
                }
            }
        }

        if let variable = submitter.tokenEnv, storeSecretVariables.contains(variable) {
            throw ConfigurationError(
                "\(file): 'submitter.tokenEnv' names \(variable), which holds a secret of the store: the bearer token is sent to the endpoint; give the token a variable of its own"
            )
        }

        if let section = try top.section("retention") {
            try section.only(["mode", "keep", "maxAge", "interval"])
            if let mode = try section.string("mode") {
                guard let value = Retention.Mode(rawValue: mode) else {
                    throw section.error("mode", "must be one of \(Retention.Mode.allCases.map(\.rawValue).joined(separator: ", ")), not '\(mode)'")
                }
                retention.mode = value
            }
            if let keep = try section.int("keep", in: 0...100_000_000) { retention.keep = keep }
            if let text = try section.string("maxAge") {
                guard let seconds = Self.duration(text), Self.retentionAges.contains(seconds) else {
                    throw section.error("maxAge", "must be a duration from 1m to 3650d such as 90m, 12h or 30d")
                }
                retention.maxAge = seconds
            }
            if let text = try section.string("interval") {
                guard let seconds = Self.duration(text), Self.retentionIntervals.contains(seconds) else {
                    throw section.error("interval", "must be a duration from 10s to 7d such as 10m or 1h")
                }
                retentionInterval = seconds
            }
        }

        if let section = try top.section("review") {
            try section.only(["maxInputBytes", "maxStoreBytes", "inputsMaxAge"])
            if let bytes = try section.int("maxInputBytes", in: 0...(1 << 30)) { review.maxInputBytes = bytes }
            if let bytes = try section.int("maxStoreBytes", in: 0...(1 << 40)) { review.maxStoreBytes = bytes }
            if let text = try section.string("inputsMaxAge") {
                guard let seconds = Self.duration(text), Self.retentionAges.contains(seconds) else {
                    throw section.error("inputsMaxAge", "must be a duration from 1m to 3650d such as 12h or 30d")
                }
                review.inputsMaxAge = seconds
            }
        }
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

/// A YAML mapping being read, with the path used in error messages.
private struct Section {
    let mapping: Node.Mapping
    let path: String
    let file: String

    init(_ node: Node, path: String, file: String) throws(ConfigurationError) {
        guard let mapping = node.mapping else {
            throw ConfigurationError("\(file): \(path.isEmpty ? "the file" : "'\(path)'") must be a mapping of keys to values")
        }
        self.mapping = mapping
        self.path = path
        self.file = file
    }

    var keys: [String] { mapping.keys.compactMap(\.string) }

    func error(_ key: String?, _ message: String) -> ConfigurationError {
        let name = [path, key].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ".")
        return ConfigurationError("\(file): '\(name)' \(message)")
    }

    func only(_ allowed: Set<String>) throws(ConfigurationError) {
        for key in keys where !allowed.contains(key) {
            throw error(key, "is not a known key (known here: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    func node(_ key: String) -> Node? { mapping[key] }

    func section(_ key: String) throws(ConfigurationError) -> Section? {
        guard let node = node(key) else { return nil }
        if node.scalar?.string == "" || node.scalar?.string == "~" { return nil }
        return try Section(node, path: path.isEmpty ? key : "\(path).\(key)", file: file)
    }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let node = node(key) else { return nil }
        guard let scalar = node.scalar else { throw error(key, "must be a single value") }
        return scalar.string
    }

    func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let text = try string(key) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(key, "must be true or false, not '\(text)'")
        }
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let text = try string(key) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw error(key, "must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    func double(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let text = try string(key) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw error(key, "must be a number from \(range.lowerBound.formatted()) to \(range.upperBound.formatted())")
        }
        return value
    }

    func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let node = node(key) else { return nil }
        guard let sequence = node.sequence else { throw error(key, "must be a list") }
        var values: [String] = []
        for item in sequence {
            guard let value = item.scalar?.string else { throw error(key, "must be a list of single values") }
            values.append(value)
        }
        return values
    }
}
