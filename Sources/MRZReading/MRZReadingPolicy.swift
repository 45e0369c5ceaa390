/// A template score: a cell's normalised correlation with a character's template, -1 to 1.
public typealias TemplateScore = Float
/// A difference of two template scores, 0 to 2.
public typealias ScoreGap = Float
/// A share of what separates two characters' templates at best (1 - their correlation, `GlyphClassifier.separation`):
/// 0 and O differ by 0.11, 0 and D by 0.34, so a gap is measured in these rather than in score.
public typealias SeparationShare = Float
/// How clearly the samples where only one of two look-alikes has ink show one of them (`GlyphClassifier.evidence`,
/// -1 to 1), or how much closer a cell is to the document's own cells of one (`DocumentGlyphs`), in shares of what
/// separates the two there.
public typealias EvidenceShare = Float
/// Template samples: a sixteenth of the capitals' height.
public typealias TemplateSamples = Float

/// Every threshold the MRZ reader decides by, in one value: the defaults are the ones measured (each line says on
/// what), and a caller may set any of them. Made only through `init`, which refuses a value out of its range, NaN or
/// an infinity (`MRZReadingPolicy.Invalid`), so that nothing traps later.
public struct MRZReadingPolicy: Sendable, Equatable {
    // MARK: Finding the band

    /// Pictures are searched for the band at this many pixels at most (decoded smaller).
    public private(set) var searchPixels: Int = 3_000_000
    /// A band whose characters came out smaller than this many pixels per pitch is read from the full picture.
    public private(set) var readablePitchPixels: Double = 16

    // MARK: A reading, whole

    /// The mean template score of a reading's characters below which it is not taken (and below which a grid is no
    /// MRZ at all: nothing is reported).
    public private(set) var minimumMeanScore: TemplateScore = 0.7
    /// The most characters a reading may have mended, all fields together.
    public private(set) var maximumMends: Int = 2
    /// The most characters one field's mend may change: a check digit passes by chance one time in ten.
    public private(set) var maximumMendsPerField: Int = 2
    /// The template score the mends of a reading may lose in all.
    public private(set) var maximumMendLoss: ScoreGap = 0.15

    // MARK: A character

    /// A cell whose chosen character beat the runner-up its slot allows by less than this (and was not mended as a
    /// close call) is a guess. Chosen on the benchmark corpus's tune split (scripts/bench-mrz): 0.02 returned no wrong
    /// reading there.
    public private(set) var minimumMargin: ScoreGap = 0.02
    /// The template score below which a character of a checked field is no OCR-B character, whatever its margin: a cell
    /// the grid placed across two characters. On the benchmark's seeds 1-5, 7, 9, no right reading's weakest character
    /// scored under 0.63 (3,137 readings); a line whose first half was read half a cell off scored 0.15-0.51 there.
    public private(set) var minimumCharacterScore: TemplateScore = 0.55
    /// The same for a field no check digit covers. On the same seeds no right reading's unchecked field scored under
    /// 0.65; a filler at the end of a wavy line's names came back `W`, scoring 0.58.
    public private(set) var uncheckedScore: TemplateScore = 0.62
    /// A name's (or another unchecked field's) weakest letter must lead the next letter by this much. Chosen on the
    /// benchmark corpus's tune seeds: no right reading there led by less than 0.04.
    public private(set) var nameMargin: ScoreGap = 0.04
    /// An unlisted state code, and a visa's optional data, must lead every other character by this much in its weakest
    /// cell (a hollow `7` read `Z` by 0.08 on an MRV-B read from the page as it is).
    public private(set) var stateMargin: ScoreGap = 0.1
    /// A cell of a checked field whose runner-up weighs the same in the check digit (`MRZ.checkValue` modulo 10) must
    /// lead it by this much: swapping them passes the check.
    public private(set) var invisibleMargin: ScoreGap = 0.05
    /// A cell of a letters-only field where a digit that is no look-alike of the letter read scores above it by this
    /// much shows a digit (`MRZCharacterRules.digitLead`). On the benchmark's seed 14 no cell's digit led by more than
    /// -0.003 (611 readings); on real prints, letters' best digits led by at most 0.005, printed digits by 0.11 to 0.19.
    public private(set) var digitLead: ScoreGap = 0.05
    /// A lone letter between fillers in a letters-only line reads as a filler when the filler scored within this.
    public private(set) var fillerMargin: ScoreGap = 0.12
    /// A line that fits the templates worse than the best line by more than this is measured again with the best
    /// line's capitals (one font size prints the whole MRZ).
    public private(set) var refitBelow: Float = 0.1
    /// Of the grids one attempt found (the band as it is and upside down, each layout that fits), only those whose first
    /// line fits the templates upright within this of the best first line are read.
    public private(set) var orientationMargin: TemplateScore = 0.1

