import Foundation
import VerifyModel

/// A document's fields as the `fields` column holds them: JSON, sealed in an encrypted store (bound to the document's
/// id); empty once the retention policy purged them.
enum FieldsColumn {
    static func encode(_ document: DocumentRecord, _ sealing: StoreSealing) throws -> String {
        let json: String
        do {
            json = String(decoding: try JSONEncoder().encode(document.fields), as: UTF8.self)
        } catch {
            throw StoreError.database("the document's fields could not be encoded")
        }
        return try sealing.seal(json, .documentFields, row: document.id)
    }

    static func decode(_ stored: String, _ sealing: StoreSealing, document id: String) throws -> DocumentFields {
        if stored.isEmpty { return DocumentFields() }
        let json = try sealing.open(stored, .documentFields, row: id)
        do {
            return try JSONDecoder().decode(DocumentFields.self, from: Data(json.utf8))
        } catch {
            throw StoreError.database("document \(id) has fields this version cannot read")
        }
    }
}

/// Protect's state as its column holds it: JSON with sorted keys and ISO-8601 dates, whatever type the Protect
/// module gives it. Sealed, it is a JSON string holding the sealed value, so the column still holds JSON.
enum ProtectStateColumn {
    static func encode<State: Encodable>(_ state: State, _ sealing: StoreSealing, row transactionId: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let json: String
        do {
            json = String(decoding: try encoder.encode(state), as: UTF8.self)
        } catch {
            throw StoreError.database("the Protect state could not be encoded")
        }
        return try seal(json: json, sealing, row: transactionId)
    }

    /// The state's JSON as the column holds it: sealed, a JSON string holding the sealed value; else as it is.
    static func seal(json: String, _ sealing: StoreSealing, row transactionId: String) throws -> String {
        guard sealing.isSealed else { return json }
        // A sealed value is prefix and base64: nothing in it needs escaping.
        return "\"\(try sealing.seal(json, .protectState, row: transactionId))\""
    }

    /// The state's JSON out of what the column holds (`seal(json:)`'s inverse).
    static func open(json text: String, _ sealing: StoreSealing, row transactionId: String) throws -> String {
        guard sealing.isSealed else { return text }
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else {
            throw StoreError.tampered("\(SealedColumn.protectState.rawValue) of \(transactionId)")
        }
        return try sealing.open(String(text.dropFirst().dropLast()), .protectState, row: transactionId)
    }

    static func decode<State: Decodable>(
        _ text: String, as type: State.Type, _ sealing: StoreSealing,
        row transactionId: String
    ) throws -> State {
        let json = try open(json: text, sealing, row: transactionId)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(type, from: Data(json.utf8))
        } catch {
            throw StoreError.database("the store holds a Protect state this version cannot read")
        }
    }
}

extension DataState {
    init(purgedAt: Date?, _ sealing: StoreSealing) {
        self = purgedAt != nil ? .purged : sealing.isSealed ? .sealed : .present
    }
}
