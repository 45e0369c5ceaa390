import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where an HTTP endpoint listens: `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`, `localhost:0`, `0.0.0.0:9090`).
package struct BindAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(parsing text: String) throws(OperatorViewError) {
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

    /// Only this machine can reach it: a token is needed anywhere else. Decided on the address, not the text: an
    /// IPv4 literal in 127.0.0.0/8, `::1` (or ::ffff:127.x), or the name `localhost` (a host name that merely starts
    /// with `127.` is whatever DNS says it is).
    package var isLoopback: Bool {
        host == "localhost" || Self.isLoopbackLiteral(host)
    }

    /// `text` is an IP address literal on loopback.
    static func isLoopbackLiteral(_ text: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        // An IPv4-mapped loopback address, ::ffff:127.x.y.z.
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A configuration error of the operator's view: exit 2 with this reason.
package struct OperatorViewError: Error, Equatable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}
