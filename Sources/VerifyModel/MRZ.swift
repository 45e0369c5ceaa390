import Foundation

/// Why an MRZ was refused: always a `documentCaptureError`, naming the field at fault.
public struct MRZError: CodedError, Equatable, CustomStringConvertible {
    /// The field at fault (`documentNumber`, `dateOfBirth`...), `composite`, or `layout`; `referenceDate` for a
    /// reference date no two-digit year can be placed against.
    public var field: MRZField
    public var message: String
    public var kind: Kind

    /// What is wrong, whatever the field.
    public enum Kind: String, Sendable, Codable {
        /// The lines' number, lengths or characters are no format's.
        case layout
        /// A check digit does not match the field's characters.
        case checkDigit
        /// A date field holds no date.
        case invalidDate
        /// The sex is not `M`, `F`, `X` or a filler.
        case invalidSex
        /// The reference date for two-digit years is out of range.
        case referenceDate
    }

    public var failureCode: FailureCode { .document(.documentCaptureError) }
    public var description: String { message }

    public init(field: MRZField, message: String, kind: Kind = .layout) {
        self.field = field
        self.message = message
        self.kind = kind
    }
}

/// A machine-readable zone (ICAO 9303 TD1, TD2 or TD3, or a visa's MRV-A or MRV-B) with every check digit verified.
public struct MRZ: Sendable, Equatable {
    public enum Format: String, Sendable {
        case td1 = "TD1"
        case td2 = "TD2"
        case td3 = "TD3"
        /// Visas (ICAO 9303 Part 7): 2×44 and 2×36 like TD3 and TD2, document code `V`, optional data where the
        /// passport's personal number and composite check digit are, and no check digit over it.
        case mrvA = "MRV-A"
        case mrvB = "MRV-B"

        /// The passport-book layout a visa shares its geometry with.
        public var geometry: Format {
            switch self {
            case .mrvA: .td3
            case .mrvB: .td2
            default: self
            }
        }
    }

    public var format: Format
    public var lines: [String]
    /// `P`, `I`, `ID`, `AC`... with fillers removed.
    public var documentCode: String
    public var issuingState: String
    /// Surname(s), fillers turned into spaces.
    public var primaryIdentifier: String
    /// Given names, fillers turned into spaces.
    public var secondaryIdentifier: String
    public var documentNumber: String
    public var nationality: String
    /// `YYYY-MM-DD`.
    public var dateOfBirth: String
    /// `M`, `F` or `X`.
    public var sex: String
    /// `YYYY-MM-DD`.
    public var dateOfExpiry: String
    /// TD3's personal number, TD1's first-line optional data, TD2's optional data.
    public var optionalData: String
    /// TD1's second-line optional data.
    public var optionalData2: String
    /// The rules of ICAO 9303 the print itself breaks, where the parse admitted them (`admitting`): a birth date
    /// no calendar has (29 February of a common year, all zeros), whose value is then empty. Never set otherwise.
    public var misprints: [MRZError] = []

    /// The issuing state's and the nationality's three cells as printed (`D<<` for Germany), to be checked
    /// against the codes ICAO 9303 lists. `lines` edited out of its format's layout is refused (`layout`).
    public var stateCodes: [(field: MRZField, code: String)] {
        get throws(MRZError) {
            let rows = lines.map { Array($0) }
            let layout = MRZLayout.of(format)
            var codes: [(field: MRZField, code: String)] = []
            for name in [MRZField.issuingState, .nationality] {
                guard let field = layout[name], field.line < rows.count, rows[field.line].count >= field.cells.upperBound else {
                    throw MRZError(field: .layout, message: "MRZ lines do not have the \(format.rawValue) layout")
                }
                codes.append((name, String(rows[field.line][field.cells])))
            }
            return codes
        }
    }

    /// The years a reference date may fall in: a calendar places dates beyond them at its own limits.
    static let referenceYears = 1...9999

