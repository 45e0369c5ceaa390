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

    typealias Position = MRZLayout.Position

    /// Each character's place in a cell's scores (`GlyphClassifier.characters`), made once.
    static let characterIndex = Dictionary(uniqueKeysWithValues: GlyphClassifier.characters.enumerated().map { ($1, $0) })

    /// Each line's slots, from the format's layout: a check digit is a digit (or a filler where the layout allows one).
    static func slots(_ format: MRZ.Format) -> [[Slot]] {
        let layout = MRZLayout.of(format)
        var slots = [[Slot]](repeating: [Slot](repeating: .letter, count: layout.width), count: layout.lineCount)
        for field in layout.fields {
            for index in field.cells {
                switch field.alphabet {
                // A line read a cell off (`<UTOD…` for `I<UTO…`) has no document code: its first cell is never a filler.
                case .documentCode: slots[field.line][index] = index == field.cells.lowerBound ? .capital : .letter
                case .letters: slots[field.line][index] = .letter
                case .digits: slots[field.line][index] = .digit
                case .alphanumeric: slots[field.line][index] = .alphanumeric
                case .sex: slots[field.line][index] = .sex
                }
            }
            if let check = field.checkDigit { slots[field.line][check] = field.fillerCheckDigit ? .digitOrFiller : .digit }
        }
        return slots
    }

    /// The best character each slot allows, by score.
    static func best(_ scores: [Float], slot: Slot) -> (character: Character, score: Float) {
        var best: (Character, Float) = ("<", -2)
        for (index, character) in GlyphClassifier.characters.enumerated() where slot.allows(character) && scores[index] > best.1 {
            best = (character, scores[index])
        }
        return best
    }

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

    static func isCloseCall(_ gap: Float, _ chosen: Character, _ other: Character, policy: MRZReadingPolicy = .standard) -> Bool {
        gap <= policy.closeCall * GlyphClassifier.separation(chosen, other)
    }

    /// Whether `other` scored within a mended field's close call (`mendedCloseCall`) below `chosen` in `cell`: as far
    /// as the glyph's or the document's own evidence is asked about a look-alike.
    static func withinMendedCloseCall(_ cell: [Float], _ chosen: Character, _ other: Character, policy: MRZReadingPolicy) -> Bool {
        cell[characterIndex[chosen]!] - cell[characterIndex[other]!]
            <= policy.mendedCloseCall * policy.closeCall * GlyphClassifier.separation(chosen, other)
    }

    /// The best character the slot allows, then its look-alikes the slot allows that scored a close call below it
    /// (`isCloseCall`).
    static func alternatives(_ scores: [Float], slot: Slot, policy: MRZReadingPolicy = .standard) -> [Character] {
        let (top, score) = best(scores, slot: slot)
        let others = (LookAlike.of[top] ?? []).filter { character in
            slot.allows(character)
                && isCloseCall(score - scores[GlyphClassifier.characters.firstIndex(of: character)!], top, character, policy: policy)
        }
        return [top]
            + others.sorted {
                scores[GlyphClassifier.characters.firstIndex(of: $0)!] > scores[GlyphClassifier.characters.firstIndex(of: $1)!]
            }
    }

    /// Every field of a format, in reading order: its cells (its check digit's too), and whether a check digit covers it.
    static func fields(_ format: MRZ.Format) -> [(name: MRZField, positions: [Position], checked: Bool)] {
        MRZLayout.of(format).fields.map { ($0.name, $0.positions, $0.isChecked) }
    }

    /// The field a cell belongs to.
    static func field(at position: Position, format: MRZ.Format) -> MRZField {
        MRZLayout.of(format).field(at: position)
    }

    /// Each field's weakest cell as read: its template score, and its lead over the next character the slot allows
    /// that the glyph does not rule out. A rival within `judgedWithin` that `judge` settles against (a `Q` where the
    /// cell has no tail, a `D` where its left side bows) is passed over: on the benchmark's seeds 1-4, 357 such rivals
    /// of cells read right were settled and none of a cell read wrong.
    static func fieldConfidence(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format,
        mended: Set<Position> = [], policy: MRZReadingPolicy = .standard,
        judge: (Position, Character, Character) -> Verdict = { _, _, _ in .open }
    ) -> [MRZField: (confidence: MRZReading.Confidence, checked: Bool)] {
        let slots = slots(format)
        let index = characterIndex
        var result: [MRZField: (confidence: MRZReading.Confidence, checked: Bool)] = [:]
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
                        score - cell[index[rival]!] >= policy.judgedWithin || mended.contains(position) || judge(position, chosen, rival) != .settled
                    }.map { cell[index[$0]!] } ?? -1
                // A mended cell scored below its runner-up by design (a close call): its check digit vouches for it.
                let margin = mended.contains(position) ? weakest.margin : score - runnerUp
                weakest = MRZReading.Confidence(score: min(weakest.score, score), margin: min(weakest.margin, margin))
            }
            result[field.name] = (weakest, field.checked)
        }
        return result
    }

    /// The lines with each cell of a checked field read as the look-alike its glyph or the document's own print shows
    /// (`judge` contradicts the character the templates chose, a mended field's close call ahead of it), and those
    /// cells: a print whose 0s the templates read as O by 0.09 (its own Os by 0.2) is read as its 0s before the check
    /// digits are mended, so that they verify the reading rather than make it.
    static func readAsShown(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format, policy: MRZReadingPolicy = .standard,
        judge: (Position, Character, Character) -> Verdict
    ) -> (lines: [[Character]], shown: Set<Position>) {
        let slots = slots(format)
        var read = lines
        var shown: Set<Position> = []
        for field in fields(format) where field.checked {
            for position in field.positions where slots[position.line][position.index] == .alphanumeric {
                let chosen = lines[position.line][position.index]
                let cell = scores[position.line][position.index]
                let other = (LookAlike.of[chosen] ?? []).sorted().first { other in
                    withinMendedCloseCall(cell, chosen, other, policy: policy) && judge(position, chosen, other) == .contradicted
                }
                guard let other else { continue }
                read[position.line][position.index] = other
                shown.insert(position)
            }
        }
        return (read, shown)
    }

    /// Where the issuing state and the nationality are.
    static func statePositions(_ format: MRZ.Format) -> [[Position]] {
        let layout = MRZLayout.of(format)
        return [MRZField.issuingState, .nationality].compactMap { layout[$0]?.positions }
    }

    /// Each state code field as read. No check digit covers these fields, so a code is never replaced by the
    /// closest known state (Interpol's `INP` is not India's `IND`): only where the code as read is not one ICAO
    /// 9303 lists, and a look-alike that scored a close call below in one cell makes it exactly one listed code
    /// (`UT0` for `UTO`), is that look-alike taken. Other unknown codes stay as read for the caller to flag.
    static func settleStates(_ lines: inout [[Character]], scores: [[[Float]]], format: MRZ.Format, policy: MRZReadingPolicy = .standard) {
        for positions in statePositions(format) {
            let read = String(positions.map { lines[$0.line][$0.index] })
            guard !ICAOStates.codes.contains(read) else { continue }
            var known: Set<String> = []
            for (slot, position) in positions.enumerated() {
                for other in alternatives(scores[position.line][position.index], slot: .letter, policy: policy).dropFirst() {
                    var code = Array(read)
                    code[slot] = other
                    if ICAOStates.codes.contains(String(code)) { known.insert(String(code)) }
                }
            }
            guard known.count == 1, let code = known.first else { continue }
            for (character, position) in zip(code, positions) { lines[position.line][position.index] = character }
        }
    }

    /// A lone letter between fillers in a letters-only line reads as a filler when the two scored alike
    /// (`MRZReadingPolicy.fillerMargin`).
    static func settleFillers(_ lines: inout [[Character]], scores: [[[Float]]], slots: [[Slot]], policy: MRZReadingPolicy = .standard) {
        let margin = policy.fillerMargin
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
    static func uncheckedGuess(
        _ fields: [MRZField: (confidence: MRZReading.Confidence, checked: Bool)], policy: MRZReadingPolicy = .standard
    ) -> MRZField? {
        fields.sorted { $0.key < $1.key }.first {
            !$0.value.checked && $0.value.confidence.margin < ($0.key == .optionalData ? policy.stateMargin : policy.nameMargin)
        }?.key
    }

    /// The document code's second cell read as a letter that a digit outscores (`P2` read `PZ`, or a digit not read for
    /// want of a clear lead over another): issuers print a letter, a digit or a filler there and no check digit covers
    /// it, so the letters' alphabet cannot settle it.
    /// (Read as letters or digits alike, a phone's photo of a screen read `P0` for `PO` with a lead of 0.08, and leads
    /// of right `PO` readings over `0` went down to 0.06: the two are told only where the letter scored above.)
    /// So is a letter whose digit look-alike scored within a mended field's close call below it where the document's
    /// own print shows, or leans to, the digit (`judge`): a softened page's `I0` read `IO` by 0.03.
    static func documentCodeGuess(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format, policy: MRZReadingPolicy = .standard,
        judge: (Position, Character, Character) -> Verdict = { _, _, _ in .open }
    ) -> Position? {
        guard let code = MRZLayout.of(format)[.documentCode], code.cells.count > 1 else { return nil }
        let position = Position(line: code.line, index: code.cells.lowerBound + 1)
        let chosen = lines[position.line][position.index]
        let cell = scores[position.line][position.index]
        if digitOutscores(chosen, in: cell) { return position }
        let shown = (LookAlike.of[chosen] ?? []).sorted().first { other in
            other.isNumber && withinMendedCloseCall(cell, chosen, other, policy: policy)
                && [.contradicted, .leaning].contains(judge(position, chosen, other))
        }
        return shown == nil ? nil : position
    }

    /// Whether the cell's best digit scored above `chosen`, a letter or a filler read in it.
    static func digitOutscores(_ chosen: Character, in cell: [Float]) -> Bool {
        !chosen.isNumber && best(cell, slot: .digit).score > cell[characterIndex[chosen]!]
    }

    /// The first cell of a field a check digit covers whose chosen character leads, by less than `invisibleMargin`,
    /// another character its slot allows that weighs the same in the check digit: swapping them passes the check.
    static func unvouched(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format, mended: Set<Position>, policy: MRZReadingPolicy = .standard
    ) -> Position? {
        let slots = slots(format)
        let index = characterIndex
        for field in fields(format) where field.checked {
            for position in field.positions where !mended.contains(position) {
                let chosen = lines[position.line][position.index]
                let slot = slots[position.line][position.index]
                let cell = scores[position.line][position.index]
                let weight = MRZ.checkValue(chosen) % 10
                for other in GlyphClassifier.characters where other != chosen && slot.allows(other) && MRZ.checkValue(other) % 10 == weight {
                    if cell[index[chosen]!] - cell[index[other]!] < policy.invisibleMargin { return position }
                }
            }
        }
        return nil
    }

    /// The cell of a letters-only field among `fields` where a digit that is no look-alike of the letter read scored
    /// above it by the most, and by how much: a print that shows a digit there when the lead is `MRZReadingPolicy.digitLead`.
    /// Cells that hold a digit already are passed over.
    static func digitLead(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format, in fields: Set<MRZField>
    ) -> (position: Position, lead: Float)? {
        let slots = slots(format)
        var most: (position: Position, lead: Float)?
        for field in MRZLayout.of(format).fields where fields.contains(field.name) {
            for position in field.positions where [.letter, .capital].contains(slots[position.line][position.index]) {
                let chosen = lines[position.line][position.index]
                guard !chosen.isNumber, let (_, lead) = digitAbove(chosen, in: scores[position.line][position.index]) else { continue }
                if lead > most?.lead ?? -.infinity { most = (position, lead) }
            }
        }
        return most
    }

    /// The best digit that is no look-alike of `chosen`, and how far it scored above `chosen`.
    static func digitAbove(_ chosen: Character, in cell: [Float]) -> (digit: Character, lead: Float)? {
        let index = characterIndex
        let digits = GlyphClassifier.characters.filter { $0.isASCII && $0.isNumber && !(LookAlike.of[chosen]?.contains($0) ?? false) }
        guard let digit = digits.max(by: { cell[index[$0]!] < cell[index[$1]!] }) else { return nil }
        return (digit, cell[index[digit]!] - cell[index[chosen]!])
    }

    /// Digits where the print shows them in a field read as letters. The document code's second cell may be a digit
    /// as issuers print it: read so where one that is no look-alike of the letter shows (`digitLead`) and the best digit
    /// leads the next by `stateMargin`. A state code one of whose cells shows a digit is printed in digits, which ICAO 9303 does
    /// not allow: it is read so (and refused as misprinted) only where every cell's best digit beats every letter and
    /// leads the next digit by `stateMargin`; otherwise it stays as read, for `digitInLetters` to refuse.
    /// The cell's best digit where it leads the next digit by `stateMargin`: no check digit stands behind a digit read
    /// in a field of letters.
    static func clearDigit(_ cell: [Float], policy: MRZReadingPolicy) -> (character: Character, score: Float)? {
        let (digit, score) = best(cell, slot: .digit)
        let next = GlyphClassifier.characters.filter { $0.isNumber && $0 != digit }.map { cell[characterIndex[$0]!] }.max() ?? -1
        return score - next >= policy.stateMargin ? (digit, score) : nil
    }

    static func settleDigits(_ lines: inout [[Character]], scores: [[[Float]]], format: MRZ.Format, policy: MRZReadingPolicy = .standard) {
        let layout = MRZLayout.of(format)
        if let code = layout[.documentCode], code.cells.count > 1 {
            let position = Position(line: code.line, index: code.cells.lowerBound + 1)
            let cell = scores[position.line][position.index]
            let shown = digitAbove(lines[position.line][position.index], in: cell).map { $0.lead >= policy.digitLead } ?? false
            if shown, let digit = clearDigit(cell, policy: policy) { lines[position.line][position.index] = digit.character }
        }
        for positions in statePositions(format) {
            // A cell that shows a digit no letter looks like, or an unlisted code whose every letter its digit look-alike
            // outscores (`258` is `ZSB` by the letters' alphabet).
            let showsDigit = positions.contains { position in
                digitAbove(lines[position.line][position.index], in: scores[position.line][position.index]).map { $0.lead >= policy.digitLead }
                    ?? false
            }
            guard showsDigit || unlistedDigitCell(positions, lines: lines, scores: scores, every: true) != nil else { continue }
            let digits = positions.map { position -> Character? in
                let cell = scores[position.line][position.index]
                guard let digit = clearDigit(cell, policy: policy), digit.score > best(cell, slot: .letter).score else { return nil }
                return digit.character
            }
            guard digits.allSatisfy({ $0 != nil }) else { continue }
            for (digit, position) in zip(digits, positions) { lines[position.line][position.index] = digit! }
        }
    }

    /// In a state code ICAO 9303 does not list, the first cell (or, with `every`, the last, only where every cell is one)
    /// whose best digit scored above the letter read: no check digit covers the code, and a letter chosen over the digit
    /// the glyph looks more like is the alphabet's substitution, not a reading.
    static func unlistedDigitCell(_ positions: [Position], lines: [[Character]], scores: [[[Float]]], every: Bool = false) -> Position? {
        guard !ICAOStates.codes.contains(String(positions.map { lines[$0.line][$0.index] })) else { return nil }
        let cells = positions.filter { position in
            digitOutscores(lines[position.line][position.index], in: scores[position.line][position.index])
        }
        return every ? (cells.count == positions.count ? cells.last : nil) : cells.first
    }

    /// The most combinations of close second choices one field's mend tries (a bound on the search, not a threshold: the
    /// loss bound, `MRZReadingPolicy.maximumMendLoss`, ends it first on every page of the benchmark).
    static let mendsTried = 5000

    /// Parses the reading; when a check digit fails, tries the close second choices of that field's characters,
    /// best total score first, until it parses or no choice mends the field. Returns the parse or the last error.
    static func repair(
        _ lines: [[Character]], scores: [[[Float]]], format: MRZ.Format, policy: MRZReadingPolicy = .standard,
        parse: ([[Character]]) throws(MRZError) -> MRZ
    ) -> Result<MRZ, MRZError> {
        let slots = slots(format)
        let layout = MRZLayout.of(format)
        var lines = lines
        var mended: Set<MRZField> = []
        while true {
            let error: MRZError
            do throws(MRZError) {
                return .success(try parse(lines))
            } catch let failure {
                error = failure
            }
            guard !mended.contains(error.field) else { return .failure(error) }
            mended.insert(error.field)
            let positions = layout.cells(mending: error.field)
            let choices = positions.map { alternatives(scores[$0.line][$0.index], slot: slots[$0.line][$0.index], policy: policy) }
            let losses = zip(positions, choices).map { position, options in
                let cell = scores[position.line][position.index]
                let top = cell[GlyphClassifier.characters.firstIndex(of: options[0])!]
                return options.map { top - cell[GlyphClassifier.characters.firstIndex(of: $0)!] }
            }
            var fixed = false
            for picks in cheapestFirst(losses, limit: mendsTried).dropFirst() {
                // A check digit passes by chance one time in ten: a mend may change at most two characters, each a
                // close second choice, or it is no evidence at all.
                let changed = picks.indices.filter { picks[$0] > 0 }
                guard changed.count <= policy.maximumMendsPerField else { continue }
                if changed.reduce(Float(0), { $0 + losses[$1][picks[$1]] }) > policy.maximumMendLoss { break }
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
        in mrz: MRZ, scores: [[[Float]]], mended: Set<Position> = [], shown: Set<Position> = [], policy: MRZReadingPolicy = .standard,
        parse: ([[Character]]) throws(MRZError) -> MRZ,
        judge: (Position, Character, Character) -> Verdict = { _, _, _ in .open }
    ) -> Position? {
        let lines = mrz.lines.map { Array($0) }
        func parses(_ swaps: [(position: Position, other: Character, gap: Float)]) -> Bool {
            var swapped = lines
            for swap in swaps { swapped[swap.position.line][swap.position.index] = swap.other }
            return (try? parse(swapped)) != nil
        }
        for field in fields(mrz.format) {
            let close: [CloseCall]
            switch closeCalls(
                in: field, lines: lines, format: mrz.format, scores: scores, mended: mended, shown: shown, policy: policy, judge: judge)
            {
            case .guess(let position): return position
            case .calls(let calls): close = calls
            }
            // Where no check digit covers the field (a name, a state code, a visa's optional data), a close
            // look-alike is already a guess.
            if !field.checked, let first = close.first { return first.position }
            // Two mends may make up for two other cells read wrong: four swaps, more than are looked for below, so no other
            // cell of such a field may be a close call. One mend and what it may make up for are among the swaps below.
            if field.positions.filter({ mended.contains($0) }).count >= 2, let other = close.first(where: { !mended.contains($0.position) }) {
                return other.position
            }
            if let position = cancellingSwaps(close, lines: lines, policy: policy, parses: parses) { return position }
        }
        return nil
    }

    /// A look-alike (or, in a mended field, a close runner-up) that scored close to the character read, and how close.
    typealias CloseCall = (position: Position, other: Character, gap: Float)

    enum CloseCalls {
        /// A cell the glyph or the document's print shows to be the look-alike.
        case guess(Position)
        case calls([CloseCall])
    }

    /// Each cell's look-alikes that scored close to what was chosen, with how close; or the cell that is a guess.
    static func closeCalls(
        in field: (name: MRZField, positions: [Position], checked: Bool), lines: [[Character]], format: MRZ.Format,
        scores: [[[Float]]], mended: Set<Position>, shown: Set<Position> = [], policy: MRZReadingPolicy,
        judge: (Position, Character, Character) -> Verdict
    ) -> CloseCalls {
        let slots = slots(format)
        let index = characterIndex
        var close: [CloseCall] = []
        let wasMended = field.positions.contains { mended.contains($0) }
        let states = field.name == .issuingState || field.name == .nationality
        for position in field.positions {
            let slot = slots[position.line][position.index]
            // Letters-only cells of a name too, where no check digit stands behind them (O, Q and D; a filler
            // and K), held to a closer call: their templates differ more than a document number's 0 and O do.
            let fraction: Float
            switch (slot, field.name) {
            case (.alphanumeric, _) where field.checked: fraction = wasMended ? policy.mendedCloseCall : policy.pairCloseCall
            case (.alphanumeric, _): fraction = 1
            case (_, .name): fraction = policy.nameCloseCall
            case (.letter, _) where states: fraction = 1
            default: continue
            }
            let chosen = lines[position.line][position.index]
            let cell = scores[position.line][position.index]
            for other in LookAlike.of[chosen] ?? [] where slot.allows(other) {
                let gap = cell[index[chosen]!] - cell[index[other]!]
                let separation = GlyphClassifier.separation(chosen, other)
                guard gap <= fraction * policy.closeCall * separation else {
                    // Past the close call, a cell the document's own print shows, or leans, to be the look-alike.
                    if withinMendedCloseCall(cell, chosen, other, policy: policy), [.contradicted, .leaning].contains(judge(position, chosen, other))
                    {
                        return .guess(position)
                    }
                    continue
                }
                switch judge(position, chosen, other) {
                // The glyph shows the look-alike: a mend that passes the check digits is chance.
                case .contradicted: return .guess(position)
                // Only a character the templates preferred, or one read as the print shows it (`readAsShown`), is
                // settled by its glyph: a mended one (the other scored higher) stays a close call.
                case .settled where gap >= 0 || shown.contains(position): continue
                default: break
                }
                // A state code is kept as read (flagged when unlisted): a look-alike matters only where it
                // makes another listed code.
                if states, !ICAOStates.codes.contains(String(field.positions.map { $0 == position ? other : lines[$0.line][$0.index] })) {
                    continue
                }
                close.append((position, other, gap))
            }
            // A mend may also make up for a cell read as a character that is no look-alike of the one printed: its
            // runner-up, if close, is a swap to try too.
            if wasMended, field.checked, slot == .alphanumeric, !mended.contains(position),
                let rival = closeRival(of: chosen, in: cell, slot: slot, within: policy.mendedRival)
            {
                close.append((position, rival.character, rival.gap))
            }
        }
        return .calls(close)
    }

    /// The best character the slot allows that is neither `chosen` nor a look-alike of it, if it scored within `gap`.
    static func closeRival(of chosen: Character, in cell: [Float], slot: Slot, within gap: Float) -> (character: Character, gap: Float)? {
        let index = characterIndex
        guard
            let rival = GlyphClassifier.characters.filter({
                $0 != chosen && !(LookAlike.of[chosen]?.contains($0) ?? false) && slot.allows($0)
            }).max(by: { cell[index[$0]!] < cell[index[$1]!] }),
            cell[index[chosen]!] - cell[index[rival]!] < gap
        else { return nil }
        return (rival, cell[index[chosen]!] - cell[index[rival]!])
    }

    /// The first cell of a checked field whose close call, alone or swapped together with one or two others, still
    /// parses: the check digits cannot tell the reading from that one.
    static func cancellingSwaps(
        _ close: [CloseCall], lines: [[Character]], policy: MRZReadingPolicy, parses: ([CloseCall]) -> Bool
    ) -> Position? {
        for (offset, first) in close.enumerated() {
            let single = first.gap <= policy.closeCall * GlyphClassifier.separation(lines[first.position.line][first.position.index], first.other)
            if single, parses([first]) { return first.position }
            for (secondOffset, second) in close.enumerated().dropFirst(offset + 1) where second.position != first.position {
                if parses([first, second]) { return first.position }
                // Three swaps cancel too (three zeros read `O` at weights 7, 1 and 7).
                for third in close.dropFirst(secondOffset + 1) where third.position != first.position && third.position != second.position {
                    if parses([first, second, third]) { return first.position }
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
