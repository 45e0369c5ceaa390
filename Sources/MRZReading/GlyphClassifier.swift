import ImageDecoding

/// Scores an MRZ character cell against the OCR-B templates: the cell is resampled to the templates' grid (one
/// sample per sixteenth of the line's capital height across the line, and as much times the line's aspect along it,
/// so tilt, perspective and print narrower or wider than the templates are undone), and each template's normalised
/// correlation with it, the best over shifts of one sample, is its score (-1 to 1).
struct GlyphClassifier {
    /// A line's capitals: their height and where their middle is, measured on the line itself (printers set
    /// capitals of 2.0 to 2.4 mm on the 2.54 mm pitch).
    struct LineGeometry {
        /// Pixels per template sample: a sixteenth of the capital height.
        var unit: Double
        /// From the cells' centres to the capitals' middle, across the line, in pixels.
        var offset: Double
        /// How far the characters lean: samples along the line per sample up from their middle (an oblique cut of
        /// OCR-B, or a page photographed at an angle, leans; upright print is 0).
        var slant: Double = 0
        /// How wide the characters are for their height, against the templates: a sample along the line is `aspect`
        /// units (a page photographed from the side is narrower, a condensed or expanded cut too; 1 as the templates).
        var aspect: Double = 1
    }

    /// The aspects tried beside the templates' own, then refined by a half step around the best. Without them a page
    /// narrowed to 0.8 (a phone held 37 degrees off the page's axis) read `0406` as `C4C6`, two changes that cancel in
    /// the check digit.
    static let aspects: [Double] = [0.8, 0.9, 1.1, 1.25]

    /// The slants tried beside upright (tan 6° to 17° either way), then refined by a half step around the best.
    /// Tried on every line: gated on a poor upright fit (below 0.85), oblique print read 49 of 86 pages of the
    /// benchmark's seed 1 instead of 60, for 13 % less CPU.
    static let slants: [Double] = [-0.3, -0.2, -0.1, 0.1, 0.2, 0.3]

    static let characters = OCRBGlyphs.characters
    private static let width = OCRBGlyphs.width, height = OCRBGlyphs.height
    /// Every template with mean 0 and unit norm, one after the other, in vectors of 16 (a template row).
    private static let templates: [SIMD16<Float>] = OCRBGlyphs.darkness.flatMap { vectors(normalised($0.map { Float($0) })) }
    private static let vectorsPerTemplate = width * height / 16

    let image: GrayImage

    /// What separates two characters' templates at best: 1 - their correlation, blurred (the closer pair of cuts).
    static func separation(_ a: Character, _ b: Character) -> Float {
        guard let i = characters.firstIndex(of: a), let j = characters.firstIndex(of: b) else { return 1 }
        return separations[i * characters.count + j]
    }

    private static let separations: [Float] = {
        let count = characters.count
        let blurred = (0..<count).map { Array(templates[((count + $0) * vectorsPerTemplate)..<((count + $0 + 1) * vectorsPerTemplate)]) }
        var table = [Float](repeating: 1, count: count * count)
        for i in 0..<count {
            for j in 0..<count {
                table[i * count + j] = 1 - zip(blurred[i], blurred[j]).reduce(0) { $0 + ($1.0 * $1.1).sum() }
            }
        }
        return table
    }()

