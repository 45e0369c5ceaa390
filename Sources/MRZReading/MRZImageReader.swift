import Foundation
import ImageDecoding
import VerifyModel

/// Reads the MRZ of a passport page or an ID card from its image: finds the band in any position, tilt or
/// rotation (`MRZLocator`), reads each character cell against OCR-B templates (`GlyphClassifier`), settles
/// look-alikes by each field's alphabet and check digit (`MRZCharacterRules`), and accepts the reading only when no
/// rule of `MRZAcceptance` refuses it. A page that does not read is tried again the ways the ladder lists
/// (`ReadingLadder.swift`). Every threshold is the policy's (`MRZReadingPolicy`).
public struct MRZImageReader: Sendable {
    public enum Outcome: Sendable {
        /// The MRZ, its lines as printed, how surely each field was read, and the pass that read it.
        case read(MRZReading)
        /// An MRZ band is on the page, but no reading of it is accepted: the refusal names the rule and the field.
        case unreadable(MRZRefusal)
        /// The band reads with confidence and every check digit holds, but the print itself breaks a rule of ICAO 9303
        /// (a birth date no calendar has): refused as `unreadable` is, with what was read, for `scan` to show.
        case misprinted(MRZReading, MRZRefusal)
        case notFound
    }

    public var policy: MRZReadingPolicy
    public var referenceDate: Date

    public init(referenceDate: Date = Date(), policy: MRZReadingPolicy = .standard) {
        self.referenceDate = referenceDate
        self.policy = policy
    }

    /// Decodes `bytes` as the search image (reduced to `policy.searchPixels`) and, when needed, at full size to read the
    /// band, then climbs the ladder (`MRZImageReader.ladder`) until a pass reads. `decoded`, the same bytes already
    /// decoded (the pipeline's decode stage), is read instead of decoding them again when it is at full size.
    public func read(_ bytes: [UInt8], decoder: ImageDecoder, decoded: GrayImage? = nil) throws(ImageDecodingError) -> Outcome {
        let search: GrayImage
        if let decoded, !decoded.isScaledDown {
            search = decoded
        } else {
            search = try decoder.decode(bytes, targetPixels: policy.searchPixels)
        }
        var state = LadderState(search: search, full: nil) { () throws(ImageDecodingError) in try decoder.decode(bytes) }
        for step in Self.ladder where step.runs(state) {
            guard let attempt = try step.attempt(self, &state) else { continue }
            switch attempt.outcome {
            case .read(var reading):
                reading.pass = step.pass
                return .read(reading)
            // Another pass reads the same print.
            case .misprinted(var reading, var refusal):
                reading.pass = step.pass
                refusal.pass = step.pass
                return .misprinted(reading, refusal)
            case .unreadable, .notFound:
                break
            }
            state.take(attempt, from: step)
        }
        return state.outcome
    }

    /// One attempt at `image` alone, no ladder. `fullResolution` is asked for only when `image` is a reduced decode and
    /// its characters are too small.
    public func read<Failure: Error>(_ image: GrayImage, fullResolution: () throws(Failure) -> GrayImage) throws(Failure) -> Outcome {
        try attempt(image, fullResolution: fullResolution).outcome
    }

    /// The side of the square a page's ink is told from its paper against (`InkComponents`): a fortieth of the page,
    /// 15 to 61 pixels.
    static func inkWindow(_ image: GrayImage) -> Int { min(61, max(15, max(image.width, image.height) / 40)) }

    /// The pixels a band's cells span, in the coordinates of the image that was read.
    struct Band {
        var minX: Int, minY: Int, maxX: Int, maxY: Int

        init(_ grid: MRZGrid) {
            let centres = grid.lines.flatMap { $0.map(\.center) }
            minX = Int(centres.map(\.x).min() ?? 0)
            minY = Int(centres.map(\.y).min() ?? 0)
            maxX = Int((centres.map(\.x).max() ?? 0).rounded(.up))
            maxY = Int((centres.map(\.y).max() ?? 0).rounded(.up))
        }
    }

    /// The outcome, the pitch and extent of the band found in the image that was read (nil: none found), and the
    /// grids found.
    typealias Attempt = (outcome: Outcome, pitch: Double?, band: Band?, grids: [MRZGrid])

    /// A refusal and how much the grid it refuses looked like OCR-B (its mean template score; 0 for no evidence).
    struct Unread: Error {
        var confidence: Float
        var refusal: MRZRefusal
    }

    /// An attempt at an image derived from the page (closed, softened, halved...): read as it is, never at another size.
    func attempt(_ image: GrayImage, threshold: InkComponents.Threshold = .print, located: [MRZGrid]? = nil) -> Attempt {
        attempt(image, threshold: threshold, located: located) { () -> GrayImage in image }
    }

