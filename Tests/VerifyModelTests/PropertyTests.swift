import Foundation
import SeededRandom
import Testing

@testable import VerifyModel

/// ICAO 9303's check digit, written here independently of the parser under test.
func icaoCheckDigit(_ text: some Sequence<Character>) -> Int {
    let values: [Character: Int] = Dictionary(
        uniqueKeysWithValues:
            Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ").enumerated().map { ($0.element, $0.offset) })
    return text.enumerated().reduce(0) { sum, item in sum + (values[item.element] ?? 0) * [7, 3, 1][item.offset % 3] } % 10
}

func icaoValue(_ character: Character) -> Int {
    Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ").firstIndex(of: character) ?? 0
}

/// A random, valid MRZ and the fields its parse must return.
struct GeneratedMRZ: CustomTestStringConvertible {
    var text: String
    var lines: [[Character]]
    var expected: [DocumentKey: String]
    /// (line, column) of every character a check digit covers.
    var covered: [(Int, Int)]

    var testDescription: String { text }

    static let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    static let alphanumerics = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")

    static func make(_ format: MRZ.Format, using rng: inout SeededGenerator) -> GeneratedMRZ {
        func word(_ range: ClosedRange<Int>, from alphabet: [Character] = letters) -> String {
            String((0..<Int.random(in: range, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: "<", count: width - text.count) }
        func date(births: Bool) -> (mrz: String, iso: String) {
            // Births 1927-2026, expiries 2000-2049: the century rules relative to 2026.
            let year = births ? Int.random(in: 1927...2026, using: &rng) : Int.random(in: 2000...2049, using: &rng)
            let month = Int.random(in: 1...12, using: &rng), day = Int.random(in: 1...28, using: &rng)
            let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
            let iso = "\(year)-\(two(month))-\(two(day))"
            return (two(year % 100) + two(month) + two(day), births && iso > "2026-11-22" ? "\(year - 100)" + iso.dropFirst(4) : iso)
        }
        let nameWidth = format == .td3 ? 39 : format == .td2 ? 31 : 30
        let surname = word(2...8), given = [word(2...7), word(2...6)].prefix(Int.random(in: 1...2, using: &rng))
        let names = pad(surname + "<<" + given.joined(separator: "<"), nameWidth)
        let number = word(9...9, from: alphanumerics)
        let state = word(3...3), nationality = word(3...3)
        let sex = ["M", "F", "<"].randomElement(using: &rng)!
        let birth = date(births: true), expiry = date(births: false)
        let check = { (text: String) in String(icaoCheckDigit(text)) }
        var expected: [DocumentKey: String] = [
            .documentNumber: number, .country: state, .nationality: nationality, .dateOfBirth: birth.iso,
            .dateOfExpiry: expiry.iso, .sex: sex == "<" ? "X" : sex, .lastName: surname, .firstName: given[0],
            .fullName: (given + [surname]).joined(separator: " ")
        ]
        if given.count > 1 { expected[.middleName] = given[1] }
        var lines: [String]
        var covered: [(Int, Int)] = []
        switch format {
        case .td3, .td2:
            let optionalWidth = format == .td3 ? 14 : 7
            let optional = word(0...optionalWidth, from: alphanumerics)
            let optionalField = pad(optional, optionalWidth)
            let optionalCheck = format == .td3 ? check(optionalField) : ""
            var second =
                number + check(number) + nationality + birth.mrz + check(birth.mrz) + sex
                + expiry.mrz + check(expiry.mrz) + optionalField + optionalCheck
            let compositeInput = Array(second.prefix(10)) + Array(second.dropFirst(13).prefix(7)) + Array(second.dropFirst(21))
            second += check(String(compositeInput))
            lines = [pad((format == .td3 ? "P<" : "I<") + state + names, format == .td3 ? 44 : 36), second]
            covered =
                (0..<9).map { (1, $0) } + (13..<19).map { (1, $0) } + (21..<27).map { (1, $0) }
                + (28..<(28 + optionalWidth)).map { (1, $0) }
            if !optional.isEmpty { expected[.personalIdNumber] = optional }
        case .td1:
            let optional1 = word(0...15, from: alphanumerics), optional2 = word(0...11, from: alphanumerics)
            let first = "I<" + state + number + check(number) + pad(optional1, 15)
            var second = birth.mrz + check(birth.mrz) + sex + expiry.mrz + check(expiry.mrz) + nationality + pad(optional2, 11)
            let compositeInput =
                Array(first.dropFirst(5)) + Array(second.prefix(7)) + Array(second.dropFirst(8).prefix(7)) + Array(second.dropFirst(18))
            second += check(String(compositeInput))
            lines = [first, second, names]
            // Optional data 1 is left out: a changed character there can turn into a longer document number.
            covered = (5..<14).map { (0, $0) } + (0..<6).map { (1, $0) } + (8..<14).map { (1, $0) } + (18..<29).map { (1, $0) }
            if !optional1.isEmpty { expected[.personalIdNumber] = optional1 }
            if !optional2.isEmpty { expected[.documentAdditionalNumber] = optional2 }
        case .mrvA, .mrvB:
            preconditionFailure("visas are read in MRZTests, not generated here")
        }
        expected[.mrzData] = lines.joined(separator: "\n")
        return GeneratedMRZ(text: lines.joined(separator: "\n"), lines: lines.map(Array.init), expected: expected, covered: covered)
    }
}

@Suite("MRZ and AAMVA properties")
struct PropertyTests {
    @Test("a random valid MRZ parses to exactly its generated fields", arguments: [MRZ.Format.td1, .td2, .td3])
    func randomValidMRZ(_ format: MRZ.Format) throws {
        var rng = SeededGenerator(seed: 0xC0FFEE &+ UInt64(format.rawValue.utf8.last!))
        for _ in 0..<300 {
            let generated = GeneratedMRZ.make(format, using: &rng)
            let mrz = try MRZ(parsing: generated.text, referenceDate: referenceDate)
            #expect(mrz.format == format)
            #expect(mrz.fields.values == generated.expected, "\(generated.text)")
        }
    }

    /// ICAO's weights (7, 3, 1) are prime to 10, so a substitution is caught exactly when the two characters'
    /// values differ by something other than a multiple of 10 (A=10 and 0, for instance, cannot be told apart).
    @Test("any single changed character in a check-digit-covered field is caught", arguments: [MRZ.Format.td1, .td2, .td3])
    func singleCharacterChanges(_ format: MRZ.Format) throws {
        var rng = SeededGenerator(seed: 0xBADC0DE &+ UInt64(format.rawValue.utf8.last!))
        var caught = 0
        for _ in 0..<300 {
            let generated = GeneratedMRZ.make(format, using: &rng)
            let (line, column) = generated.covered.randomElement(using: &rng)!
            let original = generated.lines[line][column]
            let replacement = (GeneratedMRZ.alphanumerics + ["<"]).filter { $0 != original }.randomElement(using: &rng)!
            var lines = generated.lines
            lines[line][column] = replacement
            let text = lines.map { String($0) }.joined(separator: "\n")
            let detectable = (icaoValue(original) - icaoValue(replacement)) % 10 != 0
            do {
                let mrz = try MRZ(parsing: text, referenceDate: referenceDate)
                #expect(!detectable, "changing \(original) to \(replacement) at line \(line + 1) column \(column + 1) went unnoticed: \(text)")
                #expect(mrz.fields.values != generated.expected, "an undetectable change must still change a field")
            } catch {
                #expect(error.failureCode == .document(.documentCaptureError))
                caught += 1
            }
        }
        #expect(caught > 250)
    }

    @Test("a random AAMVA record parses to exactly its generated fields")
    func randomAAMVA() throws {
        var rng = SeededGenerator(seed: 0xAA3FA)
        for _ in 0..<300 {
            let generated = GeneratedAAMVA.make(using: &rng)
            let record = try AAMVARecord(parsing: generated.text)
            #expect(try record.fields.values == generated.expected, "\(generated.text.debugDescription)")
        }
    }
}