    /// The first step of `geometry(of:)`: the capitals' size and height, upright and as wide as the templates', and how
    /// well they fit; nil when the line shows no capitals. The darkness across the line, summed along it, one row per
    /// sixteenth of a pitch over ±0.8 pitch (the next line's capitals start farther out): the rows where it stands
    /// clearly above the paper are the capitals. Paper in shadow is dark too: ink is told from it by difference, not
    /// by ratio.
    func uprightGeometry(of line: [MRZGrid.Cell]) -> (geometry: LineGeometry, fit: Float)? {
        let rows = 27, columns = 16
        var profile = [Float](repeating: 0, count: rows)
        for cell in line {
            let along = Point(x: cell.pitch.x / 16, y: cell.pitch.y / 16)
            let across = Point(x: -along.y, y: along.x)
            for row in 0..<rows {
                let b = Double(row - rows / 2)
                for column in 0..<columns {
                    let a = Double(column) - Double(columns) / 2 + 0.5
                    profile[row] += 255 - bilinear(cell.center.x + a * along.x + b * across.x, cell.center.y + a * along.y + b * across.y)
                }
            }
        }
        guard let peak = profile.indices.max(by: { profile[$0] < profile[$1] }), let paper = profile.min(),
            profile[peak] - paper > Float(line.count * columns) * 4
        else { return nil }
        let threshold = paper + 0.3 * (profile[peak] - paper)
        var top = peak, bottom = peak
        while top > 0, profile[top - 1] > threshold { top -= 1 }
        while bottom < rows - 1, profile[bottom + 1] > threshold { bottom += 1 }
        let pitch = MRZLocator.median(line.map { ($0.pitch.x * $0.pitch.x + $0.pitch.y * $0.pitch.y).squareRoot() }) / 16
        let measured = LineGeometry(
            unit: Double(bottom - top + 1) * pitch / 16,
            offset: (Double(top + bottom) / 2 - Double(rows / 2)) * pitch)
        // The profile's edges are soft (round letters, blur): the size and height that fit the templates best.
        return refined(line, around: measured, factors: [0.92, 1.0, 1.08], shifts: [-0.5, 0, 0.5])
    }

    /// The line's geometry: from its capitals' size and height (`uprightGeometry(of:)`, measured already), the slant
    /// and the aspect that fit the templates best.
    func geometry(of line: [MRZGrid.Cell], upright: (geometry: LineGeometry, fit: Float)) -> (geometry: LineGeometry, fit: Float) {
        // Characters that lean fit their upright templates poorly, and each lean differs (a font's, a camera's); so do
        // characters narrower or wider than the templates' (a page photographed from the side, a condensed cut).
        let leaning = bestFit(line, around: upright, varying: \.slant, over: Self.slants)
        return bestFit(line, around: leaning, varying: \.aspect, over: Self.aspects)
    }

    /// The value of one of the geometry's parameters (`slant`, `aspect`) that fits the templates best, among `values`
    /// and `start`'s own, refined by a half step (0.05) either side of the best.
    func bestFit(
        _ line: [MRZGrid.Cell], around start: (geometry: LineGeometry, fit: Float),
        varying parameter: WritableKeyPath<LineGeometry, Double>, over values: [Double]
    ) -> (geometry: LineGeometry, fit: Float) {
        func tried(_ value: Double) -> (geometry: LineGeometry, fit: Float) {
            var geometry = start.geometry
            geometry[keyPath: parameter] = value
            return refined(line, around: geometry, factors: [1], shifts: [0])
        }
        var best = start
        for value in values {
            let fit = tried(value)
            if fit.fit > best.fit { best = fit }
        }
        let coarse = best.geometry[keyPath: parameter]
        guard coarse != start.geometry[keyPath: parameter] else { return start }
        for step in [-0.05, 0.05] {
            let fit = tried(coarse + step)
            if fit.fit > best.fit { best = fit }
        }
        return best
    }

    /// The geometry near `start` that fits the templates best on a sample of the line's cells, and how well (the
    /// sample's mean best score).
    func refined(
        _ line: [MRZGrid.Cell], around start: LineGeometry, factors: [Double],
        shifts: [Double]
    ) -> (geometry: LineGeometry, fit: Float) {
        let probe = stride(from: 0, to: line.count, by: max(1, line.count / 8)).map { line[$0] }
        var best = (geometry: start, fit: -Float.infinity)
        for factor in factors {
            for shift in shifts {
                var geometry = start
                geometry.unit = start.unit * factor
                geometry.offset = start.offset + shift * start.unit
                let score = probe.reduce(Float(0)) { $0 + (scores($1, geometry: geometry).max() ?? 0) } / Float(probe.count)
                if score > best.fit { best = (geometry, score) }
            }
        }
        return best
    }

    func scores(_ cell: MRZGrid.Cell, geometry: LineGeometry) -> [Float] {
        let samples = sample(cell, geometry: geometry)
        var best = [Float](repeating: -1, count: Self.characters.count)
        var window = [Float](repeating: 0, count: Self.width * Self.height)
        let count = Self.vectorsPerTemplate
        for dy in 0...2 {
            for dx in 0...2 {
                Self.window(samples, dx: dx, dy: dy, into: &window)
                let cell = Self.vectors(Self.normalised(window))
                Self.templates.withUnsafeBufferPointer { templates in
                    cell.withUnsafeBufferPointer { cell in
                        for template in 0..<(templates.count / count) {
                            var sum = SIMD16<Float>()
                            for k in 0..<count { sum += templates[template * count + k] * cell[k] }
                            // Templates come as each character sharp, then each blurred.
                            let character = template % Self.characters.count
                            best[character] = max(best[character], sum.sum())
                        }
                    }
                }
            }
        }
        return best
    }

