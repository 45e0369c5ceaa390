import HeapModule
import VerifyModel

/// What ICAO 9303 allows at each position of an MRZ, and how a reading whose check digits fail is repaired.
///
/// Look-alikes (0/O, 1/I, 2/Z, 5/S, 8/B) are settled by the field's alphabet where it has one: dates and check
/// digits are digits, names and country codes letters. In fields that take both (document numbers, optional data)
/// the field's check digit chooses among the recogniser's close second choices, and only among those: a glyph read
/// with confidence is never changed to make a check digit pass. A `K` standing alone between fillers in a
/// letters-only field is read as the filler `<` when the recogniser scored them alike. The issuing state and the
/// nationality are kept as read (see `settleStates`).
enum MRZCharacterRules {
    enum Slot {
        /// `capital`: a letter and never the filler (a document code's first character: `P`, `I`, `A`, `C`, `V`).
        case capital, letter, digit, alphanumeric, sex, digitOrFiller

        func allows(_ character: Character) -> Bool {
            switch self {
            case .capital: ("A"..."Z").contains(character)
            case .letter: character == "<" || ("A"..."Z").contains(character)
            case .digit: character.isASCII && character.isNumber
            case .alphanumeric: character == "<" || ("A"..."Z").contains(character) || (character.isASCII && character.isNumber)
            case .sex: "MFX<".contains(character)
            case .digitOrFiller: character == "<" || (character.isASCII && character.isNumber)
            }
        }
    }

    struct Position: Hashable {
        var line: Int
        var index: Int
    }

    /// Each line's slots.
    static func slots(_ format: MRZ.Format) -> [[Slot]] {
        func run(_ slot: Slot, _ count: Int) -> [Slot] { [Slot](repeating: slot, count: count) }
        // A line read a cell off (`<UTOD…` for `I<UTO…`) has no document code: its first cell is never a filler.
        switch format {
        case .td3:
            return [
                [.capital] + run(.letter, 43),
                run(.alphanumeric, 9) + [.digit] + run(.letter, 3) + run(.digit, 7) + [.sex] + run(.digit, 7)
                    + run(.alphanumeric, 14) + [.digitOrFiller, .digit]
            ]
        case .td2:
            return [
                [.capital] + run(.letter, 35),
                run(.alphanumeric, 9) + [.digit] + run(.letter, 3) + run(.digit, 7) + [.sex] + run(.digit, 7)
                    + run(.alphanumeric, 7) + [.digit]
            ]
        case .mrvA:
            return [
                [.capital] + run(.letter, 43),
                run(.alphanumeric, 9) + [.digit] + run(.letter, 3) + run(.digit, 7) + [.sex] + run(.digit, 7)
                    + run(.alphanumeric, 16)
            ]
        case .mrvB:
            return [
                [.capital] + run(.letter, 35),
                run(.alphanumeric, 9) + [.digit] + run(.letter, 3) + run(.digit, 7) + [.sex] + run(.digit, 7)
                    + run(.alphanumeric, 8)
            ]
        case .td1:
            return [
                [.capital] + run(.letter, 4) + run(.alphanumeric, 9) + [.digitOrFiller] + run(.alphanumeric, 15),
                run(.digit, 7) + [.sex] + run(.digit, 7) + run(.letter, 3) + run(.alphanumeric, 11) + [.digit],
                run(.letter, 30)
            ]
        }
    }