    /// `located`: the grids another attempt found in an image of the same size (the page closed), read here from
    /// `image` rather than looked for in it.
    func attempt<Failure: Error>(
        _ image: GrayImage, threshold: InkComponents.Threshold = .print, located: [MRZGrid]? = nil,
        fullResolution: () throws(Failure) -> GrayImage
    ) throws(Failure) -> Attempt {
        let grids = located ?? MRZLocator.locate(InkComponents.find(in: image, window: Self.inkWindow(image), threshold: threshold))
        guard !grids.isEmpty else { return (.notFound, nil, nil, []) }
        var source = image
        var scale = 1.0
        let pitch = grids[0].lines[0].map { ($0.pitch.x * $0.pitch.x + $0.pitch.y * $0.pitch.y).squareRoot() }
        if image.isScaledDown, MRZLocator.median(pitch) < policy.readablePitchPixels {
            source = try fullResolution()
            scale = Double(source.width) / Double(image.width)
        }
        let (read, best) = surest(
            grids.prefix(Self.gridsRead).map { scale == 1 ? $0 : $0.scaled(by: scale) }, classifier: GlyphClassifier(image: source))
        let sourcePitch = MRZLocator.median(pitch) * scale
        let band = Band(scale == 1 ? grids[0] : grids[0].scaled(by: scale))
        if let read { return (read.misprint.map { .misprinted(read, $0) } ?? .read(read), sourcePitch, band, grids) }
        // A grid whose characters mostly look like OCR-B is an MRZ that could not be read; anything less is not one.
        if let best, best.confidence >= policy.minimumMeanScore { return (.unreadable(best.refusal), sourcePitch, band, grids) }
        return (.notFound, sourcePitch, band, grids)
    }

    /// The most grids one attempt reads: the locator's surest, each read as it is and upside down.
    static let gridsRead = 6

    /// Every candidate is read (the page as it is and upside down, each layout that fits): the surest reading that
    /// parses wins, one whose print breaks no rule before one that does (`MRZReading.misprint`). A reading whose
    /// characters do not look like OCR-B is no evidence, whatever its check digits.
    /// A grid whose first line fits the templates upright clearly worse than another grid's first line
    /// (`MRZReadingPolicy.orientationMargin`: most often the band taken upside down) is not read further.
    private func surest(_ grids: [MRZGrid], classifier: GlyphClassifier) -> (read: MRZReading?, refused: Unread?) {
        var read: MRZReading?
        var best: Unread?
        let uprights = grids.map { classifier.uprightGeometry(of: Array($0.lines[0].dropFirst().dropLast())) }
        let surestFit = uprights.compactMap { $0?.fit }.max() ?? 0
        for (grid, upright) in zip(grids, uprights) {
            // A line without capitals is no evidence (`noLegibleCapitals`, confidence 0): it is never the one reported.
            guard let upright, upright.fit >= surestFit - policy.orientationMargin else { continue }
            switch reading(grid, classifier: classifier, firstLine: upright) {
            case .success(let reading) where reading.meanScore >= policy.minimumMeanScore:
                let rank = { (reading: MRZReading) in (reading.misprint == nil ? 1 : 0, reading.meanScore) }
                if read.map({ rank(reading) > rank($0) }) ?? true { read = reading }
            case .success(let reading):
                if reading.meanScore > best?.confidence ?? 0 {
                    best = Unread(
                        confidence: reading.meanScore,
                        refusal: MRZRefusal(.tooFaint, field: .layout, message: "MRZ characters too faint or blurred to read"))
                }
            case .failure(let failure):
                if failure.confidence > best?.confidence ?? 0 { best = failure }
            }
        }
        return (read, best)
    }

