import Foundation

/// What an AAMVA record gives a document: its fields, and what was dropped or repaired on the way (never a
/// value), so that a caller can route it to review.
public struct AAMVAReading: Sendable, Equatable {
    public var fields: DocumentFields
    public var warnings: [String]
    /// Whether the expiry is a month (a magnetic stripe's `YYMM`) reported as its last day: while that month
    /// runs, whether the licence has expired cannot be told.
    public var expiryIsMonth = false
}

extension AAMVARecord {
    /// The document keys this record provides (contract §4). A bad optional element is dropped with a warning;
    /// a bad birth date refuses the record, since no identity stands without it.
    public func reading() throws(AAMVAError) -> AAMVAReading {
        var mapper = AAMVAFields(elements: elements, canadian: elements["DCG"]?.uppercased() == "CAN" || issuerId.hasPrefix("604"))
        var fields = try mapper.fields()
        fields[.barcode] = raw
        return AAMVAReading(fields: fields, warnings: warnings + mapper.warnings)
    }

    public var fields: DocumentFields {
        get throws(AAMVAError) { try reading().fields }
    }
}

/// Maps the DL/ID subfile's elements onto document keys, normalising what the standard and real issuers vary.
struct AAMVAFields {
    let elements: [String: String]
    let canadian: Bool
    var warnings: [String] = []

    func value(_ id: String) -> String? { elements[id].nonEmpty }

    mutating func fields() throws(AAMVAError) -> DocumentFields {
        var fields = DocumentFields()
        fields[.documentNumber] = value("DAQ")
        let name = names()
        fields[.firstName] = name.first
        fields[.middleName] = name.middle
        fields[.lastName] = name.last
        let full = [name.first, name.middle, name.last].compactMap { $0 }.joined(separator: " ")
        fields[.fullName] = full.isEmpty ? nil : full
        fields[.additionalNameInfo] = name.suffix
        fields[.dateOfBirth] = try Self.date(value("DBB"), element: "DBB (date of birth)", canadian: canadian)
        fields[.dateOfExpiry] = optionalDate("DBA", "date of expiry")
        fields[.dateOfIssue] = optionalDate("DBD", "date of issue")
        if let sex = value("DBC") {
            if let code = Self.sex(sex) { fields[.sex] = code } else { warnings.append("AAMVA DBC (sex) is not 1, 2 or 9: dropped") }
        }
        // The mailing address, or the residence address (DAL-DAP) where the card gives only that.
        let mailing = [value("DAG"), value("DAH")].compactMap { $0 }
        let residence = [value("DAL"), value("DAM")].compactMap { $0 }
        let street = (mailing.isEmpty ? residence : mailing).joined(separator: ", ")
        fields[.addressStreet] = street.isEmpty ? nil : street
        fields[.addressCity] = value("DAI") ?? value("DAN")
        fields[.addressState] = value("DAJ") ?? value("DAO")
        if let postal = value("DAK") ?? value("DAP") {
            if let code = Self.postalCode(postal) {
                fields[.addressZip] = code
            } else {
                warnings.append("AAMVA DAK (postal code) is not a ZIP or postal code: dropped")
            }
        }
        fields[.country] = value("DCG")
        fields[.documentAdditionalNumber] = value("DCF")
        return fields
    }

    // MARK: Names

    /// Family, first and middle names and a suffix, from the separate elements (DCS/DAB, DAC, DAD, DCU/DAE),
    /// the given-names element of versions 02-03 (DCT) or the version-01 full name (DAA).
    func names() -> (first: String?, middle: String?, last: String?, suffix: String?) {
        var first = value("DAC"), middle = value("DAD"), last = value("DCS") ?? value("DAB")
        var suffix = value("DCU") ?? value("DAE")
        if first == nil, let given = value("DCT") {
            let parts = Self.parts(given, separators: ",$ ")
            first = parts.first
            if middle == nil, parts.count > 1 { middle = parts.dropFirst().joined(separator: " ") }
        }
        if last == nil, let full = value("DAA") {
            let name = Self.fullName(full)
            last = name.last
            first = first ?? name.first
            middle = middle ?? name.middle
            suffix = suffix ?? name.suffix
        }
        return (first, middle, last, suffix)
    }

    /// Name suffixes as cards print them.
    static let suffixes: Set<String> = [
        "JR", "SR", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "1ST", "2ND", "3RD",
        "4TH", "5TH", "6TH", "7TH", "8TH", "9TH", "ESQ"
    ]

    static func isSuffix(_ part: String) -> Bool {
        suffixes.contains(part.uppercased().replacingOccurrences(of: ".", with: ""))
    }