    /// The positions a failing field (as `MRZError.field` names it) is read from, its check digit included.
    static func positions(of field: String, in format: MRZ.Format) -> [Position] {
        func on(_ line: Int, _ range: ClosedRange<Int>) -> [Position] { range.map { Position(line: line, index: $0) } }
        let twoLines = format != .td1
        switch (format, field) {
        case (_, "documentNumber") where twoLines: return on(1, 0...9)
        case (_, "dateOfBirth") where twoLines: return on(1, 13...19)
        case (_, "sex") where twoLines: return on(1, 20...20)
        case (_, "dateOfExpiry") where twoLines: return on(1, 21...27)
        case (.td3, "personalIdNumber"): return on(1, 28...42)
        case (.td3, "composite"): return on(1, 43...43)
        case (.td2, "composite"): return on(1, 28...35)
        case (.td1, "documentNumber"): return on(0, 5...29)
        case (.td1, "dateOfBirth"): return on(1, 0...6)
        case (.td1, "sex"): return on(1, 7...7)
        case (.td1, "dateOfExpiry"): return on(1, 8...14)
        case (.td1, "composite"): return on(0, 15...29) + on(1, 18...29)
        default: return []
        }
    }

    /// The best character each slot allows, by score.
    static func best(_ scores: [Float], slot: Slot) -> (character: Character, score: Float) {
        var best: (Character, Float) = ("<", -2)
        for (index, character) in GlyphClassifier.characters.enumerated() where slot.allows(character) && scores[index] > best.1 {
            best = (character, scores[index])
        }
        return best
    }

    /// OCR-B characters that blur, glare and wear turn into one another. A mend only ever swaps a character for
    /// one of these: any other second choice that happens to satisfy a check digit is chance (one time in ten).
    /// G and Q, 0 and U: templates as close as O and Q (`GlyphClassifier.separation` 0.167 and 0.160 against 0.164)
    /// that weigh the same in a check digit, so that a swap passes it unseen. A hollow `G` at 150 dpi, its mouth shut
    /// by closing, read `Q` by 0.075 and came back with every check digit valid (a clean scan, seed 103).
    static let lookAlikes: [Character: Set<Character>] = {
        let pairs: [(Character, Character)] = [
            ("0", "O"), ("0", "Q"), ("0", "D"), ("O", "Q"), ("O", "D"), ("1", "I"),
            ("2", "Z"), ("5", "S"), ("8", "B"), ("6", "G"), ("<", "K"), ("G", "Q"), ("0", "U")
        ]
        var table: [Character: Set<Character>] = [:]
        for (a, b) in pairs {
            table[a, default: []].insert(b)
            table[b, default: []].insert(a)
        }
        return table
    }()

