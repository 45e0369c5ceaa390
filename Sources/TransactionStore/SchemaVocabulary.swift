import VerifyModel

/// The values the schema's CHECK constraints allow, quoted for SQL: both stores' migrations use these,
/// so a spelling added to the model reaches SQLite and PostgreSQL alike (in a new migration).
enum SchemaVocabulary {
    static let documentTypes = quoted(DocumentType.allCases.map(\.rawValue))
    static let documentStatuses = quoted(DocumentStatus.allCases.map(\.rawValue))
    static let submissionStatuses = quoted(DocumentSubmissionStatus.allCases.map(\.rawValue))
    static let submissionOutcomes = quoted(SubmissionOutcome.allCases.map(\.rawValue))

    private static func quoted(_ values: [String]) -> String {
        values.map { "'\($0)'" }.joined(separator: ",")
    }
}
