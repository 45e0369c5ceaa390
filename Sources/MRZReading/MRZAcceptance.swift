import VerifyModel

/// A grid's cells as read, before any mend: each cell's template scores, the characters its slot allows that scored
/// best (fillers settled), and the same with state codes settled (`MRZCharacterRules.settleStates`).
struct CellReading {
    var format: MRZ.Format
    var scores: [[[Float]]]
    var slots: [[MRZCharacterRules.Slot]]
    /// The characters as read, lone letters between fillers settled.
    var read: [[Character]]
    /// `read` with its state codes settled: what is parsed and mended.
    var lines: [[Character]]
    /// The mean template score of the characters read.
    var meanScore: Float
}

/// A reading whose check digits pass (mended or not), with what a rule needs to judge it.
struct MendedReading {
    var cells: CellReading
    var mrz: MRZ
    var stateCodes: [(field: MRZField, code: String)]
    /// The lines as parsed.
    var final: [[Character]]
    /// The cells a mend changed, in reading order.
    var changed: [MRZCharacterRules.Position]
    /// The cells read as the look-alike the glyph or the document's print shows before mending (`readAsShown`).
    var shown: Set<MRZCharacterRules.Position> = []
    var mended: Set<MRZCharacterRules.Position> { Set(changed) }
    /// Each field's weakest cell, and whether a check digit covers it.
    var fields: [MRZField: (confidence: MRZReading.Confidence, checked: Bool)]
    var judge: CloseCallJudge
    /// Parses a set of lines as the reading was parsed (the same reference date).
    var parse: ([[Character]]) throws(MRZError) -> MRZ
}

/// One acceptance rule: its code, and the field (with what is wrong there) it refuses a reading for, or nil.
struct AcceptanceRule<Subject> {
    var reason: MRZRefusal.Reason
    /// A refusal that is no evidence of an MRZ at all (the grid is no band's): it never outweighs another grid's
    /// refusal, and alone it is "no MRZ found".
    var isNoEvidence = false
    var check: @Sendable (Subject, MRZReadingPolicy) -> (field: MRZField, message: String)?
}

/// The order in which a reading is accepted or refused: the rules before the check digits are mended, then those
/// after, each a small function; the first that refuses names the reason. CLI.md lists the codes.
enum MRZAcceptance {
    typealias Position = MRZCharacterRules.Position

    /// `MRZ field: what`, as every refusal's message reads.
    static func say(_ field: MRZField, _ what: String) -> (field: MRZField, message: String) { (field, "MRZ \(field.rawValue): \(what)") }

    /// The same, at a cell: `line L, position P what`.
    static func say(_ position: Position, in format: MRZ.Format, _ what: String) -> (field: MRZField, message: String) {
        say(MRZLayout.of(format).field(at: position), "line \(position.line + 1), position \(position.index + 1) \(what)")
    }

    static let beforeMending: [AcceptanceRule<CellReading>] = [
        // A document code starts with a letter: a first cell that looks more like a filler is a line read a cell off,
        // whose names (no check digit) would all be shifted.
        AcceptanceRule(reason: .readOffByACell, isNoEvidence: true) { cells, _ in
            let first = cells.scores[0][0]
            let filler = first[GlyphClassifier.characters.firstIndex(of: "<")!]
            guard filler > MRZCharacterRules.best(first, slot: .capital).score else { return nil }
            return (.documentCode, "MRZ documentCode: the first character reads as a filler (the line is read a cell off)")
        },
        // No check digit covers the document code: a first letter ICAO 9303 does not allow for the format is a cell
        // misread (a bowed line's first `I` read `T`, `P` read `D`), not a new kind of document.
        AcceptanceRule(reason: .documentCodeNotAllowed) { cells, _ in
            guard !MRZCharacterRules.documentCodeInitials(cells.format.geometry).contains(cells.lines[0][0]) else { return nil }
            return say(.documentCode, "the first character is not one ICAO 9303 allows for this format")
        },
        AcceptanceRule(reason: .lettersAfterName) { cells, _ in
            let name = MRZLayout.of(cells.format)[.name]!.positions
            guard !MRZCharacterRules.isNameLaidOut(name.map { cells.lines[$0.line][$0.index] }) else { return nil }
            return say(.name, "letters follow the fillers that end the name")
        }
    ]

