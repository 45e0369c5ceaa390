import Foundation
import SeededRandom
import Testing

@testable import VerifyModel

/// A random AAMVA payload, built here with its own offsets, and the fields its parse must return.
struct GeneratedAAMVA {
    var text: String
    var expected: [DocumentKey: String]

    static func build(
        _ elements: [(String, String)], subfile: String = "DL", iin: String = "636014", version: String = "10",
        extra: [(String, [(String, String)])] = []
    ) -> String {
        let subfiles = [(subfile, elements)] + extra
        let bodies = subfiles.map { type, elements in type + elements.map { "\($0.0)\($0.1)\n" }.joined() + "\r" }
        var offset = 9 + 6 + 2 + (version == "01" ? 0 : 2) + 2 + 10 * subfiles.count
        var header = "@\n\u{1E}\rANSI \(iin)\(version)\(version == "01" ? "" : "00")\(String(format: "%02d", subfiles.count))"
        for (index, body) in bodies.enumerated() {
            header += subfiles[index].0 + String(format: "%04d%04d", offset, body.unicodeScalars.count)
            offset += body.unicodeScalars.count
        }
        return header + bodies.joined()
    }

    static func make(using rng: inout SeededGenerator) -> GeneratedAAMVA {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        func word(_ range: ClosedRange<Int>) -> String {
            String((0..<Int.random(in: range, using: &rng)).map { _ in letters.randomElement(using: &rng)! })
        }
        func digits(_ count: Int) -> String { String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) }) }
        let canadian = Bool.random(using: &rng)
        func date() -> (aamva: String, iso: String) {
            let year = Int.random(in: 1930...2040, using: &rng), month = Int.random(in: 1...12, using: &rng)
            let day = Int.random(in: 1...28, using: &rng)
            let mm = String(format: "%02d", month), dd = String(format: "%02d", day)
            return (canadian ? "\(year)\(mm)\(dd)" : "\(mm)\(dd)\(year)", "\(year)-\(mm)-\(dd)")
        }
        let (first, middle, last) = (word(2...9), Bool.random(using: &rng) ? word(1...8) : "", word(2...12))
        let (birth, expiry, issue) = (date(), date(), date())
        let sex = [("1", "M"), ("2", "F"), ("9", "X")].randomElement(using: &rng)!
        let number = word(1...1) + digits(Int.random(in: 6...11, using: &rng))
        let street = "\(Int.random(in: 1...9999, using: &rng)) \(word(3...10)) ST"
        let city = word(3...12), state = word(2...2), zip = digits(5)
        var elements: [(String, String)] = [
            ("DAQ", number), ("DCS", last), ("DAC", first), ("DAD", middle), ("DBB", birth.aamva), ("DBA", expiry.aamva),
            ("DBD", issue.aamva), ("DBC", sex.0), ("DAG", street), ("DAI", city), ("DAJ", state),
            // Postal codes are space-padded to 11 characters on the card.
            ("DAK", zip + "0000" + "  "), ("DCG", canadian ? "CAN" : "USA")
        ]
        elements.shuffle(using: &rng)
        let text = build(elements, subfile: Bool.random(using: &rng) ? "DL" : "ID", extra: [("Z" + word(1...1), [("ZAA", digits(2))])])
        var expected: [DocumentKey: String] = [
            .barcode: text, .documentNumber: number, .lastName: last, .firstName: first,
            .fullName: [first, middle, last].filter { !$0.isEmpty }.joined(separator: " "),
            .dateOfBirth: birth.iso, .dateOfExpiry: expiry.iso, .dateOfIssue: issue.iso, .sex: sex.1,
            .addressStreet: street, .addressCity: city, .addressState: state, .addressZip: zip,
            .country: canadian ? "CAN" : "USA"
        ]
        if !middle.isEmpty { expected[.middleName] = middle }
        return GeneratedAAMVA(text: text, expected: expected)
    }
}

@Suite("AAMVA DL/ID parsing")
struct AAMVATests {
    /// The example of the AAMVA DL/ID Card Design Standard (2020), Annex D.
    static let standardSample =
        "@\n\u{1E}\rANSI 636000100102DL00410278ZV03190008DLDAQT64235789\nDCSSAMPLE\nDDEN\nDACMICHAEL\nDDFN\nDADJOHN\nDDGN\nDCUJR\nDCAD\nDCBK\nDCDPH\nDBD06062019\nDBB06061986\nDBA12102024\nDBC1\nDAU068 in\nDAYBRO\nDAG2300 WEST BROAD STREET\nDAIRICHMOND\nDAJVA\nDAK232690000  \nDCF2424244747474786102204\nDCGUSA\nDCK123456789\nDDAF\nDDB06062018\nDDC06062020\nDDD1\rZVZVA01\r"

    @Test("the AAMVA 2020 sample: header, subfiles and every mapped field")
    func standardSample() throws {
        let record = try AAMVARecord(parsing: Self.standardSample)
        #expect(record.issuerId == "636000")
        #expect(record.version == 10)
        #expect(record.jurisdictionVersion == 1)
        #expect(Set(record.subfiles.keys) == ["DL", "ZV"])
        #expect(record.subfiles["ZV"] == ["ZVA": "01"])
        #expect(record.elements.count == 28)
        #expect(record.elements["DAU"] == "068 in")
        let fields = try record.fields
        let expected: [DocumentKey: String] = [
            .barcode: Self.standardSample,
            .documentNumber: "T64235789",
            .lastName: "SAMPLE", .firstName: "MICHAEL", .middleName: "JOHN", .fullName: "MICHAEL JOHN SAMPLE",
            .additionalNameInfo: "JR",
            .dateOfIssue: "2019-06-06", .dateOfBirth: "1986-06-06", .dateOfExpiry: "2024-12-10",
            .sex: "M",
            .addressStreet: "2300 WEST BROAD STREET", .addressCity: "RICHMOND", .addressState: "VA", .addressZip: "23269",
            .country: "USA",
            .documentAdditionalNumber: "2424244747474786102204"
        ]
        #expect(fields.values == expected)
    }

