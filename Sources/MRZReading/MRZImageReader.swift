import Foundation
import ImageDecoding
import VerifyModel

/// Reads the MRZ of a passport page or an ID card from its image: finds the band in any position, tilt or
/// rotation (`MRZLocator`), reads each character cell against OCR-B templates (`GlyphClassifier`), and settles
/// look-alikes by each field's alphabet and check digit (`MRZCharacterRules`). Only a reading whose every check
/// digit holds is returned as read.
public struct MRZImageReader: Sendable {
    public enum Outcome: Sendable {
        /// The MRZ, its lines as printed.
        case read(MRZ)
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
    public var referenceDate: Date

    public init(referenceDate: Date = Date()) {
        self.referenceDate = referenceDate
    }

    /// Decodes `bytes` as the search image (reduced) and, when needed, at full size to read the band.
    public func read(_ bytes: [UInt8], decoder: ImageDecoder) throws(ImageDecodingError) -> Outcome {
        let search = try decoder.decode(bytes, targetPixels: searchPixels)
        var full: GrayImage?
        return try read(search) { () throws(ImageDecodingError) -> GrayImage in
            if let full { return full }
            let decoded = try decoder.decode(bytes)
            full = decoded
            return decoded
        }
    }

    /// `fullResolution` is asked for only when `image` is a reduced decode and its characters are too small.
    public func read<Failure: Error>(_ image: GrayImage, fullResolution: () throws(Failure) -> GrayImage) throws(Failure) -> Outcome {
        let window = min(61, max(15, max(image.width, image.height) / 40))
        let grids = MRZLocator.locate(InkComponents.find(in: image, window: window))
        guard !grids.isEmpty else { return .notFound }
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
        var read: (confidence: Float, mrz: MRZ)?
        var best: Unread?
        for grid in grids.prefix(6) {
            let scaled = scale == 1 ? grid : grid.scaled(by: scale)
            switch reading(scaled, classifier: classifier) {
            case .success(let reading) where reading.confidence >= minimumConfidence:
                if reading.confidence > read?.confidence ?? 0 { read = reading }
            case .success(let reading):
                if reading.confidence > best?.confidence ?? 0 {
                    best = Unread(confidence: reading.confidence,
                                  error: MRZError(field: "layout", message: "MRZ characters too faint or blurred to read"))
                }
            case .failure(let failure):
                if failure.confidence > best?.confidence ?? 0 { best = failure }
            }
        }
        if let read { return .read(read.mrz) }
        // A grid whose characters mostly look like OCR-B is an MRZ that could not be read; anything less is not one.
        if let best, best.confidence >= minimumConfidence { return .unreadable(best.error) }
        return .notFound
    }

    private struct Unread: Error {
        var confidence: Float
        var error: MRZError
    }

    private func reading(_ grid: MRZGrid, classifier: GlyphClassifier) -> Result<(confidence: Float, mrz: MRZ), Unread> {
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
            let start = GlyphClassifier.LineGeometry(unit: surest.geometry.unit, offset: geometries[index].geometry.offset)
            let again = classifier.refined(Array(grid.lines[index].dropFirst().dropLast()), around: start, factors: [1],
                                           shifts: stride(from: -4.0, through: 4.0, by: 0.5).map { $0 })
            if again.fit > geometries[index].fit { geometries[index] = again }
        }
        for (line, geometry) in zip(grid.lines, geometries.map(\.geometry)) {
            let cells = line.map { classifier.scores($0, geometry: geometry) }
            // The window of the format's length that reads best: the grid may be a cell off at either end.
            let best = (0...2).max { a, b in
                cells[a..<(a + count)].reduce(0) { $0 + ($1.max() ?? 0) } < cells[b..<(b + count)].reduce(0) { $0 + ($1.max() ?? 0) }
            }!
            scores.append(Array(cells[best..<(best + count)]))
        }
        // A visa shares a passport's geometry; its document code `V` (first line, all letters in both) tells it,
        // and its second line's optional data is read as such, not as a personal number and check digits.
        let firstCode = MRZCharacterRules.best(scores[0][0], slot: .letter).character
        let format: MRZ.Format = switch (grid.format, firstCode) {
        case (.td3, "V"): .mrvA
        case (.td2, "V"): .mrvB
        default: grid.format
        }
        let slots = MRZCharacterRules.slots(format)
        var lines: [[Character]] = []
        var total: Float = 0
        for (line, lineScores) in scores.enumerated() {
            lines.append(lineScores.enumerated().map { index, cell in
                let best = MRZCharacterRules.best(cell, slot: slots[line][index])
                total += best.score
                return best.character
            })
        }
        MRZCharacterRules.settleFillers(&lines, scores: scores, slots: slots)
        MRZCharacterRules.settleStates(&lines, scores: scores, format: format)
        let confidence = total / Float(lines.reduce(0) { $0 + $1.count })
        let referenceDate = referenceDate
        let parse = { (lines: [[Character]]) throws(MRZError) -> MRZ in
            try MRZ(parsing: lines.map { String($0) }.joined(separator: "\n"), referenceDate: referenceDate)
        }
        switch MRZCharacterRules.repair(lines, scores: scores, format: format, parse: parse) {
        case .success(let mrz):
            if let position = MRZCharacterRules.ambiguity(in: mrz, scores: scores, parse: parse) {
                return .failure(Unread(confidence: confidence, error: MRZError(
                    field: "layout", message: "MRZ line \(position.line + 1), position \(position.index + 1): two characters read alike and both check")))
            }
            return .success((confidence, mrz))
        case .failure(let error):
            return .failure(Unread(confidence: confidence, error: error))
        }
    }
}