    /// A grid read: its cells measured and scored (`CellMeasures`), the rules before mending applied, the check digits
    /// mended, the rules after applied.
    /// `firstLine`: the first line's upright geometry where it was measured already.
    func reading(
        _ grid: MRZGrid, classifier: GlyphClassifier, firstLine: (geometry: GlyphClassifier.LineGeometry, fit: Float)? = nil
    ) -> Result<MRZReading, Unread> {
        guard let measures = CellMeasures(grid, classifier: classifier, policy: policy, firstLine: firstLine) else {
            return .failure(
                Unread(confidence: 0, refusal: MRZRefusal(.noLegibleCapitals, field: .layout, message: "MRZ line without legible capitals")))
        }
        let cells = measures.reading(grid.format, policy: policy)
        if let (refusal, noEvidence) = MRZAcceptance.first(of: MRZAcceptance.beforeMending, refusing: cells, policy: policy) {
            return .failure(Unread(confidence: noEvidence ? 0 : cells.meanScore, refusal: refusal))
        }
        let referenceDate = referenceDate
        let parse = { (lines: [[Character]]) throws(MRZError) -> MRZ in
            try MRZ(parsing: lines.map { String($0) }.joined(separator: "\n"), referenceDate: referenceDate, admitting: [.invalidDate])
        }
        let mended: MendedReading
        switch mend(cells, measures: measures, classifier: classifier, parse: parse) {
        case .success(let reading): mended = reading
        case .failure(let error): return .failure(Unread(confidence: cells.meanScore, refusal: MRZRefusal(parsing: error)))
        }
        if let (refusal, noEvidence) = MRZAcceptance.first(of: MRZAcceptance.afterMending, refusing: mended, policy: policy) {
            return .failure(Unread(confidence: noEvidence ? 0 : cells.meanScore, refusal: refusal))
        }
        return .success(MRZReading(mended))
    }

    /// The reading with its check digits mended where close second choices do it (`MRZCharacterRules.repair`), and
    /// what the rules after mending judge it by.
    private func mend(
        _ cells: CellReading, measures: CellMeasures, classifier: GlyphClassifier, parse: @escaping ([[Character]]) throws(MRZError) -> MRZ
    ) -> Result<MendedReading, MRZError> {
        let asRead = CloseCallJudge(
            document: DocumentGlyphs(
                classifier: classifier, cells: measures.windows, geometries: measures.geometries, lines: cells.lines, slots: cells.slots,
                scores: cells.scores, mended: [], policy: policy),
            policy: policy)
        let (lines, shown) = MRZCharacterRules.readAsShown(
            cells.lines, scores: cells.scores, format: cells.format, policy: policy, judge: asRead.callAsFunction)
        let mrz: MRZ
        let stateCodes: [(field: MRZField, code: String)]
        do throws(MRZError) {
            mrz = try MRZCharacterRules.repair(lines, scores: cells.scores, format: cells.format, policy: policy, parse: parse).get()
            stateCodes = try mrz.stateCodes
        } catch {
            return .failure(error)
        }
        let final = mrz.lines.map { Array($0) }
        let changed = zip(cells.read.indices, cells.read).flatMap { line, characters in
            characters.indices.map { MRZCharacterRules.Position(line: line, index: $0) }.filter {
                characters[$0.index] != final[line][$0.index] && (!shown.contains($0) || final[line][$0.index] != lines[line][$0.index])
            }
        }
        // The cells read as shown are no reference for the document's print, as the mended ones are not.
        let document = DocumentGlyphs(
            classifier: classifier, cells: measures.windows, geometries: measures.geometries, lines: final, slots: cells.slots,
            scores: cells.scores, mended: Set(changed).union(shown), policy: policy)
        let judge = CloseCallJudge(document: document, policy: policy)
        let fields = MRZCharacterRules.fieldConfidence(
            final, scores: cells.scores, format: cells.format, mended: Set(changed), policy: policy, judge: judge.callAsFunction)
        return .success(
            MendedReading(
                cells: cells, mrz: mrz, stateCodes: stateCodes, final: final, changed: changed,
                shown: shown.filter { final[$0.line][$0.index] == lines[$0.line][$0.index] }, fields: fields, judge: judge, parse: parse))
    }
}

/// A grid's cells as the classifier measured them: each line's geometry (its capitals' size, slant and aspect), the
/// window of the format's length that reads best, and each cell's template scores.
struct CellMeasures {
    var geometries: [GlyphClassifier.LineGeometry]
    var windows: [ArraySlice<MRZGrid.Cell>]
    var scores: [[[Float]]]

