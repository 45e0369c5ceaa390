import Foundation

/// Why a verification QR was refused. `code` is one of the SDK's five `QRError` codes (CONTRACT §2).
public enum QRError: Error, Sendable, CaseIterable, CustomStringConvertible {
    /// Not a URL, or a URL that is not a verification QR.
    case invalidQR
    /// A URL whose parts cannot be read (bad percent-escapes, a malformed `url` item).
    case unableToParse
    /// A URL with no query at all.
    case missingQueryItems
    case missingVerificationCode
    case missingTransactionId
    /// A `txnid` or `code` outside the safe set (`VerificationQR.isSafeIdentifier`): it would reach URLs, logs
    /// and terminals. Its code is `invalidQR`.
    case unsafeIdentifier
    /// A `txnid` or `code` given twice with different values: which one a reader takes is up to the reader, so the
    /// QR could name one transaction to this tool and another to the verification service. Its code is `invalidQR`.
    case ambiguousIdentifier

    /// The SDK's code, as results print it.
    public var code: String {
        switch self {
        case .invalidQR, .unsafeIdentifier, .ambiguousIdentifier: "invalidQR"
        case .unableToParse: "unableToParse"
        case .missingQueryItems: "missingQueryItems"
        case .missingVerificationCode: "missingVerificationCode"
        case .missingTransactionId: "missingTransactionId"
        }
    }

    /// The refusal a code names (for `invalidQR`, the general one).
    public init?(code: String) {
        guard let error = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = error
    }

    public var description: String {
        switch self {
        case .invalidQR: "not a verification QR code (expected an https URL with txnid and code)"
        case .unableToParse: "the verification URL cannot be parsed"
        case .missingQueryItems: "the verification URL has no query items"
        case .missingVerificationCode: "the verification URL has no 'code'"
        case .missingTransactionId: "the verification URL has no 'txnid'"
        case .unsafeIdentifier: "the verification URL's 'txnid' or 'code' is not 1 to 128 of A-Z a-z 0-9 . _ : -"
        case .ambiguousIdentifier: "the verification URL gives 'txnid' or 'code' more than once, with different values"
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

    /// Parses either form of CONTRACT §2; surrounding whitespace is ignored.
    public init(parsing text: String) throws(QRError) {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let schemeEnd = text.range(of: "://"),
            ["http", "https"].contains(text[..<schemeEnd.lowerBound].lowercased()),
            !text[schemeEnd.upperBound...].isEmpty,
            !text.contains(where: { $0.isNewline })
        else {
            throw .invalidQR
        }
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
            throw .unableToParse
        }
        guard let items = components.queryItems, !items.isEmpty else { throw .missingQueryItems }
        func value(_ name: String) -> String? {
            items.first { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : $0 }
        }
        for name in ["txnid", "code"] where Set(items.lazy.filter { $0.name == name }.map(\.value)).count > 1 {
            throw .ambiguousIdentifier
        }
        let transactionId = value("txnid"), code = value("code")
        if transactionId == nil, code == nil { throw .invalidQR }
        guard let transactionId else { throw .missingTransactionId }
        guard let code else { throw .missingVerificationCode }
        guard Self.isSafeIdentifier(transactionId), Self.isSafeIdentifier(code) else { throw .unsafeIdentifier }

        var apiBase: URL?
        if let base = value("url") {
            guard let url = URL(string: base), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host?.isEmpty == false
            else {
                throw .unableToParse
            }
            apiBase = url
        }
        // The webapp form carries the environment in its path: /{envId}/verify/...
        let pathEnv = components.path.split(separator: "/").first.flatMap { segment in
            components.path.contains("/verify/") ? String(segment) : nil
        }
        self.init(
            transactionId: transactionId, verificationCode: code, apiBase: apiBase,
            envId: value("envId") ?? pathEnv, source: value("source"))
    }
}

extension VerificationQR {
    /// Transaction ids and verification codes are 1 to 128 of `A-Z a-z 0-9 . _ : -`: safe in a URL path, a log
    /// line and a terminal, and never `..` alone.
    public static func isSafeIdentifier(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text != "." && text != ".."
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}
