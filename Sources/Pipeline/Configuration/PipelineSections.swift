import BarcodeScanning
import Foundation
import Protect
import TransactionStore
import VerifyModel

/// The pipeline file's sections (CONTRACT §7), each read by its own function: the ones with a type of their own into
/// that type, the rest into the configuration.
extension PipelineConfiguration {
    /// `policy`: the documents a transaction takes, its lifetime, and expired documents.
    mutating func readPolicy(_ policy: YAMLSection) throws(ConfigurationError) {
        try policy.only(["documents", "transactionLifetime", "failExpiredId"])
        if let section = try policy.section("documents") { documents = try Self.documents(section) }
        if let lifetime = try policy.string("transactionLifetime") {
            guard let seconds = Self.duration(lifetime), Self.lifetimes.contains(seconds) else {
                throw policy.error("transactionLifetime", "must be a duration from 1s to 365d such as 90s, 30m, 12h or 7d")
            }
            transactionLifetime = seconds
        }
        if let value = try policy.bool("failExpiredId") { failExpiredId = value }
    }

    /// `policy.documents`: each type's requirement; a type left out is disabled, and one must be enabled.
    static func documents(_ section: YAMLSection) throws(ConfigurationError) -> [DocumentType: DocumentRequirement] {
        var documents: [DocumentType: DocumentRequirement] = Dictionary(uniqueKeysWithValues: DocumentType.allCases.map { ($0, .disabled) })
        for key in section.keys {
            guard let type = DocumentType(rawValue: key) else {
                throw section.error(key, "unknown document type (known: \(DocumentType.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            let value = try section.string(key) ?? ""
            guard let requirement = DocumentRequirement(rawValue: value.uppercased()) else {
                throw section.error(key, "must be REQUIRED, OPTIONAL or DISABLED, not '\(value)'")
            }
            documents[type] = requirement
        }
        guard documents.values.contains(where: { $0 != .disabled }) else { throw section.error(nil, "enables no document type") }
        return documents
    }

    /// `ingest`: what stream lines may name, and how long a line may be.
    mutating func readIngest(_ ingest: YAMLSection) throws(ConfigurationError) {
        try ingest.only(["allowedPaths", "maxLineBytes"])
        if let paths = try ingest.strings("allowedPaths") {
            guard !paths.contains(where: \.isEmpty) else { throw ingest.error("allowedPaths", "must not hold an empty path") }
            allowedPaths = paths
        }
        if let value = try ingest.int("maxLineBytes", in: 1024...(1 << 30)) { maxLineBytes = value }
    }

    /// `stages`: each stage's workers and the bounds of the queue in front of it. Parse and report run one worker.
    mutating func readStages(_ stages: YAMLSection) throws(ConfigurationError) {
        let paths: [(String, WritableKeyPath<PipelineConfiguration, Stage>, workers: Bool)] = [
            ("decode", \.decode, true), ("scan", \.scan, true), ("parse", \.parse, false), ("track", \.track, true),
            ("submit", \.submit, true), ("report", \.report, false)
        ]
        try stages.only(Set(paths.map(\.0)))
        for (key, path, hasWorkers) in paths {
            guard let stage = try stages.section(key) else { continue }
            try stage.only(hasWorkers ? ["workers", "queue", "queueMiB"] : ["queue", "queueMiB"])
            if hasWorkers, let workers = try stage.int("workers", in: 1...256) {
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

    /// `scan`: the symbologies read, the licence back's barcode, opaque barcodes, and the largest image.
    mutating func readScan(_ scan: YAMLSection) throws(ConfigurationError) {
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

    /// `retention`: how long identity data is kept, and how often a worker applies that.
    mutating func readRetention(_ section: YAMLSection) throws(ConfigurationError) {
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
}

extension PipelineConfiguration.Submitter {
    /// `submitter`: where and how documents are submitted.
    init(_ section: YAMLSection) throws(ConfigurationError) {
        self.init()
        try section.only(["kind", "endpoint", "tokenEnv", "timeoutSeconds", "retry", "caFile"])
        if let text = try section.string("kind") {
            guard let value = PipelineConfiguration.SubmitterKind(rawValue: text) else {
                throw section.error("kind", "must be local or http, not '\(text)'")
            }
            kind = value
        }
        if let text = try section.string("endpoint") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw section.error("endpoint", "must be an http(s) URL")
            }
            endpoint = url
        }
        if let name = try section.string("tokenEnv") {
            guard PipelineConfiguration.isVariableName(name) else {
                throw section.error("tokenEnv", "must name an environment variable (letters, digits and _), not hold a token")
            }
            tokenEnv = name
        }
        caFile = try section.string("caFile")
        if let timeout = try section.double("timeoutSeconds", in: 0.1...3600) { timeoutSeconds = timeout }
        if let section = try section.section("retry") {
            try section.only(["maxAttempts", "initialBackoffMs", "maxBackoffMs"])
            if let value = try section.int("maxAttempts", in: 1...100) { retry.maxAttempts = value }
            if let value = try section.int("initialBackoffMs", in: 0...600_000) { retry.initialBackoffMs = value }
            if let value = try section.int("maxBackoffMs", in: 0...3_600_000) { retry.maxBackoffMs = value }
        }
        if kind == .http, endpoint == nil { throw section.error("endpoint", "is required for the http submitter") }
    }
}

extension ProtectConfiguration {
    /// `protect`: the signals attached to submissions.
    init(_ section: YAMLSection) throws(ConfigurationError) {
        self.init()
        try section.only([
            "enabled", "envId", "deviceAttributesToIgnore", "isBehavioralDataCollection", "isConsoleLogEnabled", "isLazyMetadata", "customHost",
            "pauseBehavioralDataOnSuccess", "resumeBehavioralDataOnStart"
        ])
        enabled = try section.bool("enabled") ?? false
        envId = try section.string("envId")
        deviceAttributesToIgnore = try section.strings("deviceAttributesToIgnore") ?? []
        isBehavioralDataCollection = try section.bool("isBehavioralDataCollection") ?? true
        isConsoleLogEnabled = try section.bool("isConsoleLogEnabled") ?? false
        isLazyMetadata = try section.bool("isLazyMetadata") ?? false
        customHost = try section.string("customHost")
        pauseBehavioralDataOnSuccess = try section.bool("pauseBehavioralDataOnSuccess") ?? false
        resumeBehavioralDataOnStart = try section.bool("resumeBehavioralDataOnStart") ?? false
        if enabled, envId?.isEmpty ?? true { throw section.error("envId", "is required when protect is enabled") }
    }
}

extension StoreEncryptionSettings {
    /// `store`: whether identity data is sealed, and the variable the key-encryption key is read from.
    mutating func read(_ store: YAMLSection) throws(ConfigurationError) {
        try store.only(["encryption"])
        guard let encryption = try store.section("encryption") else { return }
        try encryption.only(["enabled", "keyEnv"])
        if let value = try encryption.bool("enabled") { enabled = value }
        if let name = try encryption.string("keyEnv") {
            guard PipelineConfiguration.isVariableName(name) else {
                throw encryption.error("keyEnv", "must name an environment variable (letters, digits and _), not hold a key")
            }
            keyEnv = name
        }
    }
}

extension ReviewLimits {
    /// `review`: how much of failed documents' inputs the store keeps, and for how long.
    mutating func read(_ section: YAMLSection) throws(ConfigurationError) {
        try section.only(["maxInputBytes", "maxStoreBytes", "inputsMaxAge"])
        if let bytes = try section.int("maxInputBytes", in: 0...(1 << 30)) { maxInputBytes = bytes }
        if let bytes = try section.int("maxStoreBytes", in: 0...(1 << 40)) { maxStoreBytes = bytes }
        if let text = try section.string("inputsMaxAge") {
            guard let seconds = PipelineConfiguration.duration(text), PipelineConfiguration.retentionAges.contains(seconds) else {
                throw section.error("inputsMaxAge", "must be a duration from 1m to 3650d such as 12h or 30d")
            }
            inputsMaxAge = seconds
        }
    }
}