    /// A look-alike that scored `gap` below the chosen character is a close call when the gap is under
    /// `closeCall` of what separates the two templates at best (1 - their correlation): 0 and O differ little
    /// (0.11), 0 and D more (0.34), so one absolute gap would call every 0/O a toss-up and no 0/D one. Chosen on
    /// the benchmark corpus's tune split (scripts/bench-mrz), with the wrong readings returned as the measure.
    static let closeCall: Float = 0.5
    /// In a field a check digit covers, the share of `closeCall` within which two look-alikes that would swap
    /// together and still pass the check digit make the number a guess: swaps that cancel (two zeros read `O` at
    /// weights 7 and 3) leave no trace, so the pair is held to a wider bound than a single swap.
    static let pairCloseCall: Float = 1.15
    /// `pairCloseCall` in a field whose check digit a mend satisfied: the mend may have made up for cells read wrong,
    /// so the look-alikes that would undo it are looked for within the whole close call (`V0445209996` read
    /// `VO44SZO9996`: both 0s read O by 0.07, the 5 and the 2 mended to S and Z).
    static let mendedCloseCall: Float = 2
    /// In a field whose check digit a mend satisfied, how close a runner-up that is no look-alike of the character read
    /// must come for the swap to it to be tried with the others: a curled line's `KRUMA7BY` came back `XRUMA78Y`, its
    /// `K` read `X` by 0.04 and its `B` mended to `8`, two changes that cancel at weights 7 and 7.
    static let mendedRival: Float = 0.05
    /// The share of `closeCall` within which a look-alike makes a name's letter a guess.
    static let nameCloseCall: Float = 0.75
    /// How clearly the samples where only one of two look-alikes has ink must show the one read
    /// (`GlyphClassifier.evidence`, -1 to 1) for a close call between them to be settled; as clearly the other, and
    /// the reading is a guess.
    static let settledEvidence: Float = 0.5
    /// How much closer to the document's own cells of the character read than to those of its look-alike a cell must
    /// be (`DocumentGlyphs.evidence`, in shares of what separates the two there) for a close call to be settled; as
    /// much closer to the look-alike's, and the reading is a guess. Chosen on the benchmark's seeds 1-4 (1,373 close
    /// calls with both characters elsewhere in the document): no cell read wrong came within 0.15 of it.
    static let documentEvidence: Float = 0.8
    /// The document's own cells of two look-alikes settle nothing where they differ by less than this share of what
    /// separates the templates: its noise is then as large as their difference (a zero-filled number's `0` read `O`
    /// came out 1.22 towards the name's `O`s, where the print's `0` and `O` differed by 0.024 against the templates'
    /// 0.109, and cancelled in the check digit with a `0` mended to `O`).
    static let documentApart: Float = 0.5
    /// Beyond a close call, as far as a mended field's (`mendedCloseCall`), a look-alike cell whose document evidence
    /// (`documentEvidence`'s measure) leans to the look-alike by this much is a guess. Seed 9's `F8I0K180I` came back
    /// `F8IOK18OI`: both 0s read O by 0.64 and 0.76 of the templates' separation, past the pair bound, cancelling in the
    /// check digit, the second more like the document's own 0s than its Os (-0.47). On seeds 1-4, 2 of 735 right cells
    /// in that band leaned so, and 4 of the 5 read wrong.
    static let documentLean: Float = 0.3
    /// Where the document shows only one of two look-alikes (`DocumentGlyphs.calibratedLead`): a cell whose template
    /// lead for it falls short of its cells' median lead by at most `documentLead` of the templates' separation is that
    /// character; one short by `documentLeadLost` or more is not; and only where its cells lead for it by at least
    /// `documentLeadShown` (a blurred print whose `O`s lead for O by -0.04 is no reference). Measured on the
    /// benchmark's seeds 1-4, on 1,649 one-sided close calls and on 2,092 two-sided ones with either side hidden: cells
    /// of the other character came no nearer than -0.39 under that floor, those of the character shown no lower than
    /// -1.04.
    static let documentLead: Float = 0.2
    static let documentLeadLost: Float = 1.3
    static let documentLeadShown: Float = 0.4

    /// How far the left side of a cell must bow out (`GlyphClassifier.bow`, in template samples) for it to be a round
    /// letter's (`roundLeft`) rather than a `D`'s straight stem. On the benchmark's seeds 1-4, no `D` of 21 close calls
    /// bowed more than 0.56, and 98 % of 478 `O`s 1.17 or more. A side that does not bow settles nothing: a worn `0`
    /// bowed as little as 0.12.
    static let roundBow: Float = 1.2
    static let roundLeft: Set<Character> = ["O", "Q", "0"]

    /// What the glyph says of a close call between the character read and a look-alike.
    enum Verdict {
        /// It shows the character read.
        case settled
        /// It shows the look-alike.
        case contradicted
        /// The document's own print leans to the look-alike (`documentLean`), short of showing it.
        case leaning
        /// It cannot tell.
        case open
    }

    static func isCloseCall(_ gap: Float, _ chosen: Character, _ other: Character) -> Bool {
        gap <= closeCall * GlyphClassifier.separation(chosen, other)
    }

    /// The best character the slot allows, then its look-alikes the slot allows that scored a close call below it
    /// (`isCloseCall`).
    static func alternatives(_ scores: [Float], slot: Slot) -> [Character] {
        let (top, score) = best(scores, slot: slot)
        let others = (lookAlikes[top] ?? []).filter { character in
            slot.allows(character) && isCloseCall(score - scores[GlyphClassifier.characters.firstIndex(of: character)!], top, character)
        }
        return [top]
            + others.sorted {
                scores[GlyphClassifier.characters.firstIndex(of: $0)!] > scores[GlyphClassifier.characters.firstIndex(of: $1)!]
            }
    }

