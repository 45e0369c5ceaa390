/// An MRZ's fields, by their document key names, and the two names a refusal may give that are no field.
public enum MRZField: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    case documentCode, issuingState, name, documentNumber, nationality, dateOfBirth, sex, dateOfExpiry
    /// TD3's personal number (ICAO 9303's optional data of the second line, with its own check digit).
    case personalIdNumber
    /// TD1's first-line, TD2's and a visa's optional data.
    case optionalData
    /// TD1's second-line optional data.
    case optionalData2
    /// The composite check digit.
    case composite
    /// No field: the lines themselves (their number, length and alphabet), or a band whose cells cannot be read.
    case layout
    /// No field: the reference date two-digit years are placed against.
    case referenceDate

    public static func < (a: MRZField, b: MRZField) -> Bool { a.rawValue < b.rawValue }
}

/// Where each field of a format is, as ICAO 9303's tables give it (Part 4 for TD3 and MRV-A, Part 5 for TD1,
/// Part 6 for TD2, Part 7 for MRV-B): each field's line, cells, alphabet and check digit, stated once. The parser,
/// the image reader's character slots and every list of a format's positions are read from this table.
public struct MRZLayout: Sendable {
    /// What a field's cells may hold.
    public enum Alphabet: Sendable {
        /// A letter, then letters or fillers: a document code (`P<`, `ID`, `V<`), whose first cell is never a filler.
        case documentCode
        /// Letters and fillers.
        case letters
        /// Digits.
        case digits
        /// Letters, digits and fillers.
        case alphanumeric
        /// `M`, `F`, `X` or a filler.
        case sex
    }

    public struct Position: Hashable, Sendable {
        public var line: Int
        public var index: Int

        public init(line: Int, index: Int) {
            self.line = line
            self.index = index
        }
    }

    public struct Field: Sendable {
        public var name: MRZField
        public var line: Int
        /// The field's cells, its check digit not included.
        public var cells: Range<Int>
        public var alphabet: Alphabet
        /// The index, on the field's line, of its own check digit.
        public var checkDigit: Int?
        /// Whether that check digit may be a filler: over an all-filler personal number (TD3), or after a TD1
        /// document number longer than nine characters, whose rest and check digit are in the optional data.
        public var fillerCheckDigit = false
        /// Whether the composite check digit covers the field (with its own check digit).
        public var inComposite = false

        /// The field's cells and its check digit's.
        public var positions: [Position] {
            (cells.map { $0 } + (checkDigit.map { [$0] } ?? [])).map { Position(line: line, index: $0) }
        }

        /// Whether a check digit stands behind the field: its own or the composite.
        public var isChecked: Bool { checkDigit != nil || inComposite || name == .composite }
    }

    public var format: MRZ.Format
    public var lineCount: Int
    public var width: Int
    /// In reading order (line by line, left to right): the composite check digit, where there is one, is a field
    /// of its own at its place.
    public var fields: [Field]
    /// The field a document number longer than its cells continues in (TD1's optional data, ICAO 9303 Part 5).
    public var numberContinuesIn: MRZField?

    public subscript(_ name: MRZField) -> Field? { fields.first { $0.name == name } }

    public static func of(_ format: MRZ.Format) -> MRZLayout {
        switch format {
        case .td3: td3
        case .td2: td2
        case .mrvA: mrvA
        case .mrvB: mrvB
        case .td1: td1
        }
    }

    /// The field holding a cell; `layout` for none.
    public func field(at position: Position) -> MRZField {
        fields.first { $0.line == position.line && ($0.cells.contains(position.index) || $0.checkDigit == position.index) }?.name
            ?? .layout
    }

    /// The cells the composite check digit is computed over, in order: each field it covers with its check digit.
    public var compositeInput: [Position] { fields.filter(\.inComposite).flatMap(\.positions) }

    /// The cells a failing check of `name` is mended at: the field's cells and check digit (and those of the field a
    /// long number continues in); for the composite, the cells it alone covers and its digit. Empty for `layout` and
    /// `referenceDate`, which no cell mends.
    public func cells(mending name: MRZField) -> [Position] {
        guard let field = self[name] else { return [] }
        switch name {
        case .composite: return fields.filter { $0.inComposite && $0.checkDigit == nil }.flatMap(\.positions) + field.positions
        case .documentNumber: return field.positions + (numberContinuesIn.flatMap { self[$0]?.positions } ?? [])
        default: return field.positions
        }
    }

