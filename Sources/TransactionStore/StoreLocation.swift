import Foundation

/// Where the store lives, from `--store URL` or `VERIFY_PIPELINE_STORE`.
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)

    public static let environmentVariable = "VERIFY_PIPELINE_STORE"
    public static let defaultLocation = StoreLocation.sqlite(path: "./verify-pipeline.sqlite")

    /// `sqlite:PATH`, `sqlite://PATH` or a plain path.
    public init(parsing text: String) throws(StoreError) {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw .cannotOpen("the store location is empty") }
        if text.hasPrefix("sqlite://") {
            self = .sqlite(path: String(text.dropFirst("sqlite://".count)))
        } else if text.hasPrefix("sqlite:") {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else if let scheme = text.range(of: "://").map({ text[..<$0.lowerBound] }) {
            throw .cannotOpen("unsupported store '\(scheme)://' (this version supports sqlite:PATH)")
        } else {
            self = .sqlite(path: text)
        }
    }

    /// The `--store` value if given, else the environment's, else `./verify-pipeline.sqlite`.
    public static func resolve(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreError) -> StoreLocation {
        if let option { return try StoreLocation(parsing: option) }
        if let value = environment[environmentVariable], !value.isEmpty { return try StoreLocation(parsing: value) }
        return defaultLocation
    }

    /// Opens the store; `create` is false for commands that only read.
    public func open(create: Bool) throws(StoreError) -> any TransactionStore {
        switch self {
        case .sqlite(let path): try SQLiteTransactionStore(path: path, create: create)
        }
    }

    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        }
    }
}