    /// Every field of a format: its cells, and whether a check digit covers it.
    static func fields(_ format: MRZ.Format) -> [(name: String, positions: [Position], checked: Bool)] {
        func on(_ line: Int, _ range: ClosedRange<Int>) -> [Position] { range.map { Position(line: line, index: $0) } }
        switch format {
        case .td3, .mrvA, .td2, .mrvB:
            let width = format.geometry == .td3 ? 44 : 36
            var fields: [(String, [Position], Bool)] = [
                ("documentCode", on(0, 0...1), false), ("issuingState", on(0, 2...4), false), ("name", on(0, 5...(width - 1)), false),
                ("documentNumber", on(1, 0...9), true), ("nationality", on(1, 10...12), false), ("dateOfBirth", on(1, 13...19), true),
                ("sex", on(1, 20...20), false), ("dateOfExpiry", on(1, 21...27), true)
            ]
            switch format {
            case .td3: fields += [("personalIdNumber", on(1, 28...42), true), ("composite", on(1, 43...43), true)]
            case .td2: fields += [("optionalData", on(1, 28...34), true), ("composite", on(1, 35...35), true)]
            default: fields += [("optionalData", on(1, 28...(width - 1)), false)]
            }
            return fields
        case .td1:
            return [
                ("documentCode", on(0, 0...1), false), ("issuingState", on(0, 2...4), false),
                ("documentNumber", on(0, 5...14), true), ("optionalData", on(0, 15...29), true),
                ("dateOfBirth", on(1, 0...6), true), ("sex", on(1, 7...7), false), ("dateOfExpiry", on(1, 8...14), true),
                ("nationality", on(1, 15...17), false), ("optionalData2", on(1, 18...28), true),
                ("composite", on(1, 29...29), true), ("name", on(2, 0...29), false)
            ]
        }
    }

    /// The field a cell belongs to.
    static func field(at position: Position, format: MRZ.Format) -> String {
        fields(format).first { $0.positions.contains(position) }?.name ?? "layout"
    }

    /// Each field's weakest cell as read: its template score, and its lead over the next character the slot allows
    /// that the glyph does not rule out. A rival within `judgedWithin` that `judge` settles against (a `Q` where the
    /// cell has no tail, a `D` where its left side bows) is passed over: on the benchmark's seeds 1-4, 357 such rivals
    /// of cells read right were settled and none of a cell read wrong.
    static func fieldConfidence(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format,
        mended: Set<Position> = [],
        judge: (Position, Character, Character) -> Verdict = { _, _, _ in .open }
    ) -> [String: (confidence: MRZReading.Confidence, checked: Bool)] {
        let slots = slots(format)
        let index = Dictionary(uniqueKeysWithValues: GlyphClassifier.characters.enumerated().map { ($1, $0) })
        var result: [String: (confidence: MRZReading.Confidence, checked: Bool)] = [:]
        for field in fields(format) {
            var weakest = MRZReading.Confidence(score: 1, margin: 2)
            for position in field.positions {
                let cell = scores[position.line][position.index]
                let chosen = lines[position.line][position.index]
                let score = cell[index[chosen]!]
                let rivals = GlyphClassifier.characters.filter { $0 != chosen && slots[position.line][position.index].allows($0) }
                    .sorted { cell[index[$0]!] > cell[index[$1]!] }
                let runnerUp =
                    rivals.first { rival in
                        score - cell[index[rival]!] >= judgedWithin || mended.contains(position) || judge(position, chosen, rival) != .settled
                    }.map { cell[index[$0]!] } ?? -1
                // A mended cell scored below its runner-up by design (a close call): its check digit vouches for it.
                let margin = mended.contains(position) ? weakest.margin : score - runnerUp
                weakest = MRZReading.Confidence(score: min(weakest.score, score), margin: min(weakest.margin, margin))
            }
            result[field.name] = (weakest, field.checked)
        }
        return result
    }