    /// How clearly the cell shows `a` rather than its look-alike `b`, measured only on a stroke one of them has and the
    /// other has nothing near (a `Q`'s tail across an `O`'s counter, a `K`'s stem beside a `<`, an `I`'s bars: the sharp
    /// templates' samples over 170 in one whose 3 x 3 neighbourhood is under 30 in the other, or, where that leaves
    /// fewer than 4 samples to either, whose own sample is; 0, O and D (`LookAlike.widthOnly`) have none): each region's
    /// darkness as a share of the cell's own ink, the strokes both
    /// share, above its own paper, where neither has ink. 1 when only `a`'s region is inked, -1 when only `b`'s is,
    /// 0 when the two look the same. Taken at the shift where either template fits best. nil when the two differ in
    /// fewer than 4 samples, or the cell has no contrast to measure against.
    func evidence(_ cell: MRZGrid.Cell, geometry: LineGeometry, for a: Character, against b: Character) -> Float? {
        guard let first = Self.characters.firstIndex(of: a), let second = Self.characters.firstIndex(of: b) else { return nil }
        let ta = OCRBGlyphs.darkness[first], tb = OCRBGlyphs.darkness[second]
        let (onlyA, onlyB, around) = Self.ownStrokes(ta, tb, widthOnly: LookAlike.widthOnly.contains([a, b]))
        let shared = ta.indices.filter { ta[$0] > 170 && tb[$0] > 170 }, neither = ta.indices.filter { ta[$0] < 30 && tb[$0] < 30 }
        guard onlyA.count >= 4 || onlyB.count >= 4, !shared.isEmpty, !neither.isEmpty else { return nil }
        let samples = sample(cell, geometry: geometry)
        let characters = Self.characters.count
        var best: (fit: Float, window: [Float]) = (-.infinity, [])
        var window = [Float](repeating: 0, count: Self.width * Self.height)
        for dy in 0...2 {
            for dx in 0...2 {
                Self.window(samples, dx: dx, dy: dy, into: &window)
                let vectors = Self.vectors(Self.normalised(window))
                for template in [first, second, characters + first, characters + second] {
                    let fit = Self.correlation(vectors, template: template)
                    if fit > best.fit { best = (fit, window) }
                }
            }
        }
        func mean(_ indices: [Int]) -> Float { indices.reduce(Float(0)) { $0 + best.window[$1] } / Float(indices.count) }
        let ink = mean(shared), paper = mean(neither)
        guard ink - paper > 20 else { return nil }
        let aligned = best.window
        func darkest(_ index: Int) -> Float {
            let row = index / Self.width, column = index % Self.width
            var darkest = aligned[index]
            for y in max(0, row - 1)...min(Self.height - 1, row + 1) { darkest = max(darkest, aligned[y * Self.width + column]) }
            return darkest
        }
        func share(_ indices: [Int]) -> Float {
            let darkness = indices.reduce(Float(0)) { $0 + (around ? darkest($1) : aligned[$1]) } / Float(indices.count)
            return min(1, max(0, (darkness - paper) / (ink - paper)))
        }
        switch (onlyA.count >= 4, onlyB.count >= 4) {
        case (true, true): return share(onlyA) - share(onlyB)
        case (false, true): return 1 - 2 * share(onlyB)
        default: return 2 * share(onlyA) - 1
        }
    }

