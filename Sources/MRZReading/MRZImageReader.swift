import Foundation
import ImageDecoding
import VerifyModel

/// Reads the MRZ of a passport page or an ID card from its image: finds the band in any position, tilt or
/// rotation (`MRZLocator`), reads each character cell against OCR-B templates (`GlyphClassifier`), and settles
/// look-alikes by each field's alphabet and check digit (`MRZCharacterRules`). Only a reading whose every check
/// digit holds is returned as read.
public struct MRZImageReader: Sendable {
    public enum Outcome: Sendable {
        /// The MRZ, its lines as printed, and how surely each field was read.
        case read(MRZReading)
        /// An MRZ band is on the page, but no reading of it passes the check digits: the error names the field.
        case unreadable(MRZError)
        case notFound
    }

    /// Pictures are searched for the band at this size; the band is then read from the full picture when the
    /// characters came out smaller than this many pixels per pitch.
    public var searchPixels = 3_000_000
    public var readablePitch = 16.0
    /// The mean template score (normalised correlation) of a reading's characters below which it is not taken.
    public var minimumConfidence: Float = 0.7
    /// A cell whose chosen character beat the runner-up its slot allows by less than this (and was not mended
    /// as a close call, `MRZCharacterRules.isCloseCall`) is a guess: the reading is unreadable, naming the field. Chosen on
    /// the benchmark corpus's tune split (scripts/bench-mrz): 0.02 returned no wrong reading there.
    public var minimumMargin: Float = 0.02
    /// The template score below which a character is no OCR-B character, whatever its margin: a cell the grid placed
    /// across two characters. On the benchmark's seeds 1-5, 7, 9, no right reading's weakest character scored under
    /// 0.63 (3,137 readings); a line whose first half was read half a cell off scored 0.15-0.51 there. A field no
    /// check digit covers is held to `MRZCharacterRules.uncheckedScore`.
    public var minimumCharacterScore: Float = 0.55
    /// The most characters a reading may have mended, all fields together.
    public var maximumRepairs = 2
    public var referenceDate: Date

    public init(referenceDate: Date = Date()) {
        self.referenceDate = referenceDate
    }

