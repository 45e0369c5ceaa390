import DocumentOutcomes
import Foundation
import ImageDecoding
import VerifyModel

/// The size of one text input (`mrz.txt`, `qr.txt`, `fields.json`, `transaction.json`, and a stream line's text
/// values): an MRZ is 90 characters, a QR at most about 3 KB; anything near this limit is not a document.
enum TextInput {
    static let maxBytes = 1 << 20

    /// A name the input gave, as a message may show it: quoted when it is short and plain, else only its length, so a
    /// hostile input cannot put control characters, a document value or a megabyte into its answer.
    static func quoted(_ name: String) -> String {
        let plain = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default: false
            }
        }
        return plain && (1...64).contains(name.utf8.count) ? "'\(name)'" : "a name of \(name.utf8.count) bytes"
    }
}

/// Turns one NDJSON line (CONTRACT §6) into a document job, or the failure its result line reports.
enum StreamLine {
    /// Every input of an NDJSON byte stream, in order, as a job or the failure its result line reports; blank
    /// lines are skipped and not counted. A line over `maxLineBytes` is answered with an error line without
    /// being held in memory.
    static func inputs(
        in chunks: ByteInput.ByteChunks, maxLineBytes: Int,
        _ body: (Result<DocumentJob, IngestFailure>) async throws -> Void
    ) async throws {
        var number = 0
        for try await line in LineSplitter(chunks: chunks, maxLineBytes: maxLineBytes) {
            switch line {
            case .text(let text) where InputLine.isBlank(text):
                continue
            case .text(let text):
                number += 1
                try await body(parse(text, number: number))
            case .tooLong(let bytes):
                number += 1
                try await body(.failure(tooLong(bytes, number: number, limit: maxLineBytes)))
            }
        }
    }

    /// Where a line's documents and errors say they came from.
    static func source(_ number: Int) -> String { "stdin:\(number)" }

    static func tooLong(_ bytes: Int, number: Int, limit: Int) -> IngestFailure {
        IngestFailure(
            sequence: number, inputId: "line-\(number)", source: source(number),
            failure: DocumentFailure(
                .documentCaptureError,
                "line \(number) is \(bytes) bytes, more than ingest.maxLineBytes (\(limit))"))
    }

    /// The keys whose values are text inputs, limited to `TextInput.maxBytes` each.
    static let textKeys = [
        "id", "qr", "transactionId", "type", "mrz", "barcode", "email", "phone", "createdAt", "expiresAt",
        "frontImagePath", "backImagePath", "selfiePath"
    ]

    static let knownKeys: Set<String> = [
        "id", "qr", "transactionId", "type", "frontImage", "backImage", "selfie", "frontImagePath", "backImagePath",
        "selfiePath", "mrz", "barcode", "email", "phone", "fields", "skip", "createdAt", "expiresAt"
    ]

    static func parse(_ line: String, number: Int, maxImageBytes: Int = ImageFile.maxBytes) -> Result<DocumentJob, IngestFailure> {
        var inputId = "line-\(number)"
        var type: DocumentType?
        do {
            let object = try jsonObject(line, number: number)
            if let id = object["id"] as? String, !id.isEmpty { inputId = id }
            try checkKeys(object)
            let documentType = try documentType(object)
            type = documentType
            var job = DocumentJob(
                sequence: number, inputId: inputId, source: source(number), type: documentType, identity: try identity(object))
            try attachImages(object, to: &job, maxImageBytes: maxImageBytes)
            try attachData(object, to: &job)
            return .success(job)
        } catch {
            return .failure(
                IngestFailure(sequence: number, inputId: inputId, source: source(number), type: type, failure: DocumentFailure(any: error)))
        }
    }

    private static func jsonObject(_ line: String, number: Int) throws -> [String: Any] {
        // Not JSON and not an object get the same answer.
        guard let parsed = try? JSONDecoder().decode([String: JSONValue].self, from: Data(line.utf8)) else {
            throw DocumentFailure(.invalidKeyMap, "line \(number) is not a JSON object")
        }
        return parsed.mapValues(\.value)
    }

    /// Every key known, every value of its key's kind and within the text limit.
    private static func checkKeys(_ object: [String: Any]) throws {
        if let id = object["id"], (id as? String)?.isEmpty ?? true {
            throw DocumentFailure(.invalidKeyMap, "'id' must be a non-empty string")
        }
        if let unknown = object.keys.sorted().first(where: { !knownKeys.contains($0) }) {
            throw DocumentFailure(.invalidKeyMap, "\(TextInput.quoted(unknown)) is not a known key")
        }
        for key in knownKeys where key != "fields" && key != "skip" {
            if let value = object[key], !(value is String) { throw DocumentFailure(.invalidKeyMap, "'\(key)' must be a string") }
        }
        for key in textKeys {
            if let text = object[key] as? String, text.utf8.count > TextInput.maxBytes {
                throw DocumentFailure(
                    .documentCaptureError, "'\(key)' is \(text.utf8.count) bytes, more than the limit of \(TextInput.maxBytes)")
            }
        }
        if let fields = object["fields"] as? [String: Any] {
            let size = fields.reduce(0) { $0 + $1.key.utf8.count + (($1.value as? String)?.utf8.count ?? 0) }
            if size > TextInput.maxBytes {
                throw DocumentFailure(
                    .documentCaptureError, "'fields' holds \(size) bytes of text, more than the limit of \(TextInput.maxBytes)")
            }
        }
    }