    /// `LAST,FIRST,MIDDLE,SUFFIX` (commas or `$`), `LAST,FIRST MIDDLE` (two parts: the given names split on spaces, as
    /// DCT's are), or `FIRST MIDDLE LAST SUFFIX` (spaces only, some version-01 cards).
    static func fullName(_ full: String) -> (first: String?, middle: String?, last: String?, suffix: String?) {
        if full.contains(",") || full.contains("$") {
            let parts = full.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "," || $0 == "$" })
                .map { $0.trimmingCharacters(in: .whitespaces) }
            var rest = Array(parts.dropFirst(2))
            var suffix: String?
            // The fourth part is the suffix's place; a third part that can only be a suffix is one too (a lone
            // "V" stays a middle initial). Either must be a suffix cards print.
            if rest.count >= 2, let last = rest.last, isSuffix(last) {
                suffix = last
                rest.removeLast()
            } else if rest.count == 1, let only = rest.first, isSuffix(only), only.count > 1 {
                suffix = only
                rest = []
            }
            var first = parts.count > 1 ? Optional(parts[1]).nonEmpty : nil
            var middle = rest.filter { !$0.isEmpty }.joined(separator: " ")
            // `LAST,GIVEN NAMES` (no third part): the given names as DCT gives them, first then middle names.
            if parts.count == 2, let given = first {
                let words = Self.parts(given, separators: " ")
                first = words.first
                middle = words.dropFirst().joined(separator: " ")
            }
            return (first, Optional(middle).nonEmpty, Optional(parts[0]).nonEmpty, suffix)
        }
        var words = parts(full, separators: " ")
        var suffix: String?
        if words.count > 2, let last = words.last, isSuffix(last) { suffix = words.removeLast() }
        guard let last = words.popLast() else { return (nil, nil, nil, nil) }
        let first = words.isEmpty ? nil : words.removeFirst()
        return (first, Optional(words.joined(separator: " ")).nonEmpty, last, suffix)
    }

    static func parts(_ text: String, separators: String) -> [String] {
        text.split(whereSeparator: { separators.contains($0) }).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    // MARK: Dates, sex, postal codes

    mutating func optionalDate(_ id: String, _ name: String) -> String? {
        do {
            return try Self.date(value(id), element: "\(id) (\(name))", canadian: canadian)
        } catch {
            warnings.append("AAMVA \(id) (\(name)) is not a valid date: dropped")
            return nil
        }
    }

    /// The eight digits of a date: `MMDDCCYY`/`CCYYMMDD`, or the same with `-` or `/` (pre-standard cards).
    static func dateDigits(_ value: String) -> [Int]? {
        let scalars = Array(value.unicodeScalars)
        let digits = scalars.compactMap { ("0"..."9").contains($0) ? Int($0.value - 48) : nil }
        guard digits.count == 8 else { return nil }
        switch scalars.count {
        case 8: return digits
        case 10:
            let separators = scalars.enumerated().filter { !("0"..."9").contains($0.element) }
            let positions = separators.map(\.offset)
            guard positions == [2, 5] || positions == [4, 7], Set(separators.map(\.element)).count == 1,
                ["-", "/"].contains(separators[0].element)
            else { return nil }
            return digits
        default: return nil
        }
    }

    /// MMDDCCYY in the USA, CCYYMMDD in Canada and on version-01 cards; a value that only fits the other layout
    /// is read that way (the two never both fit: a month is never 18 or more).
    static func date(_ value: String?, element: String, canadian: Bool) throws(AAMVAError) -> String? {
        guard let value = value.nonEmpty else { return nil }
        guard let digits = dateDigits(value) else {
            throw AAMVAError(message: "AAMVA \(element) is not an 8-digit date")
        }
        let number = { (range: Range<Int>) in digits[range].reduce(0) { $0 * 10 + $1 } }
        let us = (year: number(4..<8), month: number(0..<2), day: number(2..<4))
        let canada = (year: number(0..<4), month: number(4..<6), day: number(6..<8))
        for candidate in canadian ? [canada, us] : [us, canada]
        where isValidDate(year: candidate.year, month: candidate.month, day: candidate.day) && candidate.year >= 1800 {
            return formatDate(year: candidate.year, month: candidate.month, day: candidate.day)
        }
        throw AAMVAError(message: "AAMVA \(element) is not a valid date")
    }

    static func sex(_ value: String) -> String? {
        switch value.uppercased() {
        case "1", "M": "M"
        case "2", "F": "F"
        case "9", "X": "X"
        default: nil
        }
    }

    /// A US ZIP as 5 digits or ZIP+4 (`71901-4455`), whatever padding the card used (`633011`, `96826     0`,
    /// `0210800000`); a Canadian postal code (`A1A 1A1`, `A1A1A1`) as printed.
    static func postalCode(_ value: String) -> String? {
        let scalars = Array(value.uppercased().unicodeScalars)
        if let first = scalars.first, ("A"..."Z").contains(first) {
            let compact = scalars.filter { $0 != " " && $0 != "-" }
            guard compact.count == 6,
                compact.enumerated().allSatisfy({ index, scalar in
                    index % 2 == 0 ? ("A"..."Z").contains(scalar) : ("0"..."9").contains(scalar)
                })
            else { return nil }
            return value.uppercased().split(separator: " ").joined(separator: " ")
        }
        guard scalars.allSatisfy({ ("0"..."9").contains($0) || $0 == " " || $0 == "-" }) else { return nil }
        let digits = String(String.UnicodeScalarView(scalars.filter { ("0"..."9").contains($0) }))
        guard digits.count >= 5 else { return nil }
        let zip = String(digits.prefix(5)), rest = digits.dropFirst(5)
        // The +4 is the next four digits when what follows them is only padding zeros.
        let plusFour = rest.prefix(4)
        if plusFour.count == 4, plusFour != "0000", rest.dropFirst(4).allSatisfy({ $0 == "0" }) {
            return "\(zip)-\(plusFour)"
        }
        return zip
    }
}

extension Optional where Wrapped == String {
    /// nil for a missing or blank value.
    var nonEmpty: String? {
        guard let self, !self.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return self
    }
}
