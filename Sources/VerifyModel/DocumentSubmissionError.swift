import Foundation

/// The SDK's `DocumentSubmissionError` codes (CONTRACT §3); the raw values are the wire spellings.
public enum DocumentSubmissionErrorCode: String, Codable, Sendable, CaseIterable {
    case initiateDocumentTransactionError
    case submissionError
    case noDocumentToSubmitError
    case missingDocumentType
    case invalidKeyMap
    case documentCaptureError
    case documentSubmissionTimeoutError
    case missingOTPDestination
    case failedOTP
}

/// A per-document failure: a spec code and a message a user can act on.
public struct DocumentSubmissionError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: DocumentSubmissionErrorCode
    public var message: String

    public init(_ code: DocumentSubmissionErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// The code of any per-document failure: one of the SDK's `DocumentSubmissionError` or `QRError` codes.
/// Encodes as its wire spelling.
public enum FailureCode: Sendable, Hashable, Codable, CustomStringConvertible {
    case document(DocumentSubmissionErrorCode)
    case qr(QRError)

    public var rawValue: String {
        switch self {
        case .document(let code): code.rawValue
        case .qr(let error): error.code
        }
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        if let code = DocumentSubmissionErrorCode(rawValue: text) {
            self = .document(code)
        } else if let code = QRError(code: text) {
            self = .qr(code)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown failure code"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// An error that belongs to one document: a spec code, and a message a user can act on that never holds a
/// document value, a verification code or a token.
public protocol CodedError: Error, Sendable {
    var failureCode: FailureCode { get }
    var message: String { get }
}

extension FailureCode {
    /// The spec's code of any error, for a log line: a coded error's own, else `submissionError`.
    public init(of error: any Error) {
        self = (error as? any CodedError)?.failureCode ?? .document(.submissionError)
    }
}

extension DocumentSubmissionError: CodedError {
    public var failureCode: FailureCode { .document(code) }
}

extension QRError: CodedError {
    public var failureCode: FailureCode { .qr(self) }
    public var message: String { description }
}