    /// The widest lead a margin rule asks for (`stateMargin`): a rival farther behind is never put to `judge`.
    static let judgedWithin: Float = stateMargin

    /// Where the issuing state and the nationality are.
    static func statePositions(_ format: MRZ.Format) -> [[Position]] {
        let nationalityLine = 1, nationalityStart = format == .td1 ? 15 : 10
        return [
            (2...4).map { Position(line: 0, index: $0) },
            (nationalityStart...(nationalityStart + 2)).map { Position(line: nationalityLine, index: $0) }
        ]
    }

    /// Each state code field as read. No check digit covers these fields, so a code is never replaced by the
    /// closest known state (Interpol's `INP` is not India's `IND`): only where the code as read is not one ICAO
    /// 9303 lists, and a look-alike that scored a close call below in one cell makes it exactly one listed code
    /// (`UT0` for `UTO`), is that look-alike taken. Other unknown codes stay as read for the caller to flag.
    static func settleStates(_ lines: inout [[Character]], scores: [[[Float]]], format: MRZ.Format) {
        for positions in statePositions(format) {
            let read = String(positions.map { lines[$0.line][$0.index] })
            guard !ICAOStates.codes.contains(read) else { continue }
            var known: Set<String> = []
            for (slot, position) in positions.enumerated() {
                for other in alternatives(scores[position.line][position.index], slot: .letter).dropFirst() {
                    var code = Array(read)
                    code[slot] = other
                    if ICAOStates.codes.contains(String(code)) { known.insert(String(code)) }
                }
            }
            guard known.count == 1, let code = known.first else { continue }
            for (character, position) in zip(code, positions) { lines[position.line][position.index] = character }
        }
    }

    /// A lone letter between fillers in a letters-only line reads as a filler when the two scored alike.
    static func settleFillers(_ lines: inout [[Character]], scores: [[[Float]]], slots: [[Slot]], margin: Float = 0.12) {
        let filler = GlyphClassifier.characters.firstIndex(of: "<")!
        for line in lines.indices {
            for index in lines[line].indices.dropFirst().dropLast() where slots[line][index] == .letter {
                guard lines[line][index] != "<", lines[line][index - 1] == "<", lines[line][index + 1] == "<",
                    let chosen = GlyphClassifier.characters.firstIndex(of: lines[line][index])
                else { continue }
                if scores[line][index][filler] >= scores[line][index][chosen] - margin { lines[line][index] = "<" }
            }
        }
    }

    /// A name's weakest letter must lead the next letter by this much (a checked field's cells: the reader's
    /// `minimumMargin`). Chosen on the benchmark corpus's tune seeds: no right reading there led by less than 0.04.
    static let nameMargin: Float = 0.04

    /// The template score every character of a field no check digit covers must reach (a checked field's cells: the
    /// reader's `minimumCharacterScore`). On the benchmark's seeds 1-5, 7, 9 no right reading's unchecked field scored
    /// under 0.65 (3,137 readings); a filler at the end of a wavy line's names came back `W`, scoring 0.58.
    static let uncheckedScore: Float = 0.62

    /// Whether a name field's characters are laid out as ICAO 9303 has them: the primary identifier, two fillers, the
    /// secondary identifier's components one filler apart, then fillers to the end. Letters after three fillers in a
    /// row are no name's: fillers read as letters (a line waved along its length read `CHO<<<<FFFFFF<<<`, scoring
    /// 0.7 each, with every check digit valid, since none covers the name).
    static func isNameLaidOut(_ name: some Collection<Character>) -> Bool {
        var fillers = 0
        for character in name {
            if character == "<" {
                fillers += 1
            } else if fillers >= 3 {
                return false
            } else {
                fillers = 0
            }
        }
        return true
    }