    /// Decodes `bytes` as the search image (reduced) and, when needed, at full size to read the band. A band that
    /// is not read at the size a large image gives is looked for again at half that size (characters far larger
    /// than the templates' grid, ink that runs together): the same page reads the same at any scale. A band that
    /// was found but not read is read again softened (a box blur of a template sample): hollow or thin print, and
    /// a screen's pixel grid, then look like the solid strokes the templates have. Only a failed read pays for these.
    /// (Doubling small images was tried: print under 6 px high stays unreadable.) `decoded`, the same bytes already
    /// decoded (the pipeline's decode stage), is read instead of decoding them again when it is at full size.
    public func read(_ bytes: [UInt8], decoder: ImageDecoder, decoded: GrayImage? = nil) throws(ImageDecodingError) -> Outcome {
        let search: GrayImage
        if let decoded, !decoded.isScaledDown {
            search = decoded
        } else {
            search = try decoder.decode(bytes, targetPixels: searchPixels)
        }
        var full: GrayImage?
        func fullResolution() throws(ImageDecodingError) -> GrayImage {
            if let full { return full }
            let decoded = try decoder.decode(bytes)
            full = decoded
            return decoded
        }
        var attempt = try attempt(search, fullResolution: fullResolution)
        if case .read = attempt.outcome { return attempt.outcome }
        // Nothing like a band: hollow (outline) or broken strokes fall apart into pieces no line is made of. The
        // page is searched again with its strokes closed over gaps of two pixels, then with its contrast stretched,
        // then with fainter ink (and, when nothing else reads, with its hollows filled: `solidPage`). A band found so
        // but not read is read the other ways below, as a band found at once is: hollow print at 150 dpi is found
        // only closed, and read only softened or filled.
        if attempt.pitch == nil {
            let closed = search.closedInk(radius: 1)
            var again = self.attempt(closed) { () -> GrayImage in closed }
            let closedGrids = again.grids
            // Faded print: ink less than a fifth darker than its paper is not ink to `InkComponents`, so thin strokes
            // break up (the benchmark's faint print: 6-7 of 20 pages found nothing).
            if case .notFound = again.outcome {
                let stretched = search.contrastStretched()
                again = self.attempt(stretched) { () -> GrayImage in stretched }
            }
            // Print under a bright reflection (a phone's photo of a screen or a laminate), or small and soft, is less
            // than a fifth darker than the paper around it, and the band breaks where it is. Ink is then told from paper
            // at a tenth (the benchmark's seeds 1-5, 7, 9: 52 more of 3,640 pages read, none wrong).
            if case .notFound = again.outcome {
                again = try self.attempt(search, threshold: .faint, fullResolution: fullResolution)
            }
            // Closing shuts the mouths of a hollow `G` and `C` as it joins their outlines: the band found so is read
            // from the page itself, softened (a box blur of a template sample) so that an outline stroke reads as the
            // solid one the templates have.
            if case .unreadable = again.outcome, let pitch = again.pitch, !closedGrids.isEmpty {
                let softened = search.boxBlurred(radius: max(1, Int((pitch / 16).rounded())))
                let open = self.attempt(softened, located: closedGrids) { () -> GrayImage in softened }
                if case .read = open.outcome { return open.outcome }
            }
            switch again.outcome {
            case .read: return again.outcome
            case .unreadable: attempt = again
            case .notFound: break
            }
        }
        var first = attempt.outcome
        if min(search.width, search.height) >= 1200 {
            let half = search.halved()
            let again = read(half) { () -> GrayImage in half }
            switch (again, first) {
            case (.read, _): return again
            case (.unreadable, .notFound): first = again
            default: break
            }
        }
        // A template sample is a sixteenth of the capitals' height, about a sixteenth of the pitch.
        guard let pitch = attempt.pitch, let band = attempt.band else { return solidPage(search, first: first) }
        let source = full ?? search
        let softened = source.boxBlurred(radius: max(1, Int((pitch / 16).rounded())))
        let again = read(softened) { () -> GrayImage in softened }
        switch (again, first) {
        case (.read, _): return again
        case (.unreadable, .notFound): first = again
        default: break
        }
        // Hollow (outline) or broken strokes: the band, its strokes closed over gaps of about a tenth of the pitch.
        let margin = Int(2 * pitch)
        let bandImage = source.cropped(minX: band.minX - margin, minY: band.minY - margin, maxX: band.maxX + margin, maxY: band.maxY + margin)
        let closed = bandImage.closedInk(radius: max(1, Int((pitch / 20).rounded())))
        let closedRead = read(closed) { () -> GrayImage in closed }
        switch (closedRead, first) {
        case (.read, _): return closedRead
        case (.unreadable, .notFound): first = closedRead
        default: break
        }
        // The band binarised with a window of two pitches, the hollows of outline print filled.
        let solid = bandImage.filledHollowStrokes(window: min(61, max(15, Int(2 * pitch))))
        let solidRead = read(solid) { () -> GrayImage in solid }
        switch (solidRead, first) {
        case (.read, _): return solidRead
        case (.unreadable, .notFound): first = solidRead
        default: break
        }
        return solidPage(search, first: first)
    }

    /// The side of the square a page's ink is told from its paper against (`InkComponents`): a fortieth of the page,
    /// 15 to 61 pixels.
    static func inkWindow(_ image: GrayImage) -> Int { min(61, max(15, max(image.width, image.height) / 40)) }

