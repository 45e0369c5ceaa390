import Foundation

/// Kinds of document a transaction collects (CONTRACT §1), spelled as on the wire.
public enum DocumentType: String, Codable, Sendable, CaseIterable, Comparable {
    case governmentId = "GOVERNMENT_ID"
    case selfie = "SELFIE"
    case email = "EMAIL"
    case phone = "PHONE"
    case voice = "VOICE"

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Where one document stands (CONTRACT §1).
public enum DocumentStatus: String, Codable, Sendable, CaseIterable {
    case required = "REQUIRED"
    case optional = "OPTIONAL"
    case collected = "COLLECTED"
    case processed = "PROCESSED"
    case skipped = "SKIPPED"
}

/// Where the whole transaction stands (CONTRACT §1).
public enum DocumentSubmissionStatus: String, Codable, Sendable, CaseIterable {
    case notStarted = "NOT_STARTED"
    case started = "STARTED"
    case process = "PROCESS"
    case completed = "COMPLETED"
}

/// What a pipeline's policy asks of a document type; a disabled type is absent from the transaction.
public enum DocumentRequirement: String, Codable, Sendable, CaseIterable {
    case required = "REQUIRED"
    case optional = "OPTIONAL"
    case disabled = "DISABLED"

    /// The status a document starts at, and returns to after a permanent submission failure.
    public var initialStatus: DocumentStatus? {
        switch self {
        case .required: .required
        case .optional: .optional
        case .disabled: nil
        }
    }
}
