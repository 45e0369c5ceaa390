import Foundation

/// One submitted document's result (CONTRACT §1), with the transaction's statuses and timestamps.
public struct DocumentSubmissionResponse: Codable, Sendable, Equatable {
    public var transactionId: String
    public var documentType: DocumentType
    public var documentStatus: [DocumentType: DocumentStatus]
    public var documentSubmissionStatus: DocumentSubmissionStatus
    public var document: DocumentFields
    public var createdAt: Date
    public var updatedAt: Date
    public var expiresAt: Date

    public init(
        transactionId: String, documentType: DocumentType, documentStatus: [DocumentType: DocumentStatus],
        documentSubmissionStatus: DocumentSubmissionStatus, document: DocumentFields,
        createdAt: Date, updatedAt: Date, expiresAt: Date
    ) {
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
        documentStatus = try Dictionary(
            uniqueKeysWithValues: statuses.map { name, status in
                guard let type = DocumentType(rawValue: name) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .documentStatus, in: container,
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
        try container.encode(
            Dictionary(uniqueKeysWithValues: documentStatus.map { ($0.key.rawValue, $0.value) }),
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

    /// The time `text` gives, when it is one a store can hold (`BoundedTime`: 1970 to 9999).
    public static func date(_ text: String) -> Date? {
        // Not a timestamp with fractions: the other form is tried next.
        let date =
            (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt).parse(text))
            ?? (try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text))
        return date.flatMap(BoundedTime.init).map(\.date)
    }

    static func decode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Date {
        let text = try container.decode(String.self, forKey: key)
        guard let date = date(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an ISO-8601 timestamp")
        }
        return date
    }
}

/// A time every store can hold and every client can send back: whole microseconds since 1970, up to the end of
/// 9999. Times that come from outside (an input's `createdAt`, an API cursor) are made one before they reach a
/// store, so none can overflow a database's date encoding (PostgreSQL's is microseconds in 64 bits).
public struct BoundedTime: Sendable, Hashable, Comparable {
    public static let microsecondRange: ClosedRange<Int64> = 0...253_402_300_799_999_999

    public let microseconds: Int64

    public init?(microseconds: Int64) {
        guard Self.microsecondRange.contains(microseconds) else { return nil }
        self.microseconds = microseconds
    }

    public init?(_ date: Date) {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard value.isFinite, value >= 0, value <= Double(Self.microsecondRange.upperBound) else { return nil }
        self.init(microseconds: Int64(value))
    }

    public var date: Date { Date(timeIntervalSince1970: Double(microseconds) / 1_000_000) }

    public static func < (a: BoundedTime, b: BoundedTime) -> Bool { a.microseconds < b.microseconds }
}