    /// The last try: the page binarised, the hollows of outline print filled (`filledHollowStrokes`). Hollow print's
    /// characters fall apart into nested rings that line up with nothing, or another text of the page is taken for the
    /// band; blurred print's grey edges go. What it reads is checked as every reading is; otherwise `first` stands
    /// unless it found nothing.
    private func solidPage(_ search: GrayImage, first: Outcome) -> Outcome {
        let solid = search.filledHollowStrokes(window: Self.inkWindow(search))
        let again = read(solid) { () -> GrayImage in solid }
        switch (again, first) {
        case (.read, _), (.unreadable, .notFound): return again
        default: return first
        }
    }

    /// The pixels a band's cells span, in the coordinates of the image that was read.
    private struct Band {
        var minX: Int, minY: Int, maxX: Int, maxY: Int

        init(_ grid: MRZGrid) {
            let centres = grid.lines.flatMap { $0.map(\.center) }
            minX = Int(centres.map(\.x).min() ?? 0)
            minY = Int(centres.map(\.y).min() ?? 0)
            maxX = Int((centres.map(\.x).max() ?? 0).rounded(.up))
            maxY = Int((centres.map(\.y).max() ?? 0).rounded(.up))
        }
    }

    /// `fullResolution` is asked for only when `image` is a reduced decode and its characters are too small.
    public func read<Failure: Error>(_ image: GrayImage, fullResolution: () throws(Failure) -> GrayImage) throws(Failure) -> Outcome {
        try attempt(image, fullResolution: fullResolution).outcome
    }

    /// The outcome, the pitch and extent of the band found in the image that was read (nil: none found), and the
    /// grids found.
    private typealias Attempt = (outcome: Outcome, pitch: Double?, band: Band?, grids: [MRZGrid])

    /// `located`: the grids another attempt found in an image of the same size (the page closed), read here from
    /// `image` rather than looked for in it.
    private func attempt<Failure: Error>(
        _ image: GrayImage, threshold: InkComponents.Threshold = .print, located: [MRZGrid]? = nil,
        fullResolution: () throws(Failure) -> GrayImage
    ) throws(Failure) -> Attempt {
        let window = Self.inkWindow(image)
        let grids = located ?? MRZLocator.locate(InkComponents.find(in: image, window: window, threshold: threshold))
        guard !grids.isEmpty else { return (.notFound, nil, nil, []) }
        var source = image
        var scale = 1.0
        let pitch = grids[0].lines[0].map { ($0.pitch.x * $0.pitch.x + $0.pitch.y * $0.pitch.y).squareRoot() }
        if image.isScaledDown, MRZLocator.median(pitch) < readablePitch {
            source = try fullResolution()
            scale = Double(source.width) / Double(image.width)
        }
        let classifier = GlyphClassifier(image: source)
        // Every candidate is read (the page as it is and upside down, each layout that fits): the surest reading that
        // parses wins. A reading whose characters do not look like OCR-B is no evidence, whatever its check digits.
        var read: MRZReading?
        var best: Unread?
        for grid in grids.prefix(6) {
            let scaled = scale == 1 ? grid : grid.scaled(by: scale)
            switch reading(scaled, classifier: classifier) {
            case .success(let reading) where reading.meanScore >= minimumConfidence:
                if reading.meanScore > read?.meanScore ?? 0 { read = reading }
            case .success(let reading):
                if reading.meanScore > best?.confidence ?? 0 {
                    best = Unread(
                        confidence: reading.meanScore,
                        error: MRZError(field: "layout", message: "MRZ characters too faint or blurred to read"))
                }
            case .failure(let failure):
                if failure.confidence > best?.confidence ?? 0 { best = failure }
            }
        }
        let sourcePitch = MRZLocator.median(pitch) * scale
        let band = Band(scale == 1 ? grids[0] : grids[0].scaled(by: scale))
        if let read { return (.read(read), sourcePitch, band, grids) }
        // A grid whose characters mostly look like OCR-B is an MRZ that could not be read; anything less is not one.
        if let best, best.confidence >= minimumConfidence { return (.unreadable(best.error), sourcePitch, band, grids) }
        return (.notFound, sourcePitch, band, grids)
    }

