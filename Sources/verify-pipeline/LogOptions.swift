import ArgumentParser
import Foundation
import Logging

/// `--log-level` and `--log-format`, on every command: logs go to stderr, as text for a person or as one JSON
/// object a line for a log shipper. Logs never hold document data, in either format.
struct LogOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(
        help: ArgumentHelp(
            "Log level on stderr: trace, debug, info, notice, warning, error, critical. Logs never hold document data.", valueName: "level"))
    var logLevel: Logger.Level = .warning

    @Option(help: ArgumentHelp("Log lines on stderr as text, or json (one object a line: time, level, label, message, metadata)."))
    var logFormat: Format = .text

    func makeLogger(label: String = "verify-pipeline") -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = logLevel
        return logger
    }

    /// The one place logging is set up (`main`, once the command line is parsed): libraries only take the Logger
    /// they are given.
    static func bootstrap(_ format: Format) {
        switch format {
        case .text: LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        }
    }
}

/// A command whose logs `--log-format` and `--log-level` set.
protocol LoggingCommand {
    var log: LogOptions { get }
}

/// One JSON object a line on stderr: `time` (RFC 3339, UTC, milliseconds), `level`, `label`, `message`, `source`,
/// and the metadata's keys under `metadata`. Each line is written whole, with one `write`.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let given = event.metadata { merged.merge(given) { _, new in new } }
        var line: [String: JSONValue] = [
            "time": .string(Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))),
            "level": .string(event.level.rawValue), "label": .string(label), "message": .string(event.message.description),
            "source": .string(event.source)
        ]
        if !merged.isEmpty { line["metadata"] = .object(merged.mapValues(JSONValue.init)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(line) else { return }
        data.append(0x0A)
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// A metadata value as JSON: strings and string-convertibles as strings, arrays and dictionaries as themselves.
    enum JSONValue: Encodable {
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])

        init(_ value: Logger.Metadata.Value) {
            switch value {
            case .string(let text): self = .string(text)
            case .stringConvertible(let convertible): self = .string(convertible.description)
            case .array(let values): self = .array(values.map(JSONValue.init))
            case .dictionary(let values): self = .object(values.mapValues(JSONValue.init))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let text): try container.encode(text)
            case .array(let values): try container.encode(values)
            case .object(let values): try container.encode(values)
            }
        }
    }
}

extension VerifyPipeline.Run: LoggingCommand { var log: LogOptions { options.common.log } }
extension VerifyPipeline.Stream: LoggingCommand { var log: LogOptions { options.common.log } }
extension VerifyPipeline.Worker: LoggingCommand { var log: LogOptions { options.common.log } }
extension VerifyPipeline.Enqueue: LoggingCommand { var log: LogOptions { options.log } }
extension VerifyPipeline.Review.Accept: LoggingCommand { var log: LogOptions { options.log } }
extension VerifyPipeline.Review.Replay: LoggingCommand { var log: LogOptions { options.log } }
extension VerifyPipeline.Review.Reject: LoggingCommand { var log: LogOptions { options.log } }
extension VerifyPipeline.Review.List: LoggingCommand {}
extension VerifyPipeline.Review.Export: LoggingCommand {}
extension VerifyPipeline.Status: LoggingCommand {}
extension VerifyPipeline.Scan: LoggingCommand {}
extension VerifyPipeline.Plan: LoggingCommand {}
extension VerifyPipeline.Serve: LoggingCommand {}
extension VerifyPipeline.StoreCommand.Purge: LoggingCommand {}
extension VerifyPipeline.StoreCommand.Encrypt: LoggingCommand {}
extension VerifyPipeline.StoreCommand.RotateKey: LoggingCommand {}