    private static func documentType(_ object: [String: Any]) throws -> DocumentType {
        guard let typeName = object["type"] as? String else {
            throw DocumentFailure(.missingDocumentType, "the line has no 'type'")
        }
        guard let type = DocumentType(rawValue: typeName) else {
            throw DocumentFailure(
                .missingDocumentType,
                "\(TextInput.quoted(typeName)) is not a document type (\(DocumentType.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return type
    }

    /// The transaction the line names: by its QR, or by its id.
    private static func identity(_ object: [String: Any]) throws -> TransactionIdentity {
        if let qr = object["qr"] as? String {
            do {
                return .qr(try VerificationQR(parsing: qr))
            } catch {
                throw DocumentFailure(error, context: "'qr'")
            }
        }
        guard let transactionId = object["transactionId"] as? String, !transactionId.isEmpty else {
            throw DocumentFailure(.initiateDocumentTransactionError, "the line has neither 'qr' nor 'transactionId'")
        }
        guard VerificationQR.isSafeIdentifier(transactionId) else {
            throw DocumentFailure(.initiateDocumentTransactionError, "'transactionId' is not 1 to 128 of A-Z a-z 0-9 . _ : -")
        }
        return .known(transactionId)
    }

    /// Each image inline (base64, held to the image limit before it is decoded) or as a path the reader resolves.
    private static func attachImages(_ object: [String: Any], to job: inout DocumentJob, maxImageBytes: Int) throws {
        for (role, inline, path) in [
            (ImageRole.front, "frontImage", "frontImagePath"), (.back, "backImage", "backImagePath"),
            (.selfie, "selfie", "selfiePath")
        ] {
            if let base64 = object[inline] as? String {
                guard base64.utf8.count / 4 * 3 <= maxImageBytes else {
                    throw DocumentFailure(.documentCaptureError, "'\(inline)' holds more than the image limit of \(maxImageBytes) bytes")
                }
                guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters), !data.isEmpty else {
                    throw DocumentFailure(.documentCaptureError, "'\(inline)' is not valid base64")
                }
                job.images[role] = .inline([UInt8](data))
            } else if let file = object[path] as? String {
                job.images[role] = .named(file, key: path)
            }
        }
    }

    /// The typed MRZ, the captured fields, the skip flag and the transaction's dates; a line with no document data is refused.
    private static func attachData(_ object: [String: Any], to job: inout DocumentJob) throws {
        job.mrz = object["mrz"] as? String
        if let fields = object["fields"] {
            guard let fields = fields as? [String: Any] else { throw DocumentFailure(.invalidKeyMap, "'fields' must be an object") }
            for (name, value) in fields {
                guard let key = DocumentKey(rawValue: name), let text = value as? String else {
                    throw DocumentFailure(.invalidKeyMap, "fields: \(TextInput.quoted(name)) is not a document key with a string value")
                }
                job.captured[key] = text
            }
        }
        // A barcode the capture service already decoded; the `document` key of the same name.
        if let barcode = object["barcode"] as? String { job.captured[.barcode] = barcode }
        if let email = object["email"] as? String { job.captured[.email] = email }
        if let phone = object["phone"] as? String { job.captured[.phone] = phone }
        if let skip = object["skip"] {
            guard let flag = skip as? Bool else { throw DocumentFailure(.invalidKeyMap, "'skip' must be true or false") }
            job.skip = flag
        }
        for (key, path) in [("createdAt", \DocumentJob.createdAt), ("expiresAt", \.expiresAt)] {
            guard let text = object[key] as? String else { continue }
            guard let date = Timestamp.date(text) else { throw DocumentFailure(.invalidKeyMap, "'\(key)' is not an ISO-8601 timestamp") }
            job[keyPath: path] = date
        }
        if !job.skip, job.images.isEmpty, job.mrz == nil, job.captured.isEmpty {
            throw DocumentFailure(.noDocumentToSubmitError, "the line carries no document data")
        }
    }
}

/// A JSON value decoded straight into Swift values: a 64 MiB base64 image stays one native string instead of
/// being bridged through UTF-16 as JSONSerialization's results are on Linux (several times slower).
enum JSONValue: Decodable {
    case string(String)
    case bool(Bool)
    case number(Double)
    case object([String: JSONValue])
    case array([JSONValue])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Each kind is tried in turn: a mismatch only means the value is of another kind.
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let object = try? container.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            self = .array(try container.decode([JSONValue].self))
        }
    }

    /// As `JSONSerialization` would give it: String, Bool, Double, [String: Any], [Any] or NSNull.
    var value: Any {
        switch self {
        case .string(let text): text
        case .bool(let flag): flag
        case .number(let number): number
        case .object(let object): object.mapValues(\.value)
        case .array(let array): array.map(\.value)
        case .null: NSNull()
        }
    }
}
