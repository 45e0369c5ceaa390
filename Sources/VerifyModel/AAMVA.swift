import Foundation

/// Why a barcode payload was refused as AAMVA data: a `documentCaptureError`.
public struct AAMVAError: CodedError, Equatable, CustomStringConvertible {
    public var message: String

    public var failureCode: FailureCode { .document(.documentCaptureError) }
    public var description: String { message }
}

/// The AAMVA DL/ID card data of a North-American licence's PDF417: header, subfile directory and elements.
public struct AAMVARecord: Sendable, Equatable {
    /// Issuer identification number (`636000` for Virginia...).
    public var issuerId: String
    public var version: Int
    public var jurisdictionVersion: Int?
    /// Subfile type (`DL`, `ID`, `ZV`...) to its elements (`DAQ` -> value), values without padding.
    public var subfiles: [String: [String: String]]
    public var raw: String

    /// Whether `text` opens as AAMVA data does: the `@` compliance indicator, then `ANSI ` (or `AAMVA`, before
    /// 2000) within the header's first 16 characters. Barcode text handed over as text is parsed only then.
    public static func hasHeader(_ text: String) -> Bool {
        let head = String(String.UnicodeScalarView(text.unicodeScalars.prefix(16)))
        return head.hasPrefix("@") && (head.contains("ANSI ") || head.contains("AAMVA"))
    }

    /// The DL or ID subfile's elements.
    public var elements: [String: String] { subfiles["DL"] ?? subfiles["ID"] ?? [:] }

    public init(parsing text: String) throws(AAMVAError) {
        // Offsets count bytes of the ISO-8859-1 payload: one Unicode scalar each.
        let scalars = Array(text.unicodeScalars)
        // Clamped before a Range is made: a directory's offsets come from the input, and a Range whose lower
        // bound passes its upper one traps.
        func slice(_ lower: Int, _ upper: Int) -> String {
            let lower = max(0, min(lower, scalars.count)), upper = max(lower, min(upper, scalars.count))
            return String(String.UnicodeScalarView(scalars[lower..<upper]))
        }
        guard scalars.first == "@" else {
            throw AAMVAError(message: "not AAMVA data: it does not start with the '@' compliance indicator")
        }
        // Searched as scalars, by offset: String indices from a search are not offsets, and input with replaced
        // (invalid) bytes made converting them trap.
        func find(_ pattern: String, from start: Int, before end: Int) -> Int? {
            let pattern = Array(pattern.unicodeScalars), end = min(end, scalars.count)
            guard start >= 0, end - start >= pattern.count else { return nil }
            return (start...(end - pattern.count)).first { scalars[$0..<($0 + pattern.count)].elementsEqual(pattern) }
        }
        guard let marker = find("ANSI ", from: 0, before: 16) ?? find("AAMVA", from: 0, before: 16) else {
            throw AAMVAError(message: "not AAMVA data: no 'ANSI ' file type in the header")
        }
        var cursor = marker + 5
        func digits(_ count: Int, _ what: String) throws(AAMVAError) -> Int {
            let text = slice(cursor, cursor + count)
            guard text.count == count, let value = Int(text), text.allSatisfy(\.isASCII) else {
                throw AAMVAError(message: "AAMVA header: \(what) is not \(count) digits")
            }
            cursor += count
            return value
        }
        let iin = slice(cursor, cursor + 6)
        guard iin.count == 6, iin.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw AAMVAError(message: "AAMVA header: issuer identification number is not 6 digits")
        }
        cursor += 6
        version = try digits(2, "the version")
        // Version 1 (2000) has no jurisdiction version field.
        jurisdictionVersion = version >= 2 ? try digits(2, "the jurisdiction version") : nil
        let entries = try digits(2, "the number of entries")
        guard entries >= 1 else { throw AAMVAError(message: "AAMVA header: no subfile entries") }
        var directory: [(type: String, offset: Int, length: Int)] = []
        for _ in 0..<entries {
            let type = slice(cursor, cursor + 2)
            cursor += 2
            let offset = try digits(4, "a subfile offset"), length = try digits(4, "a subfile length")
            directory.append((type, offset, length))
        }
        let directoryEnd = cursor