    /// Parses MRZ text given as lines separated by `\n` or `\r\n`; surrounding whitespace and blank lines are
    /// ignored. `referenceDate` decides two-digit years: a birth year is never in the future, and an expiry
    /// year is at most 50 years ahead; a reference date outside the years 1 to 9999 is refused (`referenceDate`).
    /// `admitting`: kinds of error (only `invalidDate` is admitted) kept in `misprints` rather than thrown, once the
    /// field's check digit holds: what a reader reports of a print that breaks the rule.
    public init(parsing text: String, referenceDate: Date = Date(), admitting admitted: Set<MRZError.Kind> = []) throws(MRZError) {
        let lines = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        let format: Format
        switch (lines.count, lines.first?.count) {
        case (3, 30) where lines.allSatisfy({ $0.count == 30 }): format = .td1
        case (2, 36) where lines.allSatisfy({ $0.count == 36 }): format = lines[0].hasPrefix("V") ? .mrvB : .td2
        case (2, 44) where lines.allSatisfy({ $0.count == 44 }): format = lines[0].hasPrefix("V") ? .mrvA : .td3
        default:
            throw MRZError(
                field: .layout,
                message:
                    "MRZ is not TD1 (3×30), TD2 or MRV-B (2×36), TD3 or MRV-A (2×44): got \(lines.count) line(s) of length \(lines.map { String($0.count) }.joined(separator: ", "))"
            )
        }
        for (index, line) in lines.enumerated() {
            // Positions, never the characters: the message must not carry any part of the document.
            if let bad = line.firstIndex(where: { !MRZ.isMRZCharacter($0) }) {
                let position = line.distance(from: line.startIndex, to: bad) + 1
                throw MRZError(field: .layout, message: "MRZ line \(index + 1) has a character outside A-Z, 0-9 and '<' at position \(position)")
            }
        }
        let rows = lines.map { Array($0) }
        let today =
            referenceDate.timeIntervalSinceReferenceDate.isFinite
            ? Calendar(identifier: .gregorian).dateComponents(in: .gmt, from: referenceDate) : DateComponents()
        guard today.era == 1, let year = today.year, let month = today.month, let day = today.day, Self.referenceYears.contains(year)
        else {
            throw MRZError(
                field: .referenceDate, message: "the reference date for two-digit years is not within the years 1 to 9999", kind: .referenceDate)
        }
        let pivot = (year, month, day)
        self.format = format
        self.lines = lines
        let layout = MRZLayout.of(format)
        let (values, misprints) = try MRZ.values(rows, layout: layout, pivot: pivot, admitting: admitted.intersection([.invalidDate]))
        self.misprints = misprints
        if let composite = layout[.composite], let digit = composite.checkDigit {
            try MRZ.verify(layout.compositeInput.map { rows[$0.line][$0.index] }, digit: rows[composite.line][digit], field: .composite)
        }
        let name = layout[.name]!
        (primaryIdentifier, secondaryIdentifier) = MRZ.names(rows[name.line][name.cells])
        documentCode = values[.documentCode] ?? ""
        issuingState = values[.issuingState] ?? ""
        documentNumber = values[.documentNumber] ?? ""
        nationality = values[.nationality] ?? ""
        dateOfBirth = values[.dateOfBirth] ?? ""
        sex = values[.sex] ?? ""
        dateOfExpiry = values[.dateOfExpiry] ?? ""
        // TD3's personal number is its optional data.
        optionalData = values[.personalIdNumber] ?? values[.optionalData] ?? ""
        optionalData2 = values[.optionalData2] ?? ""
    }

    /// Each field's value, fillers removed, field by field in reading order (so that the first check to fail is the
    /// first a reader meets); dates as `YYYY-MM-DD`. A date error of an admitted kind is returned, its value empty.
    private static func values(
        _ rows: [[Character]], layout: MRZLayout, pivot: (Int, Int, Int), admitting admitted: Set<MRZError.Kind>
    ) throws(MRZError) -> (values: [MRZField: String], misprints: [MRZError]) {
        var values: [MRZField: String] = [:]
        var misprints: [MRZError] = []
        for field in layout.fields where field.name != .composite {
            let row = rows[field.line]
            var value = MRZ.field(row, field.cells)
            if field.name == .documentNumber, let continued = layout.numberContinuesIn.flatMap({ layout[$0] }),
                let check = field.checkDigit, row[check] == "<", row[continued.cells.lowerBound] != "<"
            {
                // A number longer than its cells continues in the optional data, its check digit last there.
                let end = row[continued.cells].firstIndex(of: "<") ?? continued.cells.upperBound
                let number = Array(row[field.cells] + row[continued.cells.lowerBound..<(end - 1)])
                try MRZ.verify(number, digit: row[end - 1], field: .documentNumber)
                value = String(number).replacingOccurrences(of: "<", with: "")
                values[continued.name] = MRZ.field(row, end..<continued.cells.upperBound)
            } else if let check = field.checkDigit {
                // An all-filler personal number may carry '<' as its check digit.
                let fillerMeansZero = field.name == .personalIdNumber && row[field.cells].allSatisfy { $0 == "<" }
                try MRZ.verify(Array(row[field.cells]), digit: row[check], field: field.name, fillerMeansZero: fillerMeansZero)
            }
            switch field.name {
            case .dateOfBirth, .dateOfExpiry:
                do throws(MRZError) {
                    value = try MRZ.date(value, field: field.name, pivotYear: pivot, isExpiry: field.name == .dateOfExpiry)
                } catch let error where admitted.contains(error.kind) {
                    misprints.append(error)
                    value = ""
                }
            case .sex:
                value = try MRZ.sex(row[field.cells.lowerBound])
            default:
                break
            }
            values[field.name] = values[field.name] ?? value
        }
        return (values, misprints)
    }