    // MARK: - The tables

    /// The first line of a passport or a visa (TD3, TD2, MRV-A, MRV-B): document code, issuing state, name.
    private static func nameLine(width: Int) -> [Field] {
        [
            Field(name: .documentCode, line: 0, cells: 0..<2, alphabet: .documentCode),
            Field(name: .issuingState, line: 0, cells: 2..<5, alphabet: .letters),
            Field(name: .name, line: 0, cells: 5..<width, alphabet: .letters)
        ]
    }

    /// The second line of a passport or a visa as far as the expiry date; `inComposite` for a passport.
    private static func numberLine(inComposite: Bool) -> [Field] {
        [
            Field(name: .documentNumber, line: 1, cells: 0..<9, alphabet: .alphanumeric, checkDigit: 9, inComposite: inComposite),
            Field(name: .nationality, line: 1, cells: 10..<13, alphabet: .letters),
            Field(name: .dateOfBirth, line: 1, cells: 13..<19, alphabet: .digits, checkDigit: 19, inComposite: inComposite),
            Field(name: .sex, line: 1, cells: 20..<21, alphabet: .sex),
            Field(name: .dateOfExpiry, line: 1, cells: 21..<27, alphabet: .digits, checkDigit: 27, inComposite: inComposite)
        ]
    }

    static let td3 = MRZLayout(
        format: .td3, lineCount: 2, width: 44,
        fields: nameLine(width: 44) + numberLine(inComposite: true) + [
            Field(
                name: .personalIdNumber, line: 1, cells: 28..<42, alphabet: .alphanumeric, checkDigit: 42, fillerCheckDigit: true,
                inComposite: true),
            Field(name: .composite, line: 1, cells: 43..<43, alphabet: .digits, checkDigit: 43)
        ])

    static let td2 = MRZLayout(
        format: .td2, lineCount: 2, width: 36,
        fields: nameLine(width: 36) + numberLine(inComposite: true) + [
            Field(name: .optionalData, line: 1, cells: 28..<35, alphabet: .alphanumeric, inComposite: true),
            Field(name: .composite, line: 1, cells: 35..<35, alphabet: .digits, checkDigit: 35)
        ])

    /// A visa's optional data runs to the end of the line: no composite check digit.
    static let mrvA = MRZLayout(
        format: .mrvA, lineCount: 2, width: 44,
        fields: nameLine(width: 44) + numberLine(inComposite: false) + [
            Field(name: .optionalData, line: 1, cells: 28..<44, alphabet: .alphanumeric)
        ])

    static let mrvB = MRZLayout(
        format: .mrvB, lineCount: 2, width: 36,
        fields: nameLine(width: 36) + numberLine(inComposite: false) + [
            Field(name: .optionalData, line: 1, cells: 28..<36, alphabet: .alphanumeric)
        ])

    static let td1 = MRZLayout(
        format: .td1, lineCount: 3, width: 30,
        fields: [
            Field(name: .documentCode, line: 0, cells: 0..<2, alphabet: .documentCode),
            Field(name: .issuingState, line: 0, cells: 2..<5, alphabet: .letters),
            Field(
                name: .documentNumber, line: 0, cells: 5..<14, alphabet: .alphanumeric, checkDigit: 14, fillerCheckDigit: true,
                inComposite: true),
            Field(name: .optionalData, line: 0, cells: 15..<30, alphabet: .alphanumeric, inComposite: true),
            Field(name: .dateOfBirth, line: 1, cells: 0..<6, alphabet: .digits, checkDigit: 6, inComposite: true),
            Field(name: .sex, line: 1, cells: 7..<8, alphabet: .sex),
            Field(name: .dateOfExpiry, line: 1, cells: 8..<14, alphabet: .digits, checkDigit: 14, inComposite: true),
            Field(name: .nationality, line: 1, cells: 15..<18, alphabet: .letters),
            Field(name: .optionalData2, line: 1, cells: 18..<29, alphabet: .alphanumeric, inComposite: true),
            Field(name: .composite, line: 1, cells: 29..<29, alphabet: .digits, checkDigit: 29),
            Field(name: .name, line: 2, cells: 0..<30, alphabet: .letters)
        ],
        numberContinuesIn: .optionalData)
}
