import Foundation

/// The SDK's `QRError` codes (SPEC §2).
public enum QRError: String, Error, Sendable, CaseIterable, CustomStringConvertible {
    /// Not a URL, or a URL that is not a verification QR.
    case invalidQR
    /// A URL whose parts cannot be read (bad percent-escapes, a malformed `url` item).
    case unableToParse
    /// A URL with no query at all.
    case missingQueryItems
    case missingVerificationCode
    case missingTransactionId

    public var description: String {
        switch self {
        case .invalidQR: "not a verification QR code (expected an https URL with txnid and code)"
        case .unableToParse: "the verification URL cannot be parsed"
        case .missingQueryItems: "the verification URL has no query items"
        case .missingVerificationCode: "the verification URL has no 'code'"
        case .missingTransactionId: "the verification URL has no 'txnid'"
        }
    }
}

/// What a verification QR identifies: the transaction, its verification code, and where its API lives.
public struct VerificationQR: Sendable, Equatable, Codable {
    public var transactionId: String
    public var verificationCode: String
    /// The `url` query item: the verification API's base.
    public var apiBase: URL?
    public var envId: String?
    public var source: String?

    public init(transactionId: String, verificationCode: String, apiBase: URL? = nil, envId: String? = nil, source: String? = nil) {
        self.transactionId = transactionId
        self.verificationCode = verificationCode
        self.apiBase = apiBase
        self.envId = envId
        self.source = source
    }

    /// Parses either form of SPEC §2; surrounding whitespace is ignored.
    public init(parsing text: String) throws(QRError) {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let schemeEnd = text.range(of: "://"),
              ["http", "https"].contains(text[..<schemeEnd.lowerBound].lowercased()),
              !text[schemeEnd.upperBound...].isEmpty,
              !text.contains(where: { $0.isNewline }) else {
            throw .invalidQR
        }
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            throw .unableToParse
        }
        guard let items = components.queryItems, !items.isEmpty else { throw .missingQueryItems }
        func value(_ name: String) -> String? {
            items.first { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : $0 }
        }
        let transactionId = value("txnid"), code = value("code")
        if transactionId == nil, code == nil { throw .invalidQR }
        guard let transactionId else { throw .missingTransactionId }
        guard let code else { throw .missingVerificationCode }

        var apiBase: URL?
        if let base = value("url") {
            guard let url = URL(string: base), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                  url.host?.isEmpty == false else {
                throw .unableToParse
            }
            apiBase = url
        }
        // The webapp form carries the environment in its path: /{envId}/verify/...
        let pathEnv = components.path.split(separator: "/").first.flatMap { segment in
            components.path.contains("/verify/") ? String(segment) : nil
        }
        self.init(transactionId: transactionId, verificationCode: code, apiBase: apiBase,
                  envId: value("envId") ?? pathEnv, source: value("source"))
    }
}
