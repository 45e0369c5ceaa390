import Foundation
import Testing

@testable import VerifyModel

@Suite("JSON wire format")
struct WireFormatTests {
    static let response = DocumentSubmissionResponse(
        transactionId: "txn-1", documentType: .governmentId,
        documentStatus: [.governmentId: .collected, .selfie: .optional, .phone: .skipped],
        documentSubmissionStatus: .process,
        document: DocumentFields([.firstName: "ANNA", .dateOfBirth: "1974-08-12", .mrzData: "P<UTO"]),
        createdAt: Date(timeIntervalSince1970: 1_795_305_600.25), updatedAt: Date(timeIntervalSince1970: 1_795_305_660),
        expiresAt: Date(timeIntervalSince1970: 1_795_307_400))

    @Test("exact key names and enum spellings")
    func exactNames() throws {
        let data = try JSONEncoder().encode(Self.response)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "transactionId", "documentType", "documentStatus", "documentSubmissionStatus",
                "document", "createdAt", "updatedAt", "expiresAt"
            ])
        #expect(object["documentType"] as? String == "GOVERNMENT_ID")
        #expect(object["documentSubmissionStatus"] as? String == "PROCESS")
        #expect(object["documentStatus"] as? [String: String] == ["GOVERNMENT_ID": "COLLECTED", "SELFIE": "OPTIONAL", "PHONE": "SKIPPED"])
        #expect(object["document"] as? [String: String] == ["firstName": "ANNA", "dateOfBirth": "1974-08-12", "mrzData": "P<UTO"])
        #expect(object["createdAt"] as? String == "2026-11-22T00:00:00.250Z")
        #expect(object["expiresAt"] as? String == "2026-11-22T00:30:00.000Z")
    }

    @Test("round trip")
    func roundTrip() throws {
        let data = try JSONEncoder().encode(Self.response)
        #expect(try JSONDecoder().decode(DocumentSubmissionResponse.self, from: data) == Self.response)
    }

    @Test(
        "every enum's wire spelling",
        arguments: [
            (DocumentStatus.allCases.map(\.rawValue), ["REQUIRED", "OPTIONAL", "COLLECTED", "PROCESSED", "SKIPPED"]),
            (DocumentSubmissionStatus.allCases.map(\.rawValue), ["NOT_STARTED", "STARTED", "PROCESS", "COMPLETED"]),
            (DocumentType.allCases.map(\.rawValue), ["GOVERNMENT_ID", "SELFIE", "EMAIL", "PHONE", "VOICE"])
        ])
    func spellings(_ actual: [String], _ expected: [String]) {
        #expect(actual == expected)
    }

    @Test("unknown document keys and types are refused when decoding")
    func unknownNames() {
        let badKey =
            #"{"transactionId":"t","documentType":"SELFIE","documentStatus":{},"documentSubmissionStatus":"STARTED","document":{"favouriteColour":"blue"},"createdAt":"2026-11-22T00:00:00Z","updatedAt":"2026-11-22T00:00:00Z","expiresAt":"2026-11-22T00:00:00Z"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DocumentSubmissionResponse.self, from: Data(badKey.utf8)) }
        let badType = badKey.replacingOccurrences(of: #""documentStatus":{}"#, with: #""documentStatus":{"PASSPORT":"REQUIRED"}"#)
            .replacingOccurrences(of: "favouriteColour", with: "email")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DocumentSubmissionResponse.self, from: Data(badType.utf8)) }
    }

    @Test("the document keys are the spec's, all of them")
    func documentKeys() {
        #expect(DocumentKey.allCases.count == 33)
        #expect(DocumentKey(rawValue: "documentAdditionalNumber") != nil)
        #expect(DocumentKey(rawValue: "residentialStatus") != nil)
    }
}
