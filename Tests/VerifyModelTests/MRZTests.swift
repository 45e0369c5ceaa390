import Foundation
import Testing

@testable import VerifyModel

/// 2026-11-22, so that two-digit years resolve the same way on any day the tests run.
let referenceDate = Date(timeIntervalSince1970: 1_795_305_600)

@Suite("MRZ: the ICAO 9303 specimens")
struct MRZSpecimenTests {
    static let td3 = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10"
    static let td1 = "I<UTOD231458907<<<<<<<<<<<<<<<\n7408122F1204159UTO<<<<<<<<<<<6\nERIKSSON<<ANNA<MARIA<<<<<<<<<<"
    static let td2 = "I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<\nD231458907UTO7408122F1204159<<<<<<<6"

    func expectAnnaEriksson(_ mrz: MRZ, number: String) {
        #expect(mrz.issuingState == "UTO")
        #expect(mrz.primaryIdentifier == "ERIKSSON")
        #expect(mrz.secondaryIdentifier == "ANNA MARIA")
        #expect(mrz.documentNumber == number)
        #expect(mrz.nationality == "UTO")
        #expect(mrz.dateOfBirth == "1974-08-12")
        #expect(mrz.sex == "F")
        #expect(mrz.dateOfExpiry == "2012-04-15")
        let fields = mrz.fields
        #expect(fields[.firstName] == "ANNA")
        #expect(fields[.middleName] == "MARIA")
        #expect(fields[.lastName] == "ERIKSSON")
        #expect(fields[.fullName] == "ANNA MARIA ERIKSSON")
        #expect(fields[.documentNumber] == number)
        #expect(fields[.dateOfBirth] == "1974-08-12")
        #expect(fields[.dateOfExpiry] == "2012-04-15")
        #expect(fields[.sex] == "F")
        #expect(fields[.country] == "UTO")
        #expect(fields[.nationality] == "UTO")
        #expect(fields[.mrzData] == mrz.lines.joined(separator: "\n"))
    }

    @Test func td3Passport() throws {
        let mrz = try MRZ(parsing: Self.td3, referenceDate: referenceDate)
        #expect(mrz.format == .td3)
        #expect(mrz.documentCode == "P")
        #expect(mrz.optionalData == "ZE184226B")
        #expect(mrz.fields[.personalIdNumber] == "ZE184226B")
        expectAnnaEriksson(mrz, number: "L898902C3")
    }

    @Test func td1Card() throws {
        let mrz = try MRZ(parsing: Self.td1, referenceDate: referenceDate)
        #expect(mrz.format == .td1)
        #expect(mrz.documentCode == "I")
        #expect(mrz.optionalData.isEmpty && mrz.optionalData2.isEmpty)
        #expect(mrz.fields[.personalIdNumber] == nil)
        expectAnnaEriksson(mrz, number: "D23145890")
    }

    @Test func td2Card() throws {
        let mrz = try MRZ(parsing: Self.td2, referenceDate: referenceDate)
        #expect(mrz.format == .td2)
        #expect(mrz.documentCode == "I")
        expectAnnaEriksson(mrz, number: "D23145890")
    }

    @Test("tolerates surrounding whitespace, CRLF and blank lines")
    func whitespaceTolerance() throws {
        let messy = "\n  " + Self.td3.replacingOccurrences(of: "\n", with: "\r\n\r\n") + "  \r\n"
        #expect(try MRZ(parsing: messy, referenceDate: referenceDate) == MRZ(parsing: Self.td3, referenceDate: referenceDate))
    }

    @Test(
        "a bad check digit is a documentCaptureError naming the field",
        arguments: [
            (MRZSpecimenTests.td3, 1, 9, "documentNumber"),
            (MRZSpecimenTests.td3, 1, 19, "dateOfBirth"),
            (MRZSpecimenTests.td3, 1, 27, "dateOfExpiry"),
            (MRZSpecimenTests.td3, 1, 42, "personalIdNumber"),
            (MRZSpecimenTests.td3, 1, 43, "composite"),
            (MRZSpecimenTests.td1, 0, 14, "documentNumber"),
            (MRZSpecimenTests.td1, 1, 29, "composite"),
            (MRZSpecimenTests.td2, 1, 35, "composite")
        ])
    func badCheckDigit(_ specimen: String, line: Int, column: Int, field: String) throws {
        var lines = specimen.split(separator: "\n").map { Array($0) }
        let digit = lines[line][column].wholeNumberValue ?? 0
        lines[line][column] = Character(String((digit + 1) % 10))
        let error = #expect(throws: MRZError.self) {
            try MRZ(parsing: lines.map { String($0) }.joined(separator: "\n"), referenceDate: referenceDate)
        }
        #expect(error?.field.rawValue == field)
        #expect(error?.failureCode == .document(.documentCaptureError))
        #expect(error?.message.contains(field) == true)
    }

    @Test(
        "wrong layouts and characters are refused",
        arguments: [
            "", "P<UTO", "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
            "p<utoeriksson<<anna<maria<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10"
        ])
    func badLayout(_ text: String) {
        let error = #expect(throws: MRZError.self) { try MRZ(parsing: text, referenceDate: referenceDate) }
        #expect(error?.field == .layout)
    }

    /// The TD3 specimen born 29 February 1977 (a common year), its check digits computed over what is printed.
    @Test("a date no calendar has is refused; admitted, it is kept as a misprint and the check digits still hold")
    func misprintedDate() throws {
        let text = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7702299F1204159ZE184226B<<<<<16"
        let refused = #expect(throws: MRZError.self) { try MRZ(parsing: text, referenceDate: referenceDate) }
        #expect(refused?.kind == .invalidDate && refused?.field == .dateOfBirth)
        let admitted = try MRZ(parsing: text, referenceDate: referenceDate, admitting: [.invalidDate])
        #expect(admitted.misprints.map(\.field) == [.dateOfBirth] && admitted.dateOfBirth.isEmpty)
        #expect(admitted.dateOfExpiry == "2012-04-15")
        // Admitting a date does not admit a check digit: the composite's last digit printed 7 for 6.
        let wrongComposite = String(text.dropLast()) + "7"
        let error = #expect(throws: MRZError.self) {
            try MRZ(parsing: wrongComposite, referenceDate: referenceDate, admitting: [.invalidDate, .checkDigit])
        }
        #expect(error?.field == .composite)
    }

    @Test("two-digit years: births never in the future, expiries up to 50 years ahead")
    func centuries() throws {
        // Born 2001 and 1999 relative to 2026; expiring 2035.
        for (yymmdd, expected) in [("010203", "2001-02-03"), ("990203", "1999-02-03"), ("261122", "2026-11-22")] {
            let line2 = "L898902C36UTO\(yymmdd)\(icaoCheckDigit(yymmdd))F350415\(icaoCheckDigit("350415"))ZE184226B<<<<<1"
            let composite = icaoCheckDigit(Array(line2.prefix(10)) + Array(line2.dropFirst(13).prefix(7)) + Array(line2.dropFirst(21).prefix(22)))
            let mrz = try MRZ(parsing: "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\n\(line2)\(composite)", referenceDate: referenceDate)
            #expect(mrz.dateOfBirth == expected)
            #expect(mrz.dateOfExpiry == "2035-04-15")
        }
    }
}