        var subfiles: [String: [String: String]] = [:]
        for entry in directory {
            // Trust the directory when it points at the subfile; many issuers' offsets are off, so search otherwise.
            var start = entry.offset
            if slice(start, start + 2) != entry.type {
                guard !entry.type.isEmpty, let found = find(entry.type, from: directoryEnd, before: scalars.count) else { continue }
                start = found
            }
            var body = slice(start + 2, scalars.count)
            if let terminator = body.firstIndex(of: "\r") { body = String(body[..<terminator]) }
            var elements: [String: String] = [:]
            for line in body.split(separator: "\n", omittingEmptySubsequences: true) {
                guard line.count >= 3 else { continue }
                let id = String(line.prefix(3))
                let value = line.dropFirst(3).trimmingCharacters(in: CharacterSet(charactersIn: " \0\r"))
                elements[id] = value
            }
            subfiles[entry.type] = elements
        }
        guard subfiles["DL"] != nil || subfiles["ID"] != nil else {
            throw AAMVAError(message: "AAMVA data has no DL or ID subfile")
        }
        issuerId = iin
        self.subfiles = subfiles
        raw = text
    }

    /// The document keys this record provides (SPEC §1, §4).
    public var fields: DocumentFields {
        get throws(AAMVAError) {
            let e = elements
            var fields = DocumentFields()
            fields[.barcode] = raw
            fields[.documentNumber] = e["DAQ"].nonEmpty
            var first = e["DAC"].nonEmpty, middle = e["DAD"].nonEmpty, last = e["DCS"].nonEmpty
            if first == nil, let given = e["DCT"].nonEmpty {
                // Versions 2-3: given names in one element, separated by a comma or a space.
                let parts = given.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
                first = parts.first
                middle = middle ?? (parts.count > 1 ? parts.dropFirst().joined(separator: " ") : nil)
            }
            if last == nil, let full = e["DAA"].nonEmpty {
                // Version 1: LAST,FIRST,MIDDLE.
                let parts = full.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                last = Optional(parts[0]).nonEmpty
                first = first ?? (parts.count > 1 ? Optional(parts[1]).nonEmpty : nil)
                middle = middle ?? (parts.count > 2 ? Optional(parts[2...].joined(separator: " ")).nonEmpty : nil)
            }
            fields[.firstName] = first
            fields[.middleName] = middle
            fields[.lastName] = last
            let full = [first, middle, last].compactMap { $0 }.joined(separator: " ")
            fields[.fullName] = full.isEmpty ? nil : full
            fields[.additionalNameInfo] = e["DCU"].nonEmpty
            let canadian = e["DCG"] == "CAN"
            fields[.dateOfBirth] = try Self.date(e["DBB"], element: "DBB", canadian: canadian)
            fields[.dateOfExpiry] = try Self.date(e["DBA"], element: "DBA", canadian: canadian)
            fields[.dateOfIssue] = try Self.date(e["DBD"], element: "DBD", canadian: canadian)
            fields[.sex] = try Self.sex(e["DBC"])
            let street = [e["DAG"].nonEmpty, e["DAH"].nonEmpty].compactMap { $0 }.joined(separator: ", ")
            fields[.addressStreet] = street.isEmpty ? nil : street
            fields[.addressCity] = e["DAI"].nonEmpty
            fields[.addressState] = e["DAJ"].nonEmpty
            fields[.addressZip] = Self.postalCode(e["DAK"])
            fields[.country] = e["DCG"].nonEmpty
            fields[.documentAdditionalNumber] = e["DCF"].nonEmpty
            return fields
        }
    }

    /// MMDDCCYY in the USA, CCYYMMDD in Canada; a value that only fits the other layout is read that way.
    static func date(_ value: String?, element: String, canadian: Bool) throws(AAMVAError) -> String? {
        guard let value = value.nonEmpty else { return nil }
        let digits = value.compactMap { $0.isASCII ? $0.wholeNumberValue : nil }
        guard digits.count == 8, value.count == 8 else {
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

    static func sex(_ value: String?) throws(AAMVAError) -> String? {
        switch value.nonEmpty?.uppercased() {
        case nil: nil
        case "1", "M": "M"
        case "2", "F": "F"
        case "9", "X": "X"
        case _?: throw AAMVAError(message: "AAMVA DBC sex code is not 1, 2 or 9")
        }
    }

    /// US ZIP+4 codes come as 9 digits, `0000` when there is no +4.
    static func postalCode(_ value: String?) -> String? {
        guard let value = value.nonEmpty else { return nil }
        guard value.count == 9, value.allSatisfy({ $0.isASCII && $0.isNumber }) else { return value }
        return value.hasSuffix("0000") ? String(value.prefix(5)) : "\(value.prefix(5))-\(value.suffix(4))"
    }
}

extension Optional where Wrapped == String {
    /// nil for a missing or blank value.
    var nonEmpty: String? {
        guard let self, !self.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return self
    }
}