    /// The letters ICAO 9303 begins a document code with: `P` a passport (TD3), `A`, `C` or `I` an identity card or
    /// other official travel document (TD1, TD2), `V` a visa (MRV-A on a passport's, MRV-B on a card's geometry).
    static func documentCodeInitials(_ geometry: MRZ.Format) -> Set<Character> {
        geometry == .td3 ? ["P", "V"] : ["A", "C", "I", "V"]
    }

    /// The first field (by name) that no check digit covers — a name, a state code, the document code, the sex —
    /// whose weakest character leads by less than `nameMargin`: nothing else stands behind its letters (a wide page's
    /// document code `PO` came back `PQ`, led by 0.03). A visa's optional data, the one such field of letters and digits
    /// both, is held to `stateMargin`: every digit has a letter rival there (a hollow `7` read `Z` by 0.08 on an MRV-B
    /// read from the page as it is, outline strokes against solid templates).
    static func uncheckedGuess(_ fields: [String: (confidence: MRZReading.Confidence, checked: Bool)]) -> String? {
        fields.sorted { $0.key < $1.key }.first {
            !$0.value.checked && $0.value.confidence.margin < ($0.key == "optionalData" ? stateMargin : nameMargin)
        }?.key
    }

    /// A cell of a checked field whose runner-up weighs the same modulo 10 (`MRZ.checkValue`) must lead it by this much.
    static let invisibleMargin: Float = 0.05

    /// The first cell of a field a check digit covers whose chosen character leads, by less than `invisibleMargin`,
    /// another character its slot allows that weighs the same in the check digit: swapping them passes the check.
    static func unvouched(_ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format, mended: Set<Position>) -> Position? {
        let slots = slots(format)
        let index = Dictionary(uniqueKeysWithValues: GlyphClassifier.characters.enumerated().map { ($1, $0) })
        for field in fields(format) where field.checked {
            for position in field.positions where !mended.contains(position) {
                let chosen = lines[position.line][position.index]
                let slot = slots[position.line][position.index]
                let cell = scores[position.line][position.index]
                let weight = MRZ.checkValue(chosen) % 10
                for other in GlyphClassifier.characters where other != chosen && slot.allows(other) && MRZ.checkValue(other) % 10 == weight {
                    if cell[index[chosen]!] - cell[index[other]!] < invisibleMargin { return position }
                }
            }
        }
        return nil
    }

    static let maximumChanges = 2
    /// A mend tries only look-alikes that scored a close call below the chosen character (`isCloseCall`): beyond
    /// it the glyph was read with confidence, and changing it to satisfy a check digit would be a guess. The mends
    /// of a reading may lose this much score in all.
    static let maximumLoss: Float = 0.15
    /// An unlisted state code is kept only when its weakest cell led every other letter by this much.
    static let stateMargin: Float = 0.1

