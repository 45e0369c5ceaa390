import Foundation

/// The SDK's `DocumentSubmissionError` codes (SPEC §3); the raw values are the wire spellings.
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
