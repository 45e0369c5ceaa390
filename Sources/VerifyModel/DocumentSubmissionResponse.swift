import Foundation

/// One submitted document's result (SPEC §1), with the transaction's statuses and timestamps.
public struct DocumentSubmissionResponse: Codable, Sendable, Equatable {
    public var transactionId: String
    public var documentType: DocumentType
    public var documentStatus: [DocumentType: DocumentStatus]
    public var documentSubmissionStatus: DocumentSubmissionStatus
    public var document: DocumentFields
    public var createdAt: Date
    public var updatedAt: Date
    public var expiresAt: Date

    public init(transactionId: String, documentType: DocumentType, documentStatus: [DocumentType: DocumentStatus],
                documentSubmissionStatus: DocumentSubmissionStatus, document: DocumentFields,
                createdAt: Date, updatedAt: Date, expiresAt: Date) {
        self.transactionId = transactionId
        self.documentType = documentType
        self.documentStatus = documentStatus
        self.documentSubmissionStatus = documentSubmissionStatus
        self.document = document
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
    }

    private enum CodingKeys: String, CodingKey {
        case transactionId, documentType, documentStatus, documentSubmissionStatus, document
        case createdAt, updatedAt, expiresAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        transactionId = try container.decode(String.self, forKey: .transactionId)
        documentType = try container.decode(DocumentType.self, forKey: .documentType)
        let statuses = try container.decode([String: DocumentStatus].self, forKey: .documentStatus)
        documentStatus = try Dictionary(uniqueKeysWithValues: statuses.map { name, status in
            guard let type = DocumentType(rawValue: name) else {
                throw DecodingError.dataCorruptedError(forKey: .documentStatus, in: container,
                                                       debugDescription: "unknown document type '\(name)'")
            }
            return (type, status)
        })
        documentSubmissionStatus = try container.decode(DocumentSubmissionStatus.self, forKey: .documentSubmissionStatus)
        document = try container.decode(DocumentFields.self, forKey: .document)
        createdAt = try Timestamp.decode(container, .createdAt)
        updatedAt = try Timestamp.decode(container, .updatedAt)
        expiresAt = try Timestamp.decode(container, .expiresAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(transactionId, forKey: .transactionId)
        try container.encode(documentType, forKey: .documentType)
        try container.encode(Dictionary(uniqueKeysWithValues: documentStatus.map { ($0.key.rawValue, $0.value) }),
                             forKey: .documentStatus)
        try container.encode(documentSubmissionStatus, forKey: .documentSubmissionStatus)
        try container.encode(document, forKey: .document)
        try container.encode(Timestamp.string(createdAt), forKey: .createdAt)
        try container.encode(Timestamp.string(updatedAt), forKey: .updatedAt)
        try container.encode(Timestamp.string(expiresAt), forKey: .expiresAt)
    }
}

/// ISO-8601 UTC timestamps with milliseconds, e.g. `2026-11-22T09:52:18.123Z`.
public enum Timestamp {
    public static func string(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    public static func date(_ text: String) -> Date? {
        // Not a timestamp with fractions: the other form is tried next.
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt).parse(text))
            ?? (try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text))
    }

    static func decode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Date {
        let text = try container.decode(String.self, forKey: key)
        guard let date = date(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an ISO-8601 timestamp")
        }
        return date
    }
}