    @Test("Canadian dates are CCYYMMDD; ZIP+4 keeps its extension")
    func canadaAndZipPlusFour() throws {
        let text = GeneratedAAMVA.build(
            [
                ("DAQ", "C1"), ("DCS", "ROY"), ("DAC", "LEA"), ("DBB", "19900131"), ("DCG", "CAN"),
                ("DAK", "232691234  "), ("DBC", "2")
            ], iin: "636012")
        let fields = try AAMVARecord(parsing: text).fields
        #expect(fields[.dateOfBirth] == "1990-01-31")
        #expect(fields[.addressZip] == "23269-1234")
        #expect(fields[.sex] == "F")
    }

    @Test("version 1 headers and DAA full names")
    func versionOne() throws {
        let text = GeneratedAAMVA.build([("DAQ", "X9"), ("DAA", "DOE,JANE,Q"), ("DBB", "02291988")], version: "01")
        let record = try AAMVARecord(parsing: text)
        #expect(record.version == 1 && record.jurisdictionVersion == nil)
        let fields = try record.fields
        #expect(fields[.lastName] == "DOE" && fields[.firstName] == "JANE" && fields[.middleName] == "Q")
        #expect(fields[.dateOfBirth] == "1988-02-29")
    }

    @Test("wrong subfile offsets are tolerated by searching for the subfile")
    func wrongOffsets() throws {
        let text = Self.standardSample.replacingOccurrences(of: "DL00410278", with: "DL00500278")
        #expect(try AAMVARecord(parsing: text).fields[.documentNumber] == "T64235789")
    }

    @Test(
        "data that is not AAMVA is a clear documentCaptureError",
        arguments: [
            "", "hello", "https://api.pingone.com/v1/idValidations/webVerifications?txnid=1&code=2",
            "@\n\u{1E}\rANSI 63", "@\n\u{1E}\rANSI 636000100100", "@\n\u{1E}\rANSI 636000100101ZV00310008ZVZVA01\r"
        ])
    func notAAMVA(_ text: String) {
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: text) }
        #expect(error?.failureCode == .document(.documentCaptureError))
        #expect(error?.message.isEmpty == false)
    }

    @Test("offsets past the end and bytes that are not UTF-8 are refused, not traps (found by fuzz-aamva)")
    func offsetPastTheEnd() throws {
        let base64 =
            "QAoeDUFOU0kgNjM2MDAwMTEwOTA5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5NjM2MDAwNTU5OTk5MTEwOTA5ADk5OTk5OTk5OTk5OTk5OTA0NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1OTk5OQ=="
        let text = String(decoding: try #require(Data(base64Encoded: base64)), as: UTF8.self)
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: text) }
        #expect(error?.message == "AAMVA header: a subfile type in the directory is not two letters")
        // A byte that is not UTF-8 (replaced on decoding) inside the data: searched by offset, no index trap.
        let replaced =
            "QAoeDUFOU0kgNjM2MDAwMTEwOTA5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5NjM2MDAwNTU5OTk5MTEwOTA5ADk5OTk5OTk5OTAxMTA5MDk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk2MzYwMDk5OTk5OTk5OTk5OTk5OTkwNDU1NTU1NTU1NTU16TU1NTU1NTU1NTU1NTU1NTU5OTk5"
        let second = String(decoding: try #require(Data(base64Encoded: replaced)), as: UTF8.self)
        let refused = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: second) }
        #expect(refused?.message == "AAMVA header: a subfile type in the directory is not two letters")
        // The same with a DL subfile whose directory offset points past the end: the subfile is still found.
        let past = Self.standardSample.replacingOccurrences(of: "DL00410278", with: "DL99990278")
        #expect(try AAMVARecord(parsing: past).fields[.documentNumber] == "T64235789")
    }

    @Test("an impossible birth date refuses the record, naming the element")
    func badBirthDate() {
        let text = GeneratedAAMVA.build([("DAQ", "A1"), ("DBB", "13401990")])
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: text).fields }
        #expect(error?.message == "AAMVA DBB (date of birth) is not a valid date")
    }

    @Test(
        "a bad optional element is dropped with a warning naming it, not the value",
        arguments: [
            ("DBA", "2024", DocumentKey.dateOfExpiry, "AAMVA DBA (date of expiry) is not a valid date: dropped"),
            ("DBD", "NOTADATE", DocumentKey.dateOfIssue, "AAMVA DBD (date of issue) is not a valid date: dropped"),
            ("DBC", "7", DocumentKey.sex, "AAMVA DBC (sex) is not 1, 2 or 9: dropped"),
            ("DAK", "ZIP?", DocumentKey.addressZip, "AAMVA DAK (postal code) is not a ZIP or postal code: dropped")
        ])
    func badOptionalElements(_ element: String, _ value: String, _ key: DocumentKey, _ warning: String) throws {
        let text = GeneratedAAMVA.build([("DAQ", "A1"), ("DCS", "SMITH"), ("DBB", "01021990"), (element, value)])
        let reading = try AAMVARecord(parsing: text).reading()
        #expect(reading.fields[key] == nil)
        #expect(reading.fields[.documentNumber] == "A1" && reading.fields[.dateOfBirth] == "1990-01-02")
        #expect(reading.warnings == [warning])
    }
}