    /// Parses the reading; when a check digit fails, tries the close second choices of that field's characters,
    /// best total score first, until it parses or no choice mends the field. Returns the parse or the last error.
    static func repair(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format,
        parse: ([[Character]]) throws(MRZError) -> MRZ
    ) -> Result<MRZ, MRZError> {
        let slots = slots(format)
        var lines = lines
        var mended: Set<String> = []
        while true {
            let error: MRZError
            do throws(MRZError) {
                return .success(try parse(lines))
            } catch let failure {
                error = failure
            }
            guard !mended.contains(error.field) else { return .failure(error) }
            mended.insert(error.field)
            let positions = positions(of: error.field, in: format)
            let choices = positions.map { alternatives(scores[$0.line][$0.index], slot: slots[$0.line][$0.index]) }
            let losses = zip(positions, choices).map { position, options in
                let cell = scores[position.line][position.index]
                let top = cell[GlyphClassifier.characters.firstIndex(of: options[0])!]
                return options.map { top - cell[GlyphClassifier.characters.firstIndex(of: $0)!] }
            }
            var fixed = false
            for picks in cheapestFirst(losses, limit: 5000).dropFirst() {
                // A check digit passes by chance one time in ten: a mend may change at most two characters, each a
                // close second choice, or it is no evidence at all.
                let changed = picks.indices.filter { picks[$0] > 0 }
                guard changed.count <= maximumChanges else { continue }
                if changed.reduce(Float(0), { $0 + losses[$1][picks[$1]] }) > maximumLoss { break }
                var candidate = lines
                for (slot, option) in picks.enumerated() where option > 0 {
                    candidate[positions[slot].line][positions[slot].index] = choices[slot][option]
                }
                do throws(MRZError) {
                    _ = try parse(candidate)
                } catch let next {
                    if next.field == error.field { continue }
                }
                lines = candidate
                fixed = true
                break
            }
            if !fixed { return .failure(error) }
        }
    }

