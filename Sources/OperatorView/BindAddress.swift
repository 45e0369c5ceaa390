import Foundation

/// Where an HTTP endpoint listens: `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`, `localhost:0`, `0.0.0.0:9090`).
public struct BindAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(parsing text: String) throws(OperatorViewError) {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw OperatorViewError("'\(text)' is not HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".:-".contains($0) }) else {
            throw OperatorViewError("'\(text)' names no host")
        }
        self.host = host
        self.port = port
    }

    /// Only this machine can reach it: a token is needed anywhere else.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A configuration error of the operator's view: exit 2 with this reason.
public struct OperatorViewError: Error, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
