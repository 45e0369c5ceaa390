import ImageDecoding

/// The passes of the reading ladder, in the order they are tried (`MRZImageReader.ladder` says when each runs):
/// only a page that did not read pays for the next one.
public enum MRZPass: String, Sendable, CaseIterable, Codable {
    /// The page as decoded for the search (the band read from the full picture where its print is small).
    case page
    /// Nothing like a band: hollow (outline) or broken strokes fall apart into pieces no line is made of. The page
    /// with its strokes closed over gaps of two pixels.
    case closed
    /// Faded print: ink less than a fifth darker than its paper is not ink to `InkComponents`, so thin strokes break
    /// up (the benchmark's faint print: 6-7 of 20 pages found nothing). The page, its contrast stretched.
    case stretched
    /// Print under a bright reflection, or small and soft, is less than a fifth darker than the paper around it: ink
    /// told from paper at a tenth (seeds 1-5, 7, 9: 52 more of 3,640 pages read, none wrong).
    case faint
    /// Closing shuts the mouths of a hollow `G` and `C` as it joins their outlines: the band the closed page showed,
    /// read from the page itself softened (a box blur of a template sample), so that an outline stroke reads as the
    /// solid one the templates have.
    case closedBandSoftened
    /// A large page at half size: characters far larger than the templates' grid, ink that runs together (the same
    /// page reads the same at any scale).
    case halved
    /// The page softened by a box blur of a template sample: hollow or thin print, and a screen's pixel grid, look
    /// like the solid strokes of the templates.
    case softened
    /// The band, its strokes closed over gaps of about a tenth of the pitch: hollow or broken strokes.
    case closedBand
    /// The band binarised with a window of two pitches, the hollows of outline print filled.
    case solidBand
    /// The last try: the page binarised, its hollows filled. Hollow print's characters fall apart into nested rings
    /// that line up with nothing, or another text of the page is taken for the band; blurred print's grey edges go.
    /// (Doubling small images was tried: print under 6 px high stays unreadable.)
    case solidPage
}

/// What the ladder knows so far: the picture searched, the full one once decoded, the outcome to report if nothing
/// reads, and the band the band passes read.
struct LadderState {
    let search: GrayImage
    private(set) var full: GrayImage?
    private let decodeFull: () throws(ImageDecodingError) -> GrayImage
    /// What is reported if nothing reads: the first refusal, else "not found".
    private(set) var outcome: MRZImageReader.Outcome = .notFound
    /// The attempt whose band the band passes read, and its pass.
    private(set) var located: (attempt: MRZImageReader.Attempt, pass: MRZPass)?
    /// The grids the closed page showed.
    private(set) var closedGrids: [MRZGrid] = []

    init(search: GrayImage, full: GrayImage?, decodeFull: @escaping () throws(ImageDecodingError) -> GrayImage) {
        self.search = search
        self.full = full
        self.decodeFull = decodeFull
    }

    mutating func fullResolution() throws(ImageDecodingError) -> GrayImage {
        if let full { return full }
        let decoded = try decodeFull()
        full = decoded
        return decoded
    }

    /// Nothing located so far, and nothing refused.
    var nothingYet: Bool {
        guard located == nil, case .notFound = outcome else { return false }
        return true
    }

    /// Takes in an attempt that did not read: a refusal replaces "not found" (the first refusal stands); a band is
    /// the one to read further when the step locates (`locates`), the first such.
    mutating func take(_ attempt: MRZImageReader.Attempt, from step: MRZImageReader.Step) {
        if step.pass == .closed { closedGrids = attempt.grids }
        let refused: Bool
        if case .unreadable(var refusal) = attempt.outcome {
            refused = true
            if case .notFound = outcome {
                refusal.pass = step.pass
                outcome = .unreadable(refusal)
            }
        } else {
            refused = false
        }
        guard located == nil, attempt.pitch != nil, attempt.band != nil else { return }
        switch step.locates {
        case .always: located = (attempt, step.pass)
        case .whenRefused where refused: located = (attempt, step.pass)
        default: break
        }
    }
}