    static let afterMending: [AcceptanceRule<MendedReading>] = [
        // A letter read where the print shows a digit is a substitution, not a reading: no check digit covers these.
        // An unlisted state code with a letter its digit look-alike outscores is the alphabet's substitution too.
        AcceptanceRule(reason: .digitInLetters) { reading, policy in
            let shown = MRZCharacterRules.digitLead(
                reading.final, scores: reading.cells.scores, format: reading.cells.format, in: [.name, .issuingState, .nationality]
            ).flatMap { $0.lead >= policy.digitLead ? $0.position : nil }
            let unlisted = MRZCharacterRules.statePositions(reading.cells.format).lazy.compactMap {
                MRZCharacterRules.unlistedDigitCell($0, lines: reading.final, scores: reading.cells.scores)
            }.first
            return (shown ?? unlisted).map { say($0, in: reading.cells.format, "shows a digit where ICAO 9303 allows only letters") }
        },
        AcceptanceRule(reason: .lookAlike) { reading, policy in
            MRZCharacterRules.ambiguity(
                in: reading.mrz, scores: reading.cells.scores, mended: reading.mended, shown: reading.shown, policy: policy,
                parse: reading.parse,
                judge: reading.judge.callAsFunction
            ).map { say($0, in: reading.cells.format, "reads as either of two look-alikes") }
        },
        // A cell that looks like no character: the grid is off there, and the names beside it, which no check digit
        // covers, may be read off as well.
        AcceptanceRule(reason: .notOCRB) { reading, policy in
            reading.fields.sorted { $0.key < $1.key }.first {
                $0.value.confidence.score < ($0.value.checked ? policy.minimumCharacterScore : policy.uncheckedScore)
            }.map { say($0.key, "a character does not look like an OCR-B character") }
        },
        // A cell that was a toss-up is a guess, not a reading: where no check digit stands behind it (names, state
        // codes), and where one does too, since swaps can cancel in a check digit. A mend has its own bound.
        AcceptanceRule(reason: .closeCall) { reading, policy in
            reading.fields.sorted { $0.key < $1.key }.first { $0.value.confidence.margin < policy.minimumMargin }
                .map { say($0.key, "a character cannot be told from another with confidence") }
        },
        AcceptanceRule(reason: .uncheckedCloseCall) { reading, policy in
            if let position = MRZCharacterRules.documentCodeGuess(
                reading.final, scores: reading.cells.scores, format: reading.cells.format, policy: policy, judge: reading.judge.callAsFunction)
            {
                return say(position, in: reading.cells.format, "reads as a letter whose digit look-alike fits the glyph better")
            }
            return MRZCharacterRules.uncheckedGuess(reading.fields, policy: policy).map {
                say($0, "a letter cannot be told from another with confidence")
            }
        },
        // A character whose runner-up weighs the same in the check digit (G and Q, O and E and Y...) is not vouched for
        // by it: it needs a clear lead of its own.
        AcceptanceRule(reason: .checkDigitBlind) { reading, policy in
            MRZCharacterRules.unvouched(
                reading.final, scores: reading.cells.scores, format: reading.cells.format, mended: reading.mended, policy: policy
            )
            .map { say($0, in: reading.cells.format, "reads as another character its check digit cannot tell from it") }
        },
        // An unlisted state code is kept as read only when it was read clearly: one read with a close call is more
        // likely a listed code misread (`UYO` for `UTO`) than a new one.
        AcceptanceRule(reason: .unlistedStateUnclear) { reading, policy in
            reading.stateCodes.first {
                !ICAOStates.codes.contains($0.code) && (reading.fields[$0.field]?.confidence.margin ?? 0) < policy.stateMargin
            }.map { say($0.field, "an unlisted code read with a close call") }
        },
        AcceptanceRule(reason: .tooManyMends) { reading, policy in
            guard reading.changed.count > policy.maximumMends else { return nil }
            return (
                MRZLayout.of(reading.cells.format).field(at: reading.changed[0]),
                "MRZ: \(reading.changed.count) characters would have to be mended to pass the check digits"
            )
        }
    ]

    /// The rule of ICAO 9303 the print of an accepted reading breaks, as printed: a date no calendar has
    /// (`MRZ.misprints`), a state code printed in digits (`MRZCharacterRules.settleDigits`).
    static func misprint(_ reading: MendedReading) -> MRZRefusal? {
        if let date = reading.mrz.misprints.first { return MRZRefusal(parsing: date) }
        guard let state = reading.stateCodes.first(where: { $0.code.contains { $0.isNumber } }) else { return nil }
        let (field, message) = say(state.field, "printed in digits, which ICAO 9303 does not allow")
        return MRZRefusal(.digitInLetters, field: field, message: message)
    }

    /// The first rule of `rules` that refuses `subject`.
    static func first<Subject>(
        of rules: [AcceptanceRule<Subject>], refusing subject: Subject, policy: MRZReadingPolicy
    ) -> (refusal: MRZRefusal, isNoEvidence: Bool)? {
        for rule in rules {
            if let (field, message) = rule.check(subject, policy) {
                return (MRZRefusal(rule.reason, field: field, message: message), rule.isNoEvidence)
            }
        }
        return nil
    }
}