    /// The samples only `ta` inks and those only `tb` inks, each well away from the other's ink (or, where that leaves
    /// fewer than 4 to either and the two differ in more than width, where the other leaves paper: `around` false).
    private static func ownStrokes(_ ta: [UInt8], _ tb: [UInt8], widthOnly: Bool) -> (onlyA: [Int], onlyB: [Int], around: Bool) {
        // The darkest sample of `template` around `index` (its 3 x 3 neighbourhood): a stroke of one character's own is
        // at least a sample away from any ink of the other, so that a print a little wider, narrower or shifted than the
        // template does not reach it.
        func near(_ template: [UInt8], _ index: Int) -> UInt8 {
            let row = index / Self.width, column = index % Self.width
            var darkest: UInt8 = 0
            for y in max(0, row - 1)...min(Self.height - 1, row + 1) {
                for x in max(0, column - 1)...min(Self.width - 1, column + 1) { darkest = max(darkest, template[y * Self.width + x]) }
            }
            return darkest
        }
        var onlyA = ta.indices.filter { ta[$0] > 170 && near(tb, $0) < 30 }, onlyB = ta.indices.filter { tb[$0] > 170 && near(ta, $0) < 30 }
        // A stroke a sample away from the other's ink is looked for a sample around where the template has it: a hair-
        // thin print's bar is one sample high, and one a little taller or shorter than the templates' has it a row off
        // (an `E` read `L` when its bars fell between the rows the template inks).
        var around = true
        // Pairs whose strokes lie close together everywhere (a `5`'s flat top and an `S`'s curve, a `G`'s bar and a
        // `Q`'s tail, an `H`'s bar and an `M`'s vee): the samples one inks and the other leaves paper, where the cell
        // is aligned to them. Not for the round characters that differ in width alone, which a bolder print fills.
        if onlyA.count < 4 && onlyB.count < 4 && !widthOnly {
            onlyA = ta.indices.filter { ta[$0] > 170 && tb[$0] < 30 }
            onlyB = ta.indices.filter { tb[$0] > 170 && ta[$0] < 30 }
            around = false
        }
        return (onlyA, onlyB, around)
    }

    /// The cell as the templates see it: its template-sized window at each of the nine shifts, normalised (mean 0,
    /// norm 1).
    func views(_ cell: MRZGrid.Cell, geometry: LineGeometry) -> [[SIMD16<Float>]] {
        let samples = sample(cell, geometry: geometry)
        var window = [Float](repeating: 0, count: Self.width * Self.height)
        return (0..<9).map { shift in
            Self.window(samples, dx: shift % 3, dy: shift / 3, into: &window)
            return Self.vectors(Self.normalised(window))
        }
    }

    /// The view (`views`) where `character`'s templates, sharp or blurred, fit best.
    static func aligned(_ views: [[SIMD16<Float>]], to character: Character) -> [SIMD16<Float>] {
        guard let index = characters.firstIndex(of: character) else { return views[4] }
        func fit(_ view: [SIMD16<Float>]) -> Float {
            max(correlation(view, template: index), correlation(view, template: characters.count + index))
        }
        return views.max { fit($0) < fit($1) }!
    }

    /// A normalised view's correlation with template number `template` (each character sharp, then each blurred).
    private static func correlation(_ view: [SIMD16<Float>], template: Int) -> Float {
        var sum = SIMD16<Float>()
        for k in 0..<vectorsPerTemplate { sum += templates[template * vectorsPerTemplate + k] * view[k] }
        return sum.sum()
    }

    /// The normalised correlation of two cells: `views` of one, the best over its shifts, against the other aligned.
    static func similarity(_ views: [[SIMD16<Float>]], _ aligned: [SIMD16<Float>]) -> Float {
        views.map { view in
            var sum = SIMD16<Float>()
            for k in view.indices { sum += view[k] * aligned[k] }
            return sum.sum()
        }.max()!
    }

    /// How far the left side of the cell's character bows out at mid-height beyond where it stands near the top and
    /// the bottom of the capitals, in samples (a sixteenth of the capital height): about 2 for an `O` or a `Q` and
    /// 1 for a narrower `0`, whose left sides are round, under 0.6 for a `D`, whose stem is straight (the benchmark's
    /// print). The left edge of a row is where its darkness first crosses halfway between the cell's paper and ink,
    /// interpolated, so that a shift, a bolder or a blurred print moves every row alike; nil when a row has no edge.
    func bow(_ cell: MRZGrid.Cell, geometry: LineGeometry) -> Float? {
        let samples = sample(cell, geometry: geometry)
        let columns = Self.width + 2
        let sorted = samples.sorted()
        let paper = sorted[sorted.count / 10], ink = sorted[sorted.count - 1 - sorted.count / 50]
        guard ink - paper > 20 else { return nil }
        let half = (paper + ink) / 2
        // Rows of the (height + 2)-row grid: its capitals span rows 3 to 18.
        func edge(_ row: Int) -> Float? {
            let values = samples[(row * columns)..<((row + 1) * columns)].map { $0 }
            for column in 1..<columns where values[column] >= half {
                let before = values[column - 1]
                guard before < half else { return nil }
                return Float(column - 1) + (half - before) / (values[column] - before)
            }
            return nil
        }
        var ends: [Float] = [], middle: [Float] = []
        for row in [4, 5, 16, 17] {
            guard let x = edge(row) else { return nil }
            ends.append(x)
        }
        for row in [10, 11] {
            guard let x = edge(row) else { return nil }
            middle.append(x)
        }
        return ends.reduce(0, +) / 4 - middle.reduce(0, +) / 2
    }