    /// Nil when a line has no legible capitals.
    /// `firstLine`: the first line's upright geometry (`GlyphClassifier.uprightGeometry(of:)`) where it was measured already.
    init?(
        _ grid: MRZGrid, classifier: GlyphClassifier, policy: MRZReadingPolicy,
        firstLine: (geometry: GlyphClassifier.LineGeometry, fit: Float)? = nil
    ) {
        var fits: [(geometry: GlyphClassifier.LineGeometry, fit: Float)] = []
        for (index, line) in grid.lines.enumerated() {
            let cells = Array(line.dropFirst().dropLast())
            guard let upright = (index == 0 ? firstLine : nil) ?? classifier.uprightGeometry(of: cells) else { return nil }
            fits.append(classifier.geometry(of: cells, upright: upright))
        }
        // One font size prints the whole MRZ: a line that fits the templates clearly worse than the best one (its
        // capitals measured among a neighbour's, or in a shadow) is measured again with the best line's size.
        let surest = fits.max { $0.fit < $1.fit }!
        for index in fits.indices where fits[index].fit < surest.fit - policy.refitBelow {
            let start = GlyphClassifier.LineGeometry(
                unit: surest.geometry.unit, offset: fits[index].geometry.offset, slant: surest.geometry.slant, aspect: surest.geometry.aspect)
            let again = classifier.refined(
                Array(grid.lines[index].dropFirst().dropLast()), around: start, factors: [1],
                shifts: stride(from: -4.0, through: 4.0, by: 0.5).map { $0 })
            if again.fit > fits[index].fit { fits[index] = again }
        }
        geometries = fits.map(\.geometry)
        windows = []
        scores = []
        let count = grid.lines[0].count - 2
        for (line, geometry) in zip(grid.lines, geometries) {
            let cells = line.map { classifier.scores($0, geometry: geometry) }
            // The window of the format's length that reads best: the grid may be a cell off at either end.
            let best = (0...2).max { a, b in
                cells[a..<(a + count)].reduce(0) { $0 + ($1.max() ?? 0) } < cells[b..<(b + count)].reduce(0) { $0 + ($1.max() ?? 0) }
            }!
            scores.append(Array(cells[best..<(best + count)]))
            windows.append(line[best..<(best + count)])
        }
    }

    /// The best character each cell's slot allows, lone letters between fillers and state codes settled. A visa shares
    /// a passport's geometry; its document code `V` (first line, all letters in both) tells it, and its second line's
    /// optional data is read as such, not as a personal number and check digits.
    func reading(_ geometry: MRZ.Format, policy: MRZReadingPolicy) -> CellReading {
        let format: MRZ.Format =
            switch (geometry, MRZCharacterRules.best(scores[0][0], slot: .capital).character) {
            case (.td3, "V"): .mrvA
            case (.td2, "V"): .mrvB
            default: geometry
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
        MRZCharacterRules.settleDigits(&lines, scores: scores, format: format, policy: policy)
        MRZCharacterRules.settleFillers(&lines, scores: scores, slots: slots, policy: policy)
        let read = lines
        MRZCharacterRules.settleStates(&lines, scores: scores, format: format, policy: policy)
        let meanScore = total / Float(lines.reduce(0) { $0 + $1.count })
        return CellReading(format: format, scores: scores, slots: slots, read: read, lines: lines, meanScore: meanScore)
    }
}

/// An MRZ read from an image, and what a caller needs to route it: how surely each field was read (its weakest
/// character's template score and margin over the runner-up), which characters were changed to satisfy check
/// digits, which state codes are not ones ICAO 9303 lists (kept as read), and the pass of the ladder that read it.
public struct MRZReading: Sendable {
    public typealias Confidence = MRZ.FieldConfidence

    public var mrz: MRZ
    /// By field name (`documentNumber`, `name`, `issuingState`...).
    public var confidence: [String: Confidence]
    /// "documentNumber: 1 look-alike(s) changed" (at most `MRZReadingPolicy.maximumMendsPerField` per field), and
    /// "documentNumber: 8 look-alike(s) read as the print shows them" (`MRZCharacterRules.readAsShown`).
    public var repairs: [String]
    public var unknownStates: [String]
    /// The mean template score of every character.
    public var meanScore: Float
    public var pass: MRZPass = .page
    /// The rule of ICAO 9303 the print itself breaks (`MRZ.misprints`), read as printed: the reading is not accepted.
    var misprint: MRZRefusal?

    init(_ reading: MendedReading) {
        mrz = reading.mrz
        confidence = Dictionary(uniqueKeysWithValues: reading.fields.map { ($0.key.rawValue, $0.value.confidence) })
        let fields = reading.changed.map { MRZLayout.of(reading.cells.format).field(at: $0).rawValue }
        let shown = reading.shown.map { MRZLayout.of(reading.cells.format).field(at: $0).rawValue }
        repairs =
            (Dictionary(grouping: fields, by: { $0 }).map { "\($0.key): \($0.value.count) look-alike(s) changed" }
            + Dictionary(grouping: shown, by: { $0 }).map { "\($0.key): \($0.value.count) look-alike(s) read as the print shows them" })
            .sorted()
        unknownStates = reading.stateCodes.filter { !ICAOStates.codes.contains($0.code) }.map(\.field.rawValue)
        meanScore = reading.cells.meanScore
        misprint = MRZAcceptance.misprint(reading)
    }
}
