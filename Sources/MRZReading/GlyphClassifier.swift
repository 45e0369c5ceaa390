import ImageDecoding

/// Scores an MRZ character cell against the OCR-B templates: the cell is resampled to the templates' grid (one
/// sample per sixteenth of the line's capital height, along the line and across it, so tilt and perspective are
/// undone), and each template's normalised correlation with it, the best over shifts of one sample, is its score
/// (-1 to 1).
struct GlyphClassifier {
    /// A line's capitals: their height and where their middle is, measured on the line itself (printers set
    /// capitals of 2.0 to 2.4 mm on the 2.54 mm pitch).
    struct LineGeometry {
        /// Pixels per template sample: a sixteenth of the capital height.
        var unit: Double
        /// From the cells' centres to the capitals' middle, across the line, in pixels.
        var offset: Double
    }

    static let characters = OCRBGlyphs.characters
    private static let width = OCRBGlyphs.width, height = OCRBGlyphs.height
    /// Each template with mean 0 and unit norm.
    private static let templates: [[Float]] = OCRBGlyphs.darkness.map { normalised($0.map { Float($0) }) }

    let image: GrayImage

    /// The darkness across the line, summed along it, one row per sixteenth of a pitch over ±0.8 pitch (the next
    /// line's capitals start farther out): the rows where it stands clearly above the paper are the capitals.
    func geometry(of line: [MRZGrid.Cell]) -> LineGeometry? {
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
              profile[peak] > paper * 1.2 + 1 else { return nil }
        let threshold = paper + 0.3 * (profile[peak] - paper)
        var top = peak, bottom = peak
        while top > 0, profile[top - 1] > threshold { top -= 1 }
        while bottom < rows - 1, profile[bottom + 1] > threshold { bottom += 1 }
        let pitch = MRZLocator.median(line.map { ($0.pitch.x * $0.pitch.x + $0.pitch.y * $0.pitch.y).squareRoot() }) / 16
        let measured = LineGeometry(unit: Double(bottom - top + 1) * pitch / 16,
                                    offset: (Double(top + bottom) / 2 - Double(rows / 2)) * pitch)
        // The profile's edges are soft (round letters, blur): the size and height that fit the templates best, on
        // a sample of the line's cells.
        let probe = stride(from: 0, to: line.count, by: max(1, line.count / 12)).map { line[$0] }
        var best = (score: -Float.infinity, geometry: measured)
        for factor in [0.9, 0.95, 1.0, 1.05, 1.1] {
            for shift in [-0.5, 0.0, 0.5] {
                let geometry = LineGeometry(unit: measured.unit * factor, offset: measured.offset + shift * measured.unit)
                let score = probe.reduce(Float(0)) { $0 + (scores($1, geometry: geometry).max() ?? 0) }
                if score > best.score { best = (score, geometry) }
            }
        }
        return best.geometry
    }

    func scores(_ cell: MRZGrid.Cell, geometry: LineGeometry) -> [Float] {
        let samples = sample(cell, geometry: geometry)
        let columns = Self.width + 2
        var best = [Float](repeating: -1, count: Self.templates.count)
        var window = [Float](repeating: 0, count: Self.width * Self.height)
        for dy in 0...2 {
            for dx in 0...2 {
                for row in 0..<Self.height {
                    for column in 0..<Self.width { window[row * Self.width + column] = samples[(row + dy) * columns + column + dx] }
                }
                let normalisedWindow = Self.normalised(window)
                for (index, template) in Self.templates.enumerated() {
                    var sum: Float = 0
                    for k in 0..<template.count { sum += template[k] * normalisedWindow[k] }
                    best[index] = max(best[index], sum)
                }
            }
        }
        return best
    }

    /// Darkness (255 - grey) on a (width + 2) × (height + 2) grid centred on the cell's capitals; 2×2
    /// supersampled when a sample spans more than a pixel and a half.
    private func sample(_ cell: MRZGrid.Cell, geometry: LineGeometry) -> [Float] {
        let columns = Self.width + 2, rows = Self.height + 2
        let length = (cell.pitch.x * cell.pitch.x + cell.pitch.y * cell.pitch.y).squareRoot()
        let along = Point(x: cell.pitch.x / length * geometry.unit, y: cell.pitch.y / length * geometry.unit)
        let across = Point(x: -along.y, y: along.x)
        let center = Point(x: cell.center.x - cell.pitch.y / length * geometry.offset,
                           y: cell.center.y + cell.pitch.x / length * geometry.offset)
        let step = geometry.unit
        let offsets: [Double] = step > 1.5 ? [-0.25, 0.25] : [0]
        var samples = [Float](repeating: 0, count: columns * rows)
        for row in 0..<rows {
            for column in 0..<columns {
                var total: Float = 0
                for oy in offsets {
                    for ox in offsets {
                        let a = Double(column) - Double(columns) / 2 + 0.5 + ox
                        let b = Double(row) - Double(rows) / 2 + 0.5 + oy
                        total += 255 - bilinear(center.x + a * along.x + b * across.x,
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

    private static func normalised(_ values: [Float]) -> [Float] {
        let mean = values.reduce(0, +) / Float(values.count)
        let centred = values.map { $0 - mean }
        let norm = centred.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return norm > 1e-3 ? centred.map { $0 / norm } : centred
    }
}