    // MARK: Look-alikes

    /// A look-alike that scored less than this share of the two templates' separation below the chosen character is a
    /// close call. Chosen on the benchmark corpus's tune split, with the wrong readings returned as the measure.
    public private(set) var closeCall: SeparationShare = 0.5
    /// In a checked field, the share of `closeCall` within which look-alikes that would swap together and still pass
    /// the check digit make the number a guess: swaps that cancel (two zeros read `O` at weights 7 and 3) leave no trace.
    public private(set) var pairCloseCall: SeparationShare = 1.15
    /// `pairCloseCall` in a field whose check digit a mend satisfied (`V0445209996` read `VO44SZO9996`: both 0s read O by
    /// 0.07, the 5 and the 2 mended to S and Z).
    public private(set) var mendedCloseCall: SeparationShare = 2
    /// In a mended field, how close a runner-up that is no look-alike must come for the swap to it to be tried too
    /// (`KRUMA7BY` came back `XRUMA78Y`: `K` read `X` by 0.04, `B` mended to `8`, cancelling at weights 7 and 7).
    public private(set) var mendedRival: ScoreGap = 0.05
    /// The share of `closeCall` within which a look-alike makes a name's letter a guess.
    public private(set) var nameCloseCall: SeparationShare = 0.75
    /// How clearly the strokes only one of two look-alikes has must show the one read for a close call to be settled; as
    /// clearly the other, and the reading is a guess.
    public private(set) var settledEvidence: EvidenceShare = 0.5
    /// How much closer to the document's own cells of the character read than to those of its look-alike a cell must be
    /// for a close call to be settled; as much closer to the look-alike's, and it is a guess. Seeds 1-4 (1,373 close
    /// calls with both characters elsewhere in the document): no cell read wrong came within 0.15 of it. Measured
    /// twice, averaged: by the views' likeness, and by where the template lead falls between the document's own.
    public private(set) var documentEvidence: EvidenceShare = 0.8
    /// The document's own cells of two look-alikes settle nothing where they differ by less than this share of what
    /// separates the templates: its noise is then as large as their difference.
    public private(set) var documentApart: SeparationShare = 0.5
    /// Beyond a close call, as far as a mended field's, a cell whose document evidence leans to the look-alike by this
    /// much is a guess (seed 9's `F8I0K180I` came back `F8IOK18OI`; on seeds 1-4, 2 of 735 right cells in that band
    /// leaned so, and 4 of the 5 read wrong).
    public private(set) var documentLean: EvidenceShare = 0.3
    /// Where the document shows only one of two look-alikes: a cell whose lead for it falls short of its cells' median
    /// lead by at most this is that character (seeds 1-4: 1,649 one-sided close calls, 2,092 two-sided ones).
    public private(set) var documentLead: SeparationShare = 0.2
    /// ... and one short by this much or more is not: a cell read as the other is then settled for it (on seeds 13, 1
    /// and 2, 10 more pages read exactly and none wrong; on pages of `D`s, `Q`s and `G`s without an `O`, none wrong).
    public private(set) var documentLeadLost: SeparationShare = 1.3
    /// ... and a cell read as the other one, short of the document's cells by this much or more, is settled for the one
    /// read: being unlike the document's only look-alike needs less than showing it does (seeds 14, 13, 1 and 2: 7
    /// more pages read exactly, none wrong, the same at 0.5; a real visa's `5`s, behind its `S`s by 0.78 to 1.0).
    public private(set) var documentLeadUnlike: SeparationShare = 0.7
    /// ... and only where its cells lead for it by at least this: cells the templates read as the look-alike (a blurred
    /// print's `O`s leading by -0.04) show nothing. At 0.4, document numbers of 0s on prints whose dates' 0s led
    /// for 0 by under 0.04 were refused (2 of 54 real passports and ID cards); at 0 the benchmark's seeds 14, 13, 1 and
    /// 2 read 3 more pages exactly and none wrong, and pages whose numbers mix 0 and O as often as not read the same.
    public private(set) var documentLeadShown: SeparationShare = 0
    /// How far the left side of a cell must bow out for it to be a round letter's rather than a `D`'s straight stem. On
    /// seeds 1-4 no `D` of 21 close calls bowed more than 0.56, and 98 % of 478 `O`s 1.17 or more.
    public private(set) var roundBow: TemplateSamples = 1.2

