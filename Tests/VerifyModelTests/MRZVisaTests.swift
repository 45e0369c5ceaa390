import Foundation
import Testing

@testable import VerifyModel

/// ICAO 9303 Part 7 visas: MRV-A (2×44) and MRV-B (2×36) share the passports' geometry, not their checks.
@Suite("MRZ visas")
struct MRZVisaTests {
    static let reference = Date(timeIntervalSince1970: 1_795_651_200)

    @Test("an MRV-B visa is read as a visa, with no composite check digit, not as a TD2 card")
    func mrvB() throws {
        let text = "V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<\nL8988901C4UTO7408122F1204159<<<<<<<<"
        let mrz = try MRZ(parsing: text, referenceDate: Self.reference)
        #expect(mrz.format == .mrvB)
        #expect(mrz.documentCode == "V" && mrz.documentNumber == "L8988901C" && mrz.dateOfExpiry == "2012-04-15")
        #expect(mrz.fields[.personalIdNumber] == nil)
    }

    @Test("an MRV-A visa's optional data runs to the end of its line, unchecked")
    func mrvA() throws {
        let text = "V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nD231458907UTO7408122F12041591234567890<<<<<<"
        let mrz = try MRZ(parsing: text, referenceDate: Self.reference)
        #expect(mrz.format == .mrvA)
        #expect(mrz.optionalData == "1234567890" && mrz.nationality == "UTO")
        // The same second line under a passport's document code is a TD3 whose personal number check fails.
        let passport = text.replacingOccurrences(of: "V<UTO", with: "P<UTO")
        #expect(throws: MRZError.self) { try MRZ(parsing: passport, referenceDate: Self.reference) }
    }

    @Test("a visa's date check digits still hold")
    func visaCheckDigits() {
        let text = "V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<\nL8988901C4UTO7408123F1204159<<<<<<<<"
        let error = #expect(throws: MRZError.self) { try MRZ(parsing: text, referenceDate: Self.reference) }
        #expect(error?.field == .dateOfBirth)
    }
}
