import VerifyModel

/// What is known about each pair of OCR-B characters that blur, glare and wear turn into one another, in one table
/// (as tesseract's ambiguity table gives each pair its `AmbigType`): a mend only ever swaps a character for one of
/// its look-alikes (any other second choice that satisfies a check digit is chance, one time in ten), and a close
/// call between two of them is settled only by the evidence the pair's row names.
struct LookAlike: Sendable {
    /// How a close call between the two may be told.
    enum Evidence: Sendable, Hashable {
        /// The field's alphabet (a date is digits, a name letters): settled before any score is looked at.
        case alphabet
        /// A stroke only one of them has, well away from the other's ink (a `Q`'s tail, a `K`'s stem beside a `<`):
        /// `GlyphClassifier.evidence`, by `MRZReadingPolicy.settledEvidence`.
        case strokes
        /// The shape of the left side: a `D`'s straight stem against a round letter's bow (`GlyphClassifier.bow`, by
        /// `MRZReadingPolicy.roundBow`).
        case leftSide
        /// The document's own cells of the two (a `0` in a date, an `O` in a name), which show this print's
        /// characters (`DocumentGlyphs`).
        case documentCells
    }

    var pair: (Character, Character)
    var evidence: Set<Evidence>
    /// Whether the two weigh the same in a check digit (`MRZ.checkValue` modulo 10), so that a swap passes it unseen.
    var checkDigitBlind: Bool { MRZ.checkValue(pair.0) % 10 == MRZ.checkValue(pair.1) % 10 }

    /// Round characters that differ in width alone: no stroke of one is away from the other's ink, and width is no
    /// such stroke (measured on every pair, held-apart pages came out wrong: `12S0XZW08` read `12SOXZWO8`).
    private static let round: Set<Evidence> = [.alphabet, .documentCells]
    private static let stroked: Set<Evidence> = [.alphabet, .strokes, .documentCells]

    /// G and Q, 0 and U: templates as close as O and Q (`GlyphClassifier.separation` 0.167 and 0.160 against 0.164)
    /// that weigh the same in a check digit. A hollow `G` at 150 dpi, its mouth shut by closing, read `Q` by 0.075 and
    /// came back with every check digit valid (a clean scan, seed 103).
    static let table: [LookAlike] = [
        LookAlike(pair: ("0", "O"), evidence: round),
        LookAlike(pair: ("0", "Q"), evidence: stroked),
        LookAlike(pair: ("0", "D"), evidence: round.union([.leftSide])),
        LookAlike(pair: ("O", "Q"), evidence: stroked),
        LookAlike(pair: ("O", "D"), evidence: round.union([.leftSide])),
        LookAlike(pair: ("1", "I"), evidence: stroked),
        LookAlike(pair: ("2", "Z"), evidence: stroked),
        LookAlike(pair: ("5", "S"), evidence: stroked),
        LookAlike(pair: ("8", "B"), evidence: stroked),
        LookAlike(pair: ("6", "G"), evidence: stroked),
        LookAlike(pair: ("<", "K"), evidence: stroked),
        LookAlike(pair: ("G", "Q"), evidence: stroked),
        LookAlike(pair: ("0", "U"), evidence: stroked)
    ]

    /// Each character's look-alikes.
    static let of: [Character: Set<Character>] = {
        var table: [Character: Set<Character>] = [:]
        for row in Self.table {
            table[row.pair.0, default: []].insert(row.pair.1)
            table[row.pair.1, default: []].insert(row.pair.0)
        }
        return table
    }()

    /// The pairs told by width alone: no stroke evidence is looked for between them.
    static let widthOnly: Set<Set<Character>> = Set(table.filter { !$0.evidence.contains(.strokes) }.map { [$0.pair.0, $0.pair.1] })

    /// The round letters a `D`'s stem is told from by the left side's bow (any rival of a `D`, not only its look-alikes:
    /// a field's runner-up is judged too).
    static let roundLeft: Set<Character> = ["O", "Q", "0"]
}