    struct Unread: Error {
        var confidence: Float
        var error: MRZError
    }

    func reading(_ grid: MRZGrid, classifier: GlyphClassifier) -> Result<MRZReading, Unread> {
        var scores: [[[Float]]] = []
        let count = grid.lines[0].count - 2
        var geometries: [(geometry: GlyphClassifier.LineGeometry, fit: Float)] = []
        for line in grid.lines {
            guard let geometry = classifier.geometry(of: Array(line.dropFirst().dropLast())) else {
                return .failure(Unread(confidence: 0, error: MRZError(field: "layout", message: "MRZ line without legible capitals")))
            }
            geometries.append(geometry)
        }
        // One font size prints the whole MRZ: a line that fits the templates clearly worse than the best one (its
        // capitals measured among a neighbour's, or in a shadow) is measured again with the best line's size.
        let surest = geometries.max { $0.fit < $1.fit }!
        for index in geometries.indices where geometries[index].fit < surest.fit - 0.1 {
            let start = GlyphClassifier.LineGeometry(
                unit: surest.geometry.unit, offset: geometries[index].geometry.offset,
                slant: surest.geometry.slant, aspect: surest.geometry.aspect)
            let again = classifier.refined(
                Array(grid.lines[index].dropFirst().dropLast()), around: start, factors: [1],
                shifts: stride(from: -4.0, through: 4.0, by: 0.5).map { $0 })
            if again.fit > geometries[index].fit { geometries[index] = again }
        }
        var windows: [ArraySlice<MRZGrid.Cell>] = []
        for (line, geometry) in zip(grid.lines, geometries.map(\.geometry)) {
            let cells = line.map { classifier.scores($0, geometry: geometry) }
            // The window of the format's length that reads best: the grid may be a cell off at either end.
            let best = (0...2).max { a, b in
                cells[a..<(a + count)].reduce(0) { $0 + ($1.max() ?? 0) } < cells[b..<(b + count)].reduce(0) { $0 + ($1.max() ?? 0) }
            }!
            scores.append(Array(cells[best..<(best + count)]))
            windows.append(line[best..<(best + count)])
        }
        // A visa shares a passport's geometry; its document code `V` (first line, all letters in both) tells it,
        // and its second line's optional data is read as such, not as a personal number and check digits.
        let firstCode = MRZCharacterRules.best(scores[0][0], slot: .capital)
        // A document code starts with a letter: a first cell that looks more like a filler is a line read a cell
        // off, whose names (no check digit) would all be shifted.
        if scores[0][0][GlyphClassifier.characters.firstIndex(of: "<")!] > firstCode.score {
            return .failure(
                Unread(
                    confidence: 0,
                    error: MRZError(
                        field: "documentCode", message: "MRZ documentCode: the first character reads as a filler (the line is read a cell off)")))
        }
        let format: MRZ.Format =
            switch (grid.format, firstCode.character) {
            case (.td3, "V"): .mrvA
            case (.td2, "V"): .mrvB
            default: grid.format
            }
        let slots = MRZCharacterRules.slots(format)
        var lines: [[Character]] = []
        var total: Float = 0
        for (line, lineScores) in scores.enumerated() {
            lines.append(
                lineScores.enumerated().map { index, cell in
                    let best = MRZCharacterRules.best(cell, slot: slots[line][index])
                    total += best.score
                    return best.character
                })
        }
        MRZCharacterRules.settleFillers(&lines, scores: scores, slots: slots)
        let read = lines
        MRZCharacterRules.settleStates(&lines, scores: scores, format: format)
        let confidence = total / Float(lines.reduce(0) { $0 + $1.count })
        let referenceDate = referenceDate
        let parse = { (lines: [[Character]]) throws(MRZError) -> MRZ in
            try MRZ(parsing: lines.map { String($0) }.joined(separator: "\n"), referenceDate: referenceDate)
        }
        func refuse(_ field: String, _ message: String) -> Result<MRZReading, Unread> {
            .failure(Unread(confidence: confidence, error: MRZError(field: field, message: "MRZ \(field): \(message)")))
        }
        func refuse(at position: MRZCharacterRules.Position, _ reason: String) -> Result<MRZReading, Unread> {
            refuse(
                MRZCharacterRules.field(at: position, format: format),
                "line \(position.line + 1), position \(position.index + 1) \(reason)")
        }
        // No check digit covers the document code: a first letter ICAO 9303 does not allow for the format is a cell
        // misread (a bowed line's first `I` read `T`, `P` read `D`), not a new kind of document.
        if !MRZCharacterRules.documentCodeInitials(grid.format).contains(lines[0][0]) {
            return refuse("documentCode", "the first character is not one ICAO 9303 allows for this format")
        }
        let name = MRZCharacterRules.fields(format).first { $0.name == "name" }!.positions
        if !MRZCharacterRules.isNameLaidOut(name.map { lines[$0.line][$0.index] }) {
            return refuse("name", "letters follow the fillers that end the name")
        }
        switch MRZCharacterRules.repair(lines, scores: scores, format: format, parse: parse) {
        case .success(let mrz):
            let final = mrz.lines.map { Array($0) }
            let changed = zip(read.indices, read).flatMap { line, characters in
                characters.indices.filter { characters[$0] != final[line][$0] }.map { MRZCharacterRules.Position(line: line, index: $0) }
            }
            let mended = Set(changed)
            var document = DocumentGlyphs(
                classifier: classifier, cells: windows, geometries: geometries.map(\.geometry), lines: final, slots: slots,
                scores: scores, mended: mended)
            // A close call between look-alikes is settled by a stroke only one of them has (a `Q`'s tail: paper for an
            // `O` read, ink for a `Q`), by at least half the cell's own contrast; width is no such stroke (measured on
            // every pair, held-apart pages came out wrong: `12S0XZW08` read `12SOXZWO8`). Then by the shape of the left
            // side (a `D`'s stem), then by the document's own cells of the two (a `0` in a date, an `O` in a name), which
            // show the width of this print's characters.
            func judge(_ position: MRZCharacterRules.Position, _ chosen: Character, _ other: Character) -> MRZCharacterRules.Verdict {
                let cell = windows[position.line][windows[position.line].startIndex + position.index]
                let strokes = classifier.evidence(cell, geometry: geometries[position.line].geometry, for: chosen, against: other)
                if let strokes, strokes >= MRZCharacterRules.settledEvidence { return .settled }
                if let strokes, strokes <= -MRZCharacterRules.settledEvidence { return .contradicted }
                // A `D`'s left side is a straight stem, an `O`'s round: a left side that bows out is not a `D`'s.
                if chosen == "D" || other == "D", let bow = classifier.bow(cell, geometry: geometries[position.line].geometry),
                    bow >= MRZCharacterRules.roundBow
                {
                    if other == "D", MRZCharacterRules.roundLeft.contains(chosen) { return .settled }
                    if chosen == "D", MRZCharacterRules.roundLeft.contains(other) { return .contradicted }
                }
                if let shown = document.evidence(at: position, for: chosen, against: other) {
                    if shown >= MRZCharacterRules.documentEvidence { return .settled }
                    if shown <= -MRZCharacterRules.documentEvidence { return .contradicted }
                    return shown <= -MRZCharacterRules.documentLean ? .leaning : .open
                }
                // The document shows only one of the two: a cell that leads like its cells of that one is that one; one
                // far behind them is not. Never settled for the one the document does not show.
                guard let (shown, lead) = document.calibratedLead(at: position, between: chosen, and: other) else { return .open }
                if lead >= -MRZCharacterRules.documentLead { return shown == chosen ? .settled : .contradicted }
                return shown == chosen && lead <= -MRZCharacterRules.documentLeadLost ? .contradicted : .open
            }
            if let position = MRZCharacterRules.ambiguity(in: mrz, scores: scores, mended: mended, parse: parse, judge: judge) {
                return refuse(at: position, "reads as either of two look-alikes")
            }
            let fields = MRZCharacterRules.fieldConfidence(final, scores: scores, format: format, mended: mended, judge: judge)
            // A cell that looks like no character: the grid is off there, and the names beside it, which no check digit
            // covers, may be read off as well.
            if let stray = fields.sorted(by: { $0.key < $1.key }).first(where: {
                $0.value.confidence.score < ($0.value.checked ? minimumCharacterScore : MRZCharacterRules.uncheckedScore)
            }) {
                return refuse(stray.key, "a character does not look like an OCR-B character")
            }
            // A cell that was a toss-up is a guess, not a reading: where no check digit stands behind it (names, state
            // codes), and where one does too, since swaps can cancel in a check digit. A mend has its own bound.
            if let guess = fields.sorted(by: { $0.key < $1.key }).first(where: { $0.value.confidence.margin < minimumMargin }) {
                return refuse(guess.key, "a character cannot be told from another with confidence")
            }
            if let field = MRZCharacterRules.uncheckedGuess(fields) {
                return refuse(field, "a letter cannot be told from another with confidence")
            }
            // A character whose runner-up weighs the same in the check digit (G and Q, O and E and Y...) is not vouched
            // for by it: it needs a clear lead of its own.
            if let position = MRZCharacterRules.unvouched(final, scores: scores, format: format, mended: mended) {
                return refuse(at: position, "reads as another character its check digit cannot tell from it")
            }
            // An unlisted state code is kept as read only when it was read clearly: one read with a close call is
            // more likely a listed code misread (`UYO` for `UTO`) than a new one.
            if let unclear = mrz.stateCodes.first(where: {
                !ICAOStates.codes.contains($0.code)
                    && (fields[$0.field]?.confidence.margin ?? 0) < MRZCharacterRules.stateMargin
            }) {
                return refuse(unclear.field, "an unlisted code read with a close call")
            }
            if changed.count > maximumRepairs {
                return .failure(
                    Unread(
                        confidence: confidence,
                        error: MRZError(
                            field: MRZCharacterRules.field(at: changed[0], format: format),
                            message: "MRZ: \(changed.count) characters would have to be mended to pass the check digits")))
            }
            var repairs = changed.map { MRZCharacterRules.field(at: $0, format: format) }
            repairs = Dictionary(grouping: repairs, by: { $0 }).map { "\($0.key): \($0.value.count) look-alike(s) changed" }.sorted()
            let unknown = mrz.stateCodes.filter { !ICAOStates.codes.contains($0.code) }.map(\.field)
            return .success(
                MRZReading(
                    mrz: mrz, confidence: fields.mapValues(\.confidence), repairs: repairs,
                    unknownStates: unknown, meanScore: confidence))
        case .failure(let error):
            return .failure(Unread(confidence: confidence, error: error))
        }
    }
}

/// An MRZ read from an image, and what a caller needs to route it: how surely each field was read (its weakest
/// character's template score and margin over the runner-up), which characters were changed to satisfy check
/// digits, and which state codes are not ones ICAO 9303 lists (kept as read).
public struct MRZReading: Sendable {
    public typealias Confidence = MRZ.FieldConfidence

    public var mrz: MRZ
    /// By field name (`documentNumber`, `name`, `issuingState`...).
    public var confidence: [String: Confidence]
    /// "documentNumber: 1 look-alike(s) changed"; at most `MRZCharacterRules.maximumChanges` per field.
    public var repairs: [String]
    public var unknownStates: [String]
    /// The mean template score of every character.
    public var meanScore: Float
}