    /// Why a policy was not made: the threshold, and the range it must be in.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var name: String
        public var range: String
        public var description: String { "MRZ reading policy: \(name) must be a finite number in \(range)" }
    }

    /// Today's measured defaults: each value as declared above.
    public static let standard = MRZReadingPolicy()

    /// The defaults.
    public init() {
        // Every value as declared above.
    }

    /// The defaults with the values given instead; throws when one is out of its range, NaN or infinite.
    public init(
        searchPixels: Int? = nil,
        readablePitchPixels: Double? = nil,
        minimumMeanScore: TemplateScore? = nil,
        maximumMends: Int? = nil,
        maximumMendsPerField: Int? = nil,
        maximumMendLoss: ScoreGap? = nil,
        minimumMargin: ScoreGap? = nil,
        minimumCharacterScore: TemplateScore? = nil,
        uncheckedScore: TemplateScore? = nil,
        nameMargin: ScoreGap? = nil,
        stateMargin: ScoreGap? = nil,
        invisibleMargin: ScoreGap? = nil,
        digitLead: ScoreGap? = nil,
        fillerMargin: ScoreGap? = nil,
        refitBelow: Float? = nil,
        orientationMargin: TemplateScore? = nil,
        closeCall: SeparationShare? = nil,
        pairCloseCall: SeparationShare? = nil,
        mendedCloseCall: SeparationShare? = nil,
        mendedRival: ScoreGap? = nil,
        nameCloseCall: SeparationShare? = nil,
        settledEvidence: EvidenceShare? = nil,
        documentEvidence: EvidenceShare? = nil,
        documentApart: SeparationShare? = nil,
        documentLean: EvidenceShare? = nil,
        documentLead: SeparationShare? = nil,
        documentLeadLost: SeparationShare? = nil,
        documentLeadUnlike: SeparationShare? = nil,
        documentLeadShown: SeparationShare? = nil,
        roundBow: TemplateSamples? = nil
    ) throws(Invalid) {
        self.init()
        if let searchPixels { self.searchPixels = searchPixels }
        if let readablePitchPixels { self.readablePitchPixels = readablePitchPixels }
        if let minimumMeanScore { self.minimumMeanScore = minimumMeanScore }
        if let maximumMends { self.maximumMends = maximumMends }
        if let maximumMendsPerField { self.maximumMendsPerField = maximumMendsPerField }
        if let maximumMendLoss { self.maximumMendLoss = maximumMendLoss }
        if let minimumMargin { self.minimumMargin = minimumMargin }
        if let minimumCharacterScore { self.minimumCharacterScore = minimumCharacterScore }
        if let uncheckedScore { self.uncheckedScore = uncheckedScore }
        if let nameMargin { self.nameMargin = nameMargin }
        if let stateMargin { self.stateMargin = stateMargin }
        if let invisibleMargin { self.invisibleMargin = invisibleMargin }
        if let digitLead { self.digitLead = digitLead }
        if let fillerMargin { self.fillerMargin = fillerMargin }
        if let refitBelow { self.refitBelow = refitBelow }
        if let orientationMargin { self.orientationMargin = orientationMargin }
        if let closeCall { self.closeCall = closeCall }
        if let pairCloseCall { self.pairCloseCall = pairCloseCall }
        if let mendedCloseCall { self.mendedCloseCall = mendedCloseCall }
        if let mendedRival { self.mendedRival = mendedRival }
        if let nameCloseCall { self.nameCloseCall = nameCloseCall }
        if let settledEvidence { self.settledEvidence = settledEvidence }
        if let documentEvidence { self.documentEvidence = documentEvidence }
        if let documentApart { self.documentApart = documentApart }
        if let documentLean { self.documentLean = documentLean }
        if let documentLead { self.documentLead = documentLead }
        if let documentLeadLost { self.documentLeadLost = documentLeadLost }
        if let documentLeadUnlike { self.documentLeadUnlike = documentLeadUnlike }
        if let documentLeadShown { self.documentLeadShown = documentLeadShown }
        if let roundBow { self.roundBow = roundBow }
        try validate()
    }

    /// Every value in its range, finite.
    func validate() throws(Invalid) {
        func check<Value: BinaryFloatingPoint>(_ value: Value, _ range: ClosedRange<Value>, _ name: String) throws(Invalid) {
            guard value.isFinite, range.contains(value) else { throw Invalid(name: name, range: "\(range)") }
        }
        func check(_ value: Int, _ range: ClosedRange<Int>, _ name: String) throws(Invalid) {
            guard range.contains(value) else { throw Invalid(name: name, range: "\(range)") }
        }
        try check(searchPixels, 1...1_000_000_000, "searchPixels")
        try check(readablePitchPixels, 1...1000, "readablePitchPixels")
        for (value, name) in [
            (minimumMeanScore, "minimumMeanScore"), (minimumCharacterScore, "minimumCharacterScore"), (uncheckedScore, "uncheckedScore")
        ] {
            try check(value, -1...1, name)
        }
        try check(maximumMends, 0...88, "maximumMends")
        try check(maximumMendsPerField, 0...44, "maximumMendsPerField")
        for (value, name) in [
            (maximumMendLoss, "maximumMendLoss"), (minimumMargin, "minimumMargin"), (nameMargin, "nameMargin"), (stateMargin, "stateMargin"),
            (invisibleMargin, "invisibleMargin"), (fillerMargin, "fillerMargin"), (refitBelow, "refitBelow"), (mendedRival, "mendedRival"),
            (orientationMargin, "orientationMargin"), (digitLead, "digitLead")
        ] {
            try check(value, 0...2, name)
        }
        for (value, name) in [
            (closeCall, "closeCall"), (pairCloseCall, "pairCloseCall"), (mendedCloseCall, "mendedCloseCall"), (nameCloseCall, "nameCloseCall"),
            (documentApart, "documentApart"), (documentLead, "documentLead"), (documentLeadLost, "documentLeadLost"),
            (documentLeadUnlike, "documentLeadUnlike"), (documentLeadShown, "documentLeadShown")
        ] {
            try check(value, 0...20, name)
        }
        for (value, name) in [(settledEvidence, "settledEvidence"), (documentEvidence, "documentEvidence"), (documentLean, "documentLean")] {
            try check(value, 0...20, name)
        }
        try check(roundBow, 0...16, "roundBow")
    }

    /// The widest lead a margin rule asks for (`stateMargin`): a rival farther behind is never put to the glyph's judge.
    var judgedWithin: ScoreGap { stateMargin }
}
