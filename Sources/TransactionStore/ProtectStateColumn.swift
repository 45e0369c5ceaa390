import Foundation

/// Protect's state as its column holds it: JSON with sorted keys and ISO-8601 dates, whatever type the Protect
/// module gives it.
enum ProtectStateColumn {
    static func encode<State: Encodable>(_ state: State) throws(StoreError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return String(decoding: try encoder.encode(state), as: UTF8.self)
        } catch {
            throw .database("the Protect state could not be encoded")
        }
    }

    static func decode<State: Decodable>(_ text: String, as type: State.Type) throws(StoreError) -> State {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw .database("the store holds a Protect state this version cannot read")
        }
    }
}
