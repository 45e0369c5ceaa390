import ImageDecoding

/// Scores an MRZ character cell against the OCR-B templates: the cell is resampled to the templates' grid (one
/// sample per sixteenth of a pitch, along the line and across it, so tilt and perspective are undone), and each
/// template's normalised correlation with it, the best over shifts of one sample, is its score (-1 to 1).
struct GlyphClassifier {
    static let characters = OCRBGlyphs.characters
    private static let width = OCRBGlyphs.width, height = OCRBGlyphs.height
    /// Each template with mean 0 and unit norm.
    private static let templates: [[Float]] = OCRBGlyphs.darkness.map { normalised($0.map { Float($0) }) }

    let image: GrayImage

    func scores(_ cell: MRZGrid.Cell) -> [Float] {
        let samples = sample(cell)
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

    /// Darkness (255 - grey) on a (width + 2) × (height + 2) grid centred on the cell; 2×2 supersampled when a
    /// sample spans more than a pixel and a half.
    private func sample(_ cell: MRZGrid.Cell) -> [Float] {
        let columns = Self.width + 2, rows = Self.height + 2
        let along = Point(x: cell.pitch.x / Double(Self.width), y: cell.pitch.y / Double(Self.width))
        let across = Point(x: -along.y, y: along.x)
        let step = (along.x * along.x + along.y * along.y).squareRoot()
        let offsets: [Double] = step > 1.5 ? [-0.25, 0.25] : [0]
        var samples = [Float](repeating: 0, count: columns * rows)
        for row in 0..<rows {
            for column in 0..<columns {
                var total: Float = 0
                for oy in offsets {
                    for ox in offsets {
                        let a = Double(column) - Double(columns) / 2 + 0.5 + ox
                        let b = Double(row) - Double(rows) / 2 + 0.5 + oy
                        total += 255 - bilinear(cell.center.x + a * along.x + b * across.x,
                                                cell.center.y + a * along.y + b * across.y)
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