    /// The document keys this MRZ provides (CONTRACT §1).
    public var fields: DocumentFields {
        var fields = DocumentFields()
        fields[.mrzData] = lines.joined(separator: "\n")
        fields[.documentNumber] = documentNumber
        fields[.country] = issuingState.isEmpty ? nil : issuingState
        fields[.nationality] = nationality.isEmpty ? nil : nationality
        fields[.dateOfBirth] = dateOfBirth
        fields[.dateOfExpiry] = dateOfExpiry
        fields[.sex] = sex
        fields[.lastName] = primaryIdentifier.isEmpty ? nil : primaryIdentifier
        let given = secondaryIdentifier.split(separator: " ").map(String.init)
        fields[.firstName] = given.first
        fields[.middleName] = given.count > 1 ? given.dropFirst().joined(separator: " ") : nil
        let full = [secondaryIdentifier, primaryIdentifier].filter { !$0.isEmpty }.joined(separator: " ")
        fields[.fullName] = full.isEmpty ? nil : full
        // A visa's optional data is no personal number, and no check digit covers it.
        let visa = format == .mrvA || format == .mrvB
        fields[.personalIdNumber] = optionalData.isEmpty || visa ? nil : optionalData
        fields[.documentAdditionalNumber] = optionalData2.isEmpty ? nil : optionalData2
        return fields
    }

    // MARK: - ICAO 9303 rules

    static func isMRZCharacter(_ character: Character) -> Bool {
        character == "<" || ("A"..."Z").contains(character) || ("0"..."9").contains(character)
    }

    /// The check digit over `characters`: weights 7, 3, 1 repeating, each character's `checkValue`.
    public static func checkDigit(_ characters: some Sequence<Character>) -> Int {
        let weights = [7, 3, 1]
        var sum = 0
        for (index, character) in characters.enumerated() { sum += checkValue(character) * weights[index % 3] }
        return sum % 10
    }

    /// A character's value in a check digit: digits as themselves, A-Z as 10-35, `<` (and anything else) as 0.
    public static func checkValue(_ character: Character) -> Int {
        if let digit = character.wholeNumberValue, character.isASCII { return digit }
        if let ascii = character.asciiValue, ascii >= 65, ascii <= 90 { return Int(ascii) - 55 }
        return 0
    }

    private static func field(_ row: [Character], _ range: Range<Int>) -> String {
        String(row[range]).replacingOccurrences(of: "<", with: "")
    }

    private static func verify(_ characters: [Character], digit: Character, field: MRZField, fillerMeansZero: Bool = false) throws(MRZError) {
        let expected = checkDigit(characters)
        let given: Int? = digit == "<" && fillerMeansZero ? 0 : (digit.isASCII ? digit.wholeNumberValue : nil)
        guard given == expected else {
            throw MRZError(field: field, message: "MRZ check digit for \(field) does not match", kind: .checkDigit)
        }
    }

    private static func names(_ slice: ArraySlice<Character>) -> (primary: String, secondary: String) {
        let text = String(slice)
        let parts = text.components(separatedBy: "<<")
        let clean = { (part: String) in
            part.split(separator: "<").joined(separator: " ")
        }
        let primary = clean(parts[0])
        let secondary = clean(parts.dropFirst().joined(separator: "<<"))
        return (primary, secondary)
    }

    private static func sex(_ character: Character) throws(MRZError) -> String {
        switch character {
        case "M": "M"
        case "F": "F"
        case "<", "X": "X"
        default: throw MRZError(field: .sex, message: "MRZ sex is not M, F, X or <", kind: .invalidSex)
        }
    }

    private static func date(_ text: String, field: MRZField, pivotYear today: (Int, Int, Int), isExpiry: Bool) throws(MRZError) -> String {
        let pivotYear = today.0
        let digits = text.compactMap { $0.isASCII ? $0.wholeNumberValue : nil }
        guard digits.count == 6 else {
            throw MRZError(field: field, message: "MRZ \(field) is not a YYMMDD date", kind: .invalidDate)
        }
        let yy = digits[0] * 10 + digits[1], month = digits[2] * 10 + digits[3], day = digits[4] * 10 + digits[5]
        let century = pivotYear / 100 * 100
        var year = century + yy
        if isExpiry {
            if year > pivotYear + 50 { year -= 100 }
            if year < pivotYear - 50 { year += 100 }
        } else if (year, month, day) > today {
            year -= 100
        }
        guard isValidDate(year: year, month: month, day: day) else {
            throw MRZError(field: field, message: "MRZ \(field) is not a valid date", kind: .invalidDate)
        }
        return formatDate(year: year, month: month, day: day)
    }
}

/// `YYYY-MM-DD`, the spec's normalised date.
func formatDate(year: Int, month: Int, day: Int) -> String {
    let pad = { (value: Int, width: Int) in String(repeating: "0", count: max(0, width - String(value).count)) + String(value) }
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
}

func isValidDate(year: Int, month: Int, day: Int) -> Bool {
    guard (1...12).contains(month), day >= 1, year >= 1 else { return false }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return day <= days[month - 1]
}

extension MRZ {
    /// How surely a field of an MRZ read from an image was read: its weakest character's template score and lead.
    public struct FieldConfidence: Sendable, Codable, Hashable {
        /// The weakest cell's template score (normalised correlation, -1 to 1).
        public var score: Float
        /// The weakest cell's lead over the next character its slot allows.
        public var margin: Float

        public init(score: Float, margin: Float) {
            self.score = score
            self.margin = margin
        }
    }
}
