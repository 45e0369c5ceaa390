import Foundation

/// The keys of a document's `document` map (CONTRACT §1), spelled as on the wire.
public enum DocumentKey: String, Codable, Sendable, CaseIterable, Comparable, CodingKeyRepresentable {
    case frontImage, backImage, barcode, mrzData
    case firstName, middleName, lastName, fullName, additionalNameInfo
    case addressStreet, addressCity, addressState, addressZip, country
    case sex, dateOfBirth, placeOfBirth, nationality, maritalStatus, race, religion, residentialStatus
    case documentNumber, documentAdditionalNumber, personalIdNumber, dateOfIssue, dateOfExpiry
    case issuingAuthority, employer, profession
    case email, phone, selfie

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A document's fields: a map from the spec's keys to strings, encoded as a JSON object.
public struct DocumentFields: Codable, Sendable, Equatable, Sequence {
    public private(set) var values: [DocumentKey: String]

    public init(_ values: [DocumentKey: String] = [:]) {
        self.values = values
    }

    public subscript(key: DocumentKey) -> String? {
        get { values[key] }
        set { values[key] = newValue }
    }

    public var isEmpty: Bool { values.isEmpty }
    public var keys: [DocumentKey] { values.keys.sorted() }

    public func makeIterator() -> Dictionary<DocumentKey, String>.Iterator { values.makeIterator() }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode([String: String].self)
        var values: [DocumentKey: String] = [:]
        for (name, value) in raw {
            guard let key = DocumentKey(rawValue: name) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown document key '\(name)'")
            }
            values[key] = value
        }
        self.values = values
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: values.map { ($0.key.rawValue, $0.value) }))
    }
}