    /// The first position of a document number or optional data (fields that take letters and digits) where the
    /// check digits cannot tell the reading from another the glyphs allow as well: a look-alike scored a close
    /// call below there and the reading with that swap parses too (6 and G always do), or look-alikes within
    /// `pairCloseCall` at two or three cells of the field swap together and still parse. In a field no check digit
    /// covers (a visa's optional data, a name, a state code) a close look-alike is enough. Swaps can cancel in a
    /// check digit (G and Q weigh the same modulo 10; `0000000000` read `O0OOOOOOO0` checks), so the number is a guess.
    /// `judge` says where the glyph itself tells a look-alike pair apart (`GlyphClassifier.evidence`, `DocumentGlyphs`):
    /// a close call it settles is not one; a cell it shows to be the look-alike is a guess whatever the check digits say.
    static func ambiguity(
        in mrz: MRZ, scores: [[[Float]]], mended: Set<Position> = [],
        parse: ([[Character]]) throws(MRZError) -> MRZ,
        judge: (Position, Character, Character) -> Verdict = { _, _, _ in .open }
    ) -> Position? {
        let slots = slots(mrz.format)
        let lines = mrz.lines.map { Array($0) }
        let index = Dictionary(uniqueKeysWithValues: GlyphClassifier.characters.enumerated().map { ($1, $0) })
        func parses(_ swaps: [(Position, Character)]) -> Bool {
            var swapped = lines
            for (position, character) in swaps { swapped[position.line][position.index] = character }
            return (try? parse(swapped)) != nil
        }
        for field in fields(mrz.format) {
            // Each cell's look-alikes that scored close to what was chosen, with how close.
            var close: [(position: Position, other: Character, gap: Float)] = []
            let mends = field.positions.filter { mended.contains($0) }.count
            let wasMended = mends > 0
            let states = field.name == "issuingState" || field.name == "nationality"
            for position in field.positions {
                let slot = slots[position.line][position.index]
                // Letters-only cells of a name too, where no check digit stands behind them (O, Q and D; a filler
                // and K), held to a closer call: their templates differ more than a document number's 0 and O do.
                let fraction: Float
                switch (slot, field.name) {
                case (.alphanumeric, _) where field.checked: fraction = wasMended ? mendedCloseCall : pairCloseCall
                case (.alphanumeric, _): fraction = 1
                case (_, "name"): fraction = nameCloseCall
                case (.letter, _) where states: fraction = 1
                default: continue
                }
                let chosen = lines[position.line][position.index]
                let cell = scores[position.line][position.index]
                for other in lookAlikes[chosen] ?? [] where slot.allows(other) {
                    let gap = cell[index[chosen]!] - cell[index[other]!]
                    let separation = GlyphClassifier.separation(chosen, other)
                    guard gap <= fraction * closeCall * separation else {
                        // Past the close call, a cell the document's own print shows, or leans, to be the look-alike.
                        if gap <= mendedCloseCall * closeCall * separation, [.contradicted, .leaning].contains(judge(position, chosen, other)) {
                            return position
                        }
                        continue
                    }
                    switch judge(position, chosen, other) {
                    // The glyph shows the look-alike: a mend that passes the check digits is chance.
                    case .contradicted: return position
                    // Only a character the templates preferred is settled by its glyph: a mended one (the other
                    // scored higher) stays a close call.
                    case .settled where gap >= 0: continue
                    default: break
                    }
                    // A state code is kept as read (flagged when unlisted): a look-alike matters only where it
                    // makes another listed code.
                    if states {
                        var code = Array(field.positions.map { lines[$0.line][$0.index] })
                        code[field.positions.firstIndex(of: position)!] = other
                        guard ICAOStates.codes.contains(String(code)) else { continue }
                    }
                    close.append((position, other, gap))
                }
                // A mend may also make up for a cell read as a character that is no look-alike of the one printed: its
                // runner-up, if close, is a swap to try too.
                if wasMended, field.checked, slot == .alphanumeric, !mended.contains(position),
                    let rival = GlyphClassifier.characters.filter({
                        $0 != chosen && !(lookAlikes[chosen]?.contains($0) ?? false) && slot.allows($0)
                    }).max(by: { cell[index[$0]!] < cell[index[$1]!] }),
                    cell[index[chosen]!] - cell[index[rival]!] < mendedRival
                {
                    close.append((position, rival, cell[index[chosen]!] - cell[index[rival]!]))
                }
            }
            // Where no check digit covers the field (a name, a state code, a visa's optional data), a close
            // look-alike is already a guess.
            if !field.checked, let first = close.first { return first.position }
            // Two mends may make up for two other cells read wrong: four swaps, more than are looked for below, so no other
            // cell of such a field may be a close call. One mend and what it may make up for are among the swaps below.
            if mends >= 2, let other = close.first(where: { !mended.contains($0.position) }) { return other.position }
            for (offset, first) in close.enumerated() {
                let single = first.gap <= closeCall * GlyphClassifier.separation(lines[first.position.line][first.position.index], first.other)
                if single, parses([(first.position, first.other)]) { return first.position }
                for (secondOffset, second) in close.enumerated().dropFirst(offset + 1) where second.position != first.position {
                    if parses([(first.position, first.other), (second.position, second.other)]) { return first.position }
                    // Three swaps cancel too (three zeros read `O` at weights 7, 1 and 7).
                    for third in close.dropFirst(secondOffset + 1) where third.position != first.position && third.position != second.position {
                        if parses([(first.position, first.other), (second.position, second.other), (third.position, third.other)]) {
                            return first.position
                        }
                    }
                }
            }
        }
        return nil
    }

    /// Combinations of choices (one index per position into its options, each list sorted by loss), least total
    /// loss first, at most `limit`: a best-first walk that raises one position's choice at a time, only at or after
    /// the last position raised, so that each combination is reached once.
    static func cheapestFirst(_ losses: [[Float]], limit: Int) -> [[Int]] {
        struct State: Comparable {
            var loss: Float
            var picks: [Int]
            var last: Int

            static func < (a: State, b: State) -> Bool { a.loss < b.loss }
            static func == (a: State, b: State) -> Bool { a.loss == b.loss && a.picks == b.picks }
        }
        var frontier = Heap([State(loss: 0, picks: [Int](repeating: 0, count: losses.count), last: 0)])
        var out: [[Int]] = []
        while out.count < limit, let state = frontier.popMin() {
            out.append(state.picks)
            for position in state.last..<losses.count where state.picks[position] + 1 < losses[position].count {
                var next = state
                next.loss += losses[position][state.picks[position] + 1] - losses[position][state.picks[position]]
                next.picks[position] += 1
                next.last = position
                frontier.insert(next)
            }
        }
        return out
    }
}
