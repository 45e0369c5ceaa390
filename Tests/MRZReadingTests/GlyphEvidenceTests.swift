import ImageDecoding
import Testing

@testable import MRZReading

@Suite("Telling two look-alikes apart by a stroke only one of them has")
struct GlyphEvidenceTests {
    /// A page with one OCR-B character drawn from its template, 4 pixels a sample, centred on (80, 80).
    static func page(_ character: Character) throws -> GrayImage {
        let index = try #require(GlyphClassifier.characters.firstIndex(of: character))
        return page(drawn: OCRBGlyphs.darkness[index])
    }

    /// A page with `template` (darkness on the templates' grid) drawn as `page(_:)` draws a character.
    static func page(drawn template: [UInt8]) -> GrayImage {
        let size = 160, unit = 4, left = 48, top = 40
        var pixels = [UInt8](repeating: 255, count: size * size)
        for row in 0..<OCRBGlyphs.height {
            for column in 0..<OCRBGlyphs.width {
                let grey = 255 - template[row * OCRBGlyphs.width + column]
                for y in 0..<unit {
                    for x in 0..<unit { pixels[(top + row * unit + y) * size + left + column * unit + x] = grey }
                }
            }
        }
        return GrayImage(width: size, height: size, packed: pixels, sourceWidth: size, sourceHeight: size)
    }

    static let cell = MRZGrid.Cell(center: Point(x: 80, y: 80), pitch: Point(x: 64, y: 0))
    static let geometry = GlyphClassifier.LineGeometry(unit: 4, offset: 0)

    @Test("a Q's tail: paper in an O, ink in a Q; 0 and O, which differ in width only, are not measured")
    func tail() throws {
        let o = GlyphClassifier(image: try Self.page("O")), q = GlyphClassifier(image: try Self.page("Q"))
        let oAsO = try #require(o.evidence(Self.cell, geometry: Self.geometry, for: "O", against: "Q"))
        let qAsO = try #require(q.evidence(Self.cell, geometry: Self.geometry, for: "O", against: "Q"))
        let qAsQ = try #require(q.evidence(Self.cell, geometry: Self.geometry, for: "Q", against: "O"))
        #expect(oAsO >= MRZReadingPolicy.standard.settledEvidence, "an O's counter has no tail: \(oAsO)")
        #expect(qAsO <= -MRZReadingPolicy.standard.settledEvidence, "a Q read as O is contradicted by its tail: \(qAsO)")
        #expect(qAsQ >= MRZReadingPolicy.standard.settledEvidence, "\(qAsQ)")
        #expect(o.evidence(Self.cell, geometry: Self.geometry, for: "0", against: "O") == nil)
    }

    @Test(
        "look-alikes whose strokes lie close together are told sample by sample; 0, O and D, which differ in width, never",
        arguments: [("5", "S"), ("8", "B"), ("2", "Z"), ("G", "Q"), ("H", "M")] as [(Character, Character)])
    func closeStrokes(a: Character, b: Character) throws {
        let printedA = GlyphClassifier(image: try Self.page(a)), printedB = GlyphClassifier(image: try Self.page(b))
        let aAsA = try #require(printedA.evidence(Self.cell, geometry: Self.geometry, for: a, against: b))
        let bAsA = try #require(printedB.evidence(Self.cell, geometry: Self.geometry, for: a, against: b))
        #expect(aAsA >= MRZReadingPolicy.standard.settledEvidence, "\(a) read \(a): \(aAsA)")
        #expect(bAsA <= -MRZReadingPolicy.standard.settledEvidence, "\(b) read \(a): \(bAsA)")
        let d = GlyphClassifier(image: try Self.page("D"))
        #expect(d.evidence(Self.cell, geometry: Self.geometry, for: "D", against: "O") == nil)
        #expect(d.evidence(Self.cell, geometry: Self.geometry, for: "D", against: "0") == nil)
    }

    /// An `E` printed with hairline bars: the `L` template (its stem and bottom bar), and the `E`'s top and middle bars
    /// one sample high, a row above where the `E` template has them (a print a little taller than the templates').
    static func hairlineE() throws -> [UInt8] {
        let e = OCRBGlyphs.darkness[try #require(GlyphClassifier.characters.firstIndex(of: "E"))]
        var drawn = OCRBGlyphs.darkness[try #require(GlyphClassifier.characters.firstIndex(of: "L"))]
        let width = OCRBGlyphs.width
        // The rows of the E's three bars, where they cross the middle of the cell.
        let barRows = (0..<OCRBGlyphs.height).filter { e[$0 * width + width / 2] > 170 }
        let starts = barRows.filter { !barRows.contains($0 - 1) }
        try #require(starts.count == 3, "the E template's bars: \(barRows)")
        for start in starts.prefix(2) {
            for column in 0..<width where e[start * width + column] > 170 { drawn[(start - 1) * width + column] = 200 }
        }
        return drawn
    }

    @Test("an E with hairline bars a row off the template's is not taken for an L: its bars are looked for a row around")
    func hairlineBars() throws {
        let e = GlyphClassifier(image: Self.page(drawn: try Self.hairlineE()))
        let l = GlyphClassifier(image: try Self.page("L"))
        let eAsL = try #require(e.evidence(Self.cell, geometry: Self.geometry, for: "L", against: "E"))
        let lAsL = try #require(l.evidence(Self.cell, geometry: Self.geometry, for: "L", against: "E"))
        #expect(eAsL < MRZReadingPolicy.standard.settledEvidence, "the E's bars leave an L unsettled: \(eAsL)")
        #expect(lAsL >= MRZReadingPolicy.standard.settledEvidence, "an L has no bars there: \(lAsL)")
    }

    @Test("an O's and a Q's left side bows out beyond the bound, a D's stem does not")
    func roundOrStem() throws {
        let bows = try ["O", "Q", "D"].map { character in
            try #require(GlyphClassifier(image: try Self.page(character)).bow(Self.cell, geometry: Self.geometry))
        }
        #expect(bows[0] >= MRZReadingPolicy.standard.roundBow, "O: \(bows[0])")
        #expect(bows[1] >= MRZReadingPolicy.standard.roundBow, "Q: \(bows[1])")
        #expect(bows[2] < 0.6, "D: \(bows[2])")
    }
}
