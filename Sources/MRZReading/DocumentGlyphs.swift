/// The document's own print as the reference for a close call between two look-alikes: whatever font or capture
/// printed the MRZ printed all of it, so a cell that is `0` or `O` by a narrow template margin is compared with
/// cells of the same document that can only be one of the two (a `0` in a date, an `O` in a name or a state code),
/// or that were read clearly.
struct DocumentGlyphs {
    let classifier: GlyphClassifier
    let cells: [ArraySlice<MRZGrid.Cell>]
    let geometries: [GlyphClassifier.LineGeometry]
    let lines: [[Character]]
    let slots: [[MRZCharacterRules.Slot]]
    let scores: [[[Float]]]
    let mended: Set<MRZCharacterRules.Position>
    let policy: MRZReadingPolicy
    private var views: [MRZCharacterRules.Position: [[SIMD16<Float>]]] = [:]

    init(
        classifier: GlyphClassifier, cells: [ArraySlice<MRZGrid.Cell>], geometries: [GlyphClassifier.LineGeometry],
        lines: [[Character]], slots: [[MRZCharacterRules.Slot]], scores: [[[Float]]], mended: Set<MRZCharacterRules.Position>,
        policy: MRZReadingPolicy = .standard
    ) {
        self.policy = policy
        self.classifier = classifier
        self.cells = cells
        self.geometries = geometries
        self.lines = lines
        self.scores = scores
        self.slots = slots
        self.mended = mended
    }

    private mutating func views(at position: MRZCharacterRules.Position) -> [[SIMD16<Float>]] {
        if let known = views[position] { return known }
        let line = cells[position.line]
        let made = classifier.views(line[line.startIndex + position.index], geometry: geometries[position.line])
        views[position] = made
        return made
    }

    /// The cells that show `character` and cannot be `other`: their slot does not allow it, or the templates told
    /// them apart by more than twice a close call; none mended.
    private func exemplars(of character: Character, against other: Character, besides position: MRZCharacterRules.Position)
        -> [MRZCharacterRules.Position]
    {
        guard let mine = GlyphClassifier.characters.firstIndex(of: character),
            let theirs = GlyphClassifier.characters.firstIndex(of: other)
        else { return [] }
        var found: [MRZCharacterRules.Position] = []
        for (line, characters) in lines.enumerated() {
            for (index, read) in characters.enumerated() where read == character {
                let candidate = MRZCharacterRules.Position(line: line, index: index)
                guard candidate != position, !mended.contains(candidate) else { continue }
                let cell = scores[line][index]
                let gap = cell[mine] - cell[theirs]
                // A letter and a digit are told apart by the slot alone: a cell that took either (an `O` read clearly in
                // a document number) is no reference, since a font whose `0` is the templates' `O` reads it so.
                let vouched = !slots[line][index].allows(other)
                let mixed = character.isNumber != other.isNumber
                if vouched || (!mixed && gap > 2 * policy.closeCall * GlyphClassifier.separation(character, other)) {
                    found.append(candidate)
                }
            }
        }
        return found
    }

    /// How much closer the cell at `position` is to the document's `chosen` than to its `other`, as a share of what
    /// separates the two in this document (1 - the correlation of their closest pair): nil when the document shows
    /// no cell of one of them.
    mutating func evidence(at position: MRZCharacterRules.Position, for chosen: Character, against other: Character) -> Float? {
        let mine = exemplars(of: chosen, against: other, besides: position)
        let theirs = exemplars(of: other, against: chosen, besides: position)
        guard !mine.isEmpty, !theirs.isEmpty else { return nil }
        let cell = views(at: position)
        var toMine: Float = -1, toTheirs: Float = -1, between: Float = -1
        for exemplar in mine {
            toMine = max(toMine, GlyphClassifier.similarity(cell, GlyphClassifier.aligned(views(at: exemplar), to: chosen)))
        }
        for exemplar in theirs {
            let aligned = GlyphClassifier.aligned(views(at: exemplar), to: other)
            toTheirs = max(toTheirs, GlyphClassifier.similarity(cell, aligned))
            for own in mine { between = max(between, GlyphClassifier.similarity(views(at: own), aligned)) }
        }
        let apart = 1 - between
        guard apart > max(0.01, policy.documentApart * GlyphClassifier.separation(chosen, other)) else { return nil }
        return (toMine - toTheirs) / apart
    }

    /// Where the document shows cells of both look-alikes: where the cell's template lead of `chosen` over `other` falls
    /// between the median leads of the document's own cells of the two, from 1 at its `chosen`s' to -1 at its `other`s'.
    /// A blurred or another foundry's print moves both (its `0`s the templates read as `O` by 0.1, its `O`s by 0.2): the
    /// boundary between them is this print's, not the templates' 0. nil where the document shows one or neither, or
    /// where its cells of the two lead alike (less than `documentApart` of what separates the templates).
    func calibratedEvidence(at position: MRZCharacterRules.Position, for chosen: Character, against other: Character) -> Float? {
        guard let c = GlyphClassifier.characters.firstIndex(of: chosen), let o = GlyphClassifier.characters.firstIndex(of: other)
        else { return nil }
        func lead(_ cell: MRZCharacterRules.Position) -> Float { scores[cell.line][cell.index][c] - scores[cell.line][cell.index][o] }
        let mine = exemplars(of: chosen, against: other, besides: position).map(lead)
        let theirs = exemplars(of: other, against: chosen, besides: position).map(lead)
        guard let high = Self.median(mine), let low = Self.median(theirs),
            high - low > policy.documentApart * GlyphClassifier.separation(chosen, other)
        else { return nil }
        return (lead(position) - (high + low) / 2) / ((high - low) / 2)
    }

    static func median(_ values: [Float]) -> Float? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted(), middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Where the document shows cells of only one of the two look-alikes (`shown`: a `5` in a date, no `S` anywhere):
    /// how the cell's template lead of `shown` over the other compares with the median lead of the document's own
    /// cells of `shown`, in shares of what separates the two templates. A print that leans towards the look-alike
    /// (a hollow `5` a hair from `S`) leans so in every cell: about 0 for a cell printed like the document's `shown`,
    /// about -2 for the look-alike. nil where the document shows both or neither (`evidence`), or where its cells of
    /// `shown` lead for it by less than `documentLeadShown`.
    func calibratedLead(at position: MRZCharacterRules.Position, between chosen: Character, and other: Character)
        -> (shown: Character, lead: Float)?
    {
        let mine = exemplars(of: chosen, against: other, besides: position)
        let theirs = exemplars(of: other, against: chosen, besides: position)
        guard mine.isEmpty != theirs.isEmpty else { return nil }
        let (shown, unseen, references) = mine.isEmpty ? (other, chosen, theirs) : (chosen, other, mine)
        guard let s = GlyphClassifier.characters.firstIndex(of: shown), let u = GlyphClassifier.characters.firstIndex(of: unseen)
        else { return nil }
        func lead(_ cell: MRZCharacterRules.Position) -> Float { scores[cell.line][cell.index][s] - scores[cell.line][cell.index][u] }
        guard let median = Self.median(references.map(lead)) else { return nil }
        let separation = GlyphClassifier.separation(shown, unseen)
        // A print whose own cells of `shown` the templates read as the other (a blurred `O` nearer `0`) is no reference.
        guard median >= policy.documentLeadShown * separation else { return nil }
        return (shown, (lead(position) - median) / separation)
    }
}