extension MRZImageReader {
    /// One rung: its pass, when it runs, and how it reads (nil: this page has nothing for it, e.g. no contrast to
    /// stretch).
    struct Step {
        enum Locates { case always, whenRefused, never }

        var pass: MRZPass
        var runs: @Sendable (LadderState) -> Bool
        var locates: Locates = .never
        var attempt: @Sendable (MRZImageReader, inout LadderState) throws(ImageDecodingError) -> Attempt?
    }

    /// The ladder, run top to bottom by `read(_:decoder:decoded:)` until a pass reads.
    static let ladder: [Step] = [
        Step(pass: .page, runs: { _ in true }, locates: .always) { reader, state throws(ImageDecodingError) in
            try reader.attempt(state.search) { () throws(ImageDecodingError) in try state.fullResolution() }
        },
        Step(pass: .closed, runs: \.nothingYet, locates: .whenRefused) { reader, state in
            reader.attempt(state.search.closedInk(radius: 1))
        },
        Step(pass: .stretched, runs: \.nothingYet, locates: .whenRefused) { reader, state in
            (try? state.search.contrastStretched()).map { reader.attempt($0) }
        },
        Step(pass: .faint, runs: \.nothingYet, locates: .whenRefused) { reader, state throws(ImageDecodingError) in
            try reader.attempt(state.search, threshold: .faint) { () throws(ImageDecodingError) in try state.fullResolution() }
        },
        Step(pass: .closedBandSoftened, runs: { $0.located.map { $0.pass != .page } == true && !$0.closedGrids.isEmpty }) { reader, state in
            guard let pitch = state.located?.attempt.pitch, let softened = softened(state.search, pitch: pitch) else { return nil }
            return reader.attempt(softened, located: state.closedGrids)
        },
        Step(pass: .halved, runs: { min($0.search.width, $0.search.height) >= 1200 }) { reader, state in
            reader.attempt(state.search.halved())
        },
        Step(pass: .softened, runs: { $0.located != nil }) { reader, state in
            guard let pitch = state.located?.attempt.pitch, let softened = softened(state.full ?? state.search, pitch: pitch) else { return nil }
            return reader.attempt(softened)
        },
        Step(pass: .closedBand, runs: { $0.located != nil }) { reader, state in
            guard let (image, pitch) = bandImage(state) else { return nil }
            return reader.attempt(image.closedInk(radius: max(1, Int((pitch / 20).rounded()))))
        },
        Step(pass: .solidBand, runs: { $0.located != nil }) { reader, state in
            guard let (image, pitch) = bandImage(state) else { return nil }
            return reader.attempt(image.filledHollowStrokes(window: min(61, max(15, Int(2 * pitch)))))
        },
        Step(pass: .solidPage, runs: { _ in true }) { reader, state in
            reader.attempt(state.search.filledHollowStrokes(window: inkWindow(state.search)))
        }
    ]

    /// `image` softened by a box blur of a template sample: a sixteenth of the capitals' height, about a sixteenth of
    /// the pitch. Nil for a pitch over sixteen times the image's larger side, which no band found in it has.
    static func softened(_ image: GrayImage, pitch: Double) -> GrayImage? {
        try? image.boxBlurred(radius: max(1, Int((pitch / 16).rounded())))
    }

    /// The located band's pixels and two pitches around them, from the full picture if it was decoded; and the pitch.
    private static func bandImage(_ state: LadderState) -> (GrayImage, Double)? {
        guard let located = state.located?.attempt, let pitch = located.pitch, let band = located.band else { return nil }
        let margin = Int(2 * pitch)
        let source = state.full ?? state.search
        return (source.cropped(minX: band.minX - margin, minY: band.minY - margin, maxX: band.maxX + margin, maxY: band.maxY + margin), pitch)
    }
}