    /// The template-sized part of a cell's samples (`sample`) shifted by `dx`, `dy` samples (0 to 2; 1 is centred).
    private static func window(_ samples: [Float], dx: Int, dy: Int, into window: inout [Float]) {
        let columns = width + 2
        for row in 0..<height {
            for column in 0..<width { window[row * width + column] = samples[(row + dy) * columns + column + dx] }
        }
    }

    /// Darkness (255 - grey) on a (width + 2) × (height + 2) grid centred on the cell's capitals; 2×2
    /// supersampled when a sample spans more than a pixel and a half.
    private func sample(_ cell: MRZGrid.Cell, geometry: LineGeometry) -> [Float] {
        let columns = Self.width + 2, rows = Self.height + 2
        let length = (cell.pitch.x * cell.pitch.x + cell.pitch.y * cell.pitch.y).squareRoot()
        let across = Point(x: -cell.pitch.y / length * geometry.unit, y: cell.pitch.x / length * geometry.unit)
        let along = Point(x: cell.pitch.x / length * geometry.unit * geometry.aspect, y: cell.pitch.y / length * geometry.unit * geometry.aspect)
        let center = Point(
            x: cell.center.x - cell.pitch.y / length * geometry.offset,
            y: cell.center.y + cell.pitch.x / length * geometry.offset)
        let step = geometry.unit
        let offsets: [Double] = step > 1.5 ? [-0.25, 0.25] : [0]
        var samples = [Float](repeating: 0, count: columns * rows)
        for row in 0..<rows {
            for column in 0..<columns {
                var total: Float = 0
                for oy in offsets {
                    for ox in offsets {
                        let b = Double(row) - Double(rows) / 2 + 0.5 + oy
                        let a = Double(column) - Double(columns) / 2 + 0.5 + ox - geometry.slant * b
                        total +=
                            255
                            - bilinear(
                                center.x + a * along.x + b * across.x,
                                center.y + a * along.y + b * across.y)
                    }
                }
                samples[row * columns + column] = total / Float(offsets.count * offsets.count)
            }
        }
        return samples
    }

    /// Outside the image reads as paper.
    private func bilinear(_ x: Double, _ y: Double) -> Float {
        // A degenerate grid fit (a line of coincident characters) gives NaN, which Int(_:) would trap on.
        guard x.isFinite, y.isFinite, abs(x) < 1e9, abs(y) < 1e9 else { return 255 }
        let x0 = Int(x.rounded(.down)), y0 = Int(y.rounded(.down))
        guard x0 >= 0, y0 >= 0, x0 + 1 < image.width, y0 + 1 < image.height else { return 255 }
        let fx = Float(x - Double(x0)), fy = Float(y - Double(y0))
        let w = image.width
        return image.pixels.withUnsafeBufferPointer { p in
            let top = Float(p[y0 * w + x0]) * (1 - fx) + Float(p[y0 * w + x0 + 1]) * fx
            let bottom = Float(p[(y0 + 1) * w + x0]) * (1 - fx) + Float(p[(y0 + 1) * w + x0 + 1]) * fx
            return top * (1 - fy) + bottom * fy
        }
    }

    private static func vectors(_ values: [Float]) -> [SIMD16<Float>] {
        stride(from: 0, to: values.count, by: 16).map { SIMD16<Float>(values[$0..<($0 + 16)]) }
    }

    private static func normalised(_ values: [Float]) -> [Float] {
        let mean = values.reduce(0, +) / Float(values.count)
        let centred = values.map { $0 - mean }
        let norm = centred.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return norm > 1e-3 ? centred.map { $0 / norm } : centred
    }
}
