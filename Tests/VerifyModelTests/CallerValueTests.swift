import Foundation
import Testing

@testable import VerifyModel

/// The model is a library: values its callers build or decode (a state read back as JSON, an MRZ whose lines were
/// edited, any reference date) are refused with an error, never a trap.
@Suite("VerifyModel: caller values are refused, not trapped on")
struct CallerValueTests {
    static let enabled: [DocumentType: DocumentRequirement] = [.governmentId: .required, .selfie: .optional]

    @Test("a state decoded from JSON whose documents lack a type its policy lists is a decoding error")
    func decodedStateMissingADocument() throws {
        let inconsistent = TransactionState(
            policy: Self.enabled, documents: [.governmentId: .required], submissionStatus: .notStarted, expiresAt: later)
        let json = try JSONEncoder().encode(inconsistent)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TransactionState.self, from: json) }
    }

    @Test("a state decoded from JSON with a status for a type outside its policy is a decoding error")
    func decodedStateWithAStrayDocument() throws {
        let inconsistent = TransactionState(
            policy: [.governmentId: .required], documents: [.governmentId: .required, .email: .optional],
            submissionStatus: .notStarted, expiresAt: later)
        let json = try JSONEncoder().encode(inconsistent)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TransactionState.self, from: json) }
    }

    @Test("a consistent state survives JSON unchanged")
    func decodedStateRoundTrip() throws {
        let state = try TransactionState(policy: Self.enabled, expiresAt: later).applying(.collect, to: .selfie, at: now).state
        #expect(try JSONDecoder().decode(TransactionState.self, from: JSONEncoder().encode(state)) == state)
    }

    @Test("a restored state that lacks a policy type's status moves without trapping, and never completes")
    func restoredStateMissingADocument() throws {
        let restored = TransactionState(
            policy: Self.enabled, documents: [.governmentId: .required], submissionStatus: .notStarted, expiresAt: later)
        let collected = try restored.applying(.collect, to: .governmentId, at: now).state
        #expect(collected.submissionStatus == .process)
        let processed = try collected.applying(.process, to: .governmentId, at: now).state
        #expect(processed.submissionStatus == .process, "the selfie has no status, so it is not done")
        #expect(throws: TransitionError.documentTypeNotInPolicy(.selfie)) { try processed.applying(.skip, to: .selfie, at: now) }
    }

    @Test("an MRZ whose lines were edited refuses its state codes", arguments: [[], ["P<"], ["P<UTOERIKSSON", "L898"]])
    func editedLines(_ lines: [String]) throws {
        var mrz = try MRZ(parsing: MRZSpecimenTests.td3, referenceDate: referenceDate)
        #expect(try mrz.stateCodes.map(\.code) == ["UTO", "UTO"])
        mrz.lines = lines
        let error = #expect(throws: MRZError.self) { try mrz.stateCodes }
        #expect(error?.field == .layout)
    }

    /// As seconds since 1970: a test's arguments are described, and Foundation traps describing an infinite date.
    @Test(
        "a reference date no calendar can place is refused",
        arguments: [.infinity, -.infinity, .nan, 1e15, -1e15])
    func unplaceableReferenceDate(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let error = #expect(throws: MRZError.self) { try MRZ(parsing: MRZSpecimenTests.td3, referenceDate: date) }
        #expect(error?.field == .referenceDate)
    }

    @Test("a reference date two thousand years on still places two-digit years")
    func farReferenceDate() throws {
        let mrz = try MRZ(parsing: MRZSpecimenTests.td3, referenceDate: Date.distantFuture)
        #expect(mrz.dateOfBirth == "3974-08-12" && mrz.dateOfExpiry == "4012-04-15")
    }
}
