/// Settles a close call between the character read in a cell and a look-alike (or a runner-up) by what the glyph
/// shows, in the order `LookAlike.Evidence` lists: a stroke only one of them has (a `Q`'s tail: paper for an `O` read,
/// ink for a `Q`), by at least `settledEvidence` of the cell's own contrast; then the left side's shape (a `D`'s stem);
/// then the document's own cells of the two (a `0` in a date, an `O` in a name), which show this print's characters.
/// Width is no such stroke: measured on every pair, held-apart pages came out wrong (`12S0XZW08` read `12SOXZWO8`).
final class CloseCallJudge {
    typealias Position = MRZCharacterRules.Position

    private let classifier: GlyphClassifier
    private let cells: [ArraySlice<MRZGrid.Cell>]
    private let geometries: [GlyphClassifier.LineGeometry]
    private let policy: MRZReadingPolicy
    /// Mutable: it keeps the views of the cells it has compared.
    private var document: DocumentGlyphs

    init(document: DocumentGlyphs, policy: MRZReadingPolicy) {
        self.classifier = document.classifier
        self.cells = document.cells
        self.geometries = document.geometries
        self.policy = policy
        self.document = document
    }

    func callAsFunction(_ position: Position, _ chosen: Character, _ other: Character) -> MRZCharacterRules.Verdict {
        let cell = cells[position.line][cells[position.line].startIndex + position.index]
        let geometry = geometries[position.line]
        if let verdict = strokes(cell, geometry, chosen, other) ?? leftSide(cell, geometry, chosen, other) { return verdict }
        if let shown = documentEvidence(at: position, for: chosen, against: other) {
            if shown >= policy.documentEvidence { return .settled }
            if shown <= -policy.documentEvidence { return .contradicted }
            return shown <= -policy.documentLean ? .leaning : .open
        }
        // The document shows only one of the two: a cell that leads like its cells of that one is that one; one far
        // behind them is not, whichever of the two was read (a cell read `O` that is nothing like the document's `D`s
        // is settled for the `O`; one read `D` so is contradicted).
        guard let (shown, lead) = document.calibratedLead(at: position, between: chosen, and: other) else { return .open }
        if lead >= -policy.documentLead { return shown == chosen ? .settled : .contradicted }
        if shown == chosen { return lead <= -policy.documentLeadLost ? .contradicted : .open }
        return lead <= -policy.documentLeadUnlike ? .settled : .open
    }

    /// The document's two measures of a cell against its own cells of the two, averaged: how like its views are to
    /// theirs (`DocumentGlyphs.evidence`), and where its template lead falls between theirs (`calibratedEvidence`).
    private func documentEvidence(at position: Position, for chosen: Character, against other: Character) -> Float? {
        let views = document.evidence(at: position, for: chosen, against: other)
        let leads = document.calibratedEvidence(at: position, for: chosen, against: other)
        guard let views, let leads else { return views ?? leads }
        return (views + leads) / 2
    }

    private func strokes(
        _ cell: MRZGrid.Cell, _ geometry: GlyphClassifier.LineGeometry, _ chosen: Character, _ other: Character
    ) -> MRZCharacterRules.Verdict? {
        guard let strokes = classifier.evidence(cell, geometry: geometry, for: chosen, against: other) else { return nil }
        if strokes >= policy.settledEvidence { return .settled }
        if strokes <= -policy.settledEvidence { return .contradicted }
        return nil
    }

    /// A `D`'s left side is a straight stem, an `O`'s round: a left side that bows out is not a `D`'s.
    private func leftSide(
        _ cell: MRZGrid.Cell, _ geometry: GlyphClassifier.LineGeometry, _ chosen: Character, _ other: Character
    ) -> MRZCharacterRules.Verdict? {
        guard chosen == "D" || other == "D", let bow = classifier.bow(cell, geometry: geometry), bow >= policy.roundBow else { return nil }
        if other == "D", LookAlike.roundLeft.contains(chosen) { return .settled }
        if chosen == "D", LookAlike.roundLeft.contains(other) { return .contradicted }
        return nil
    }
}
