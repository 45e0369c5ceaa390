import ImageDecoding
import Testing

@testable import MRZReading

@Suite("Telling 0 from O by the document's own print")
struct DocumentGlyphsTests {
    /// A line of three cells, 64 pixels apart, 4 pixels a template sample; each an elliptic ring 16 samples tall and
    /// `halfWidths[i]` samples wide either side: a print whose `0` (narrow) and `O` (wide) are not the templates'.
    static func page(halfWidths: [Double]) -> (GlyphClassifier, [MRZGrid.Cell]) {
        let width = 64 * halfWidths.count + 64, height = 160, unit = 4.0
        var pixels = [UInt8](repeating: 255, count: width * height)
        var cells: [MRZGrid.Cell] = []
        for (index, halfWidth) in halfWidths.enumerated() {
            let centre = Point(x: Double(64 + 64 * index), y: 80)
            cells.append(MRZGrid.Cell(center: centre, pitch: Point(x: 64, y: 0)))
            for y in 0..<height {
                for x in (Int(centre.x) - 40)..<(Int(centre.x) + 40) {
                    let dx = (Double(x) + 0.5 - centre.x) / unit, dy = (Double(y) + 0.5 - centre.y) / unit
                    // Distance from the ring's middle line, roughly in samples: a stroke 2.4 samples wide.
                    let radius = ((dx / halfWidth) * (dx / halfWidth) + (dy / 8) * (dy / 8)).squareRoot()
                    if abs(radius - 1) * min(halfWidth, 8) < 1.2 { pixels[y * width + x] = 0 }
                }
            }
        }
        return (GlyphClassifier(image: GrayImage(width: width, height: height, packed: pixels, sourceWidth: width, sourceHeight: height)), cells)
    }

    /// A date's `0` (a digit slot), a name's `O` (a letter slot), and the cell judged, in a document number's slot.
    static func glyphs(judged halfWidth: Double, read: Character) -> DocumentGlyphs {
        let (classifier, cells) = page(halfWidths: [4.5, 6.5, halfWidth])
        let geometry = GlyphClassifier.LineGeometry(unit: 4, offset: 0)
        return DocumentGlyphs(
            classifier: classifier, cells: [cells[...]], geometries: [geometry], lines: [["0", "O", read]],
            slots: [[.digit, .letter, .alphanumeric]], scores: [cells.map { classifier.scores($0, geometry: geometry) }],
            mended: [])
    }

    static let judged = MRZCharacterRules.Position(line: 0, index: 2)

    @Test("a cell printed like the document's 0 settles a close call for 0 and contradicts one for O", arguments: [4.6, 6.4])
    func nearestOwnPrint(halfWidth: Double) throws {
        let zero = halfWidth < 5.5
        var asZero = Self.glyphs(judged: halfWidth, read: "0"), asO = Self.glyphs(judged: halfWidth, read: "O")
        let zeroEvidence = asZero.evidence(at: Self.judged, for: "0", against: "O")
        let oEvidence = asO.evidence(at: Self.judged, for: "O", against: "0")
        let forZero = try #require(zeroEvidence), forO = try #require(oEvidence)
        if zero {
            #expect(forZero >= MRZReadingPolicy.standard.documentEvidence, "\(forZero)")
            #expect(forO <= -MRZReadingPolicy.standard.documentEvidence, "\(forO)")
        } else {
            #expect(forO >= MRZReadingPolicy.standard.documentEvidence, "\(forO)")
            #expect(forZero <= -MRZReadingPolicy.standard.documentEvidence, "\(forZero)")
        }
    }

    @Test("where the templates read a print's 0s and Os alike as O, a cell led for O as its 0s are is a 0 by the document")
    func leadsBetweenTheDocuments() throws {
        // A date's 0 and a name's O, and the cell judged, as a score table: this print's 0s lead for O by 0.1, its Os by
        // 0.25 (a blurred print of another foundry's cut). The templates read the cell O by 0.1.
        let (classifier, cells) = Self.page(halfWidths: [4.5, 6.5, 4.5])
        let geometry = GlyphClassifier.LineGeometry(unit: 4, offset: 0)
        let o = GlyphClassifier.characters.firstIndex(of: "O")!, zero = GlyphClassifier.characters.firstIndex(of: "0")!
        var scores = cells.map { classifier.scores($0, geometry: geometry) }
        for (cell, lead) in [(0, 0.1), (1, 0.25), (2, 0.1)] as [(Int, Float)] { scores[cell][o] = scores[cell][zero] + lead }
        func document(read: Character) -> DocumentGlyphs {
            DocumentGlyphs(
                classifier: classifier, cells: [cells[...]], geometries: [geometry], lines: [["0", "O", read]],
                slots: [[.digit, .letter, .alphanumeric]], scores: [scores], mended: [])
        }
        let forZero = try #require(document(read: "0").calibratedEvidence(at: Self.judged, for: "0", against: "O"))
        let forO = try #require(document(read: "O").calibratedEvidence(at: Self.judged, for: "O", against: "0"))
        #expect(abs(forZero - 1) < 1e-4, "\(forZero)")
        #expect(abs(forO + 1) < 1e-4, "\(forO)")
        // Midway between the document's two, it says nothing either way.
        scores[2][o] = scores[2][zero] + 0.175
        #expect(try abs(#require(document(read: "O").calibratedEvidence(at: Self.judged, for: "O", against: "0"))) < 1e-4)
        // A document whose 0s and Os lead alike tells nothing.
        scores[1][o] = scores[1][zero] + 0.11
        #expect(document(read: "O").calibratedEvidence(at: Self.judged, for: "O", against: "0") == nil)
    }

    @Test("without a cell that can only be the look-alike, the two-sided measure says nothing")
    func oneSideOnly() {
        let (classifier, cells) = Self.page(halfWidths: [4.5, 6.5, 4.5])
        let geometry = GlyphClassifier.LineGeometry(unit: 4, offset: 0)
        // The wide ring is read O in a document number's slot by a close call: no reference for an O.
        var scores = cells.map { classifier.scores($0, geometry: geometry) }
        let o = GlyphClassifier.characters.firstIndex(of: "O")!, zero = GlyphClassifier.characters.firstIndex(of: "0")!
        scores[1][o] = scores[1][zero] + 0.01
        var glyphs = DocumentGlyphs(
            classifier: classifier, cells: [cells[...]], geometries: [geometry], lines: [["0", "O", "0"]],
            slots: [[.digit, .alphanumeric, .alphanumeric]], scores: [scores], mended: [])
        #expect(glyphs.evidence(at: Self.judged, for: "0", against: "O") == nil)
    }

    /// Two dates' `0`s (digit slots) ring-drawn `references` samples wide either side, and the cell judged, in a
    /// document number's slot: no cell that can only be `O`. Against the templates, a ring 4 samples wide is a close
    /// call between 0 and O (0 leads by about 0.03), one 5 wide a clear 0 (by about 0.17).
    /// `leaningO`: the two dates' `0`s scored for `O` a hair above `0`, as a blurred print's may.
    static func zerosOnly(_ references: [Double], judged halfWidth: Double, leaningO: Bool = false) -> DocumentGlyphs {
        let (classifier, cells) = page(halfWidths: references + [halfWidth])
        let geometry = GlyphClassifier.LineGeometry(unit: 4, offset: 0)
        var scores = cells.map { classifier.scores($0, geometry: geometry) }
        if leaningO {
            let o = GlyphClassifier.characters.firstIndex(of: "O")!, zero = GlyphClassifier.characters.firstIndex(of: "0")!
            for reference in references.indices { scores[reference][o] = scores[reference][zero] + 0.01 }
        }
        return DocumentGlyphs(
            classifier: classifier, cells: [cells[...]], geometries: [geometry], lines: [["0", "0", "0"]],
            slots: [[.digit, .digit, .alphanumeric]], scores: [scores], mended: [])
    }

    @Test("where the document shows only 0s, a cell that leads for 0 as they do is a 0, one far behind them is not")
    func leadLikeTheDocument() throws {
        let like = try #require(Self.zerosOnly([4.4, 4.5], judged: 4.35).calibratedLead(at: Self.judged, between: "O", and: "0"))
        #expect(like.shown == "0")
        #expect(like.lead >= -MRZReadingPolicy.standard.documentLead, "\(like.lead)")
        // A print whose 0s are clear: a close call is nothing like them.
        let unlike = try #require(Self.zerosOnly([5.0, 5.1], judged: 3.9).calibratedLead(at: Self.judged, between: "0", and: "O"))
        #expect(unlike.shown == "0")
        #expect(unlike.lead <= -MRZReadingPolicy.standard.documentLeadLost, "\(unlike.lead)")
        // A print whose own 0s barely lead for 0 still shows its 0s: a cell printed as they are leads as they do.
        let close = try #require(Self.zerosOnly([4.0, 4.1], judged: 4.05).calibratedLead(at: Self.judged, between: "0", and: "O"))
        #expect(close.shown == "0")
        #expect(close.lead >= -MRZReadingPolicy.standard.documentLead, "\(close.lead)")
        // A print whose own 0s the templates read as O is no reference, nor is a document that shows both (`evidence`).
        #expect(Self.zerosOnly([4.0, 4.1], judged: 4.05, leaningO: true).calibratedLead(at: Self.judged, between: "0", and: "O") == nil)
        #expect(Self.glyphs(judged: 4.6, read: "0").calibratedLead(at: Self.judged, between: "0", and: "O") == nil)
    }

    @Test("where the document shows only 0s, a cell nothing like them is settled for O when read O, contradicted when read 0")
    func farBehindTheDocument() {
        let (classifier, cells) = Self.page(halfWidths: [5.0, 5.1, 3.9])
        let geometry = GlyphClassifier.LineGeometry(unit: 4, offset: 0)
        func verdict(read: Character, against other: Character) -> MRZCharacterRules.Verdict {
            let document = DocumentGlyphs(
                classifier: classifier, cells: [cells[...]], geometries: [geometry], lines: [["0", "0", read]],
                slots: [[.digit, .digit, .alphanumeric]], scores: [cells.map { classifier.scores($0, geometry: geometry) }],
                mended: [])
            return CloseCallJudge(document: document, policy: .standard)(Self.judged, read, other)
        }
        #expect(verdict(read: "O", against: "0") == .settled)
        #expect(verdict(read: "0", against: "O") == .contradicted)
    }

    @Test("where the document shows only 0s, a cell well behind them is settled for O when read O, left open when read 0")
    func wellBehindTheDocument() throws {
        let (classifier, cells) = Self.page(halfWidths: [5.0, 5.1, 4.3])
        let geometry = GlyphClassifier.LineGeometry(unit: 4, offset: 0)
        func document(read: Character) -> DocumentGlyphs {
            DocumentGlyphs(
                classifier: classifier, cells: [cells[...]], geometries: [geometry], lines: [["0", "0", read]],
                slots: [[.digit, .digit, .alphanumeric]], scores: [cells.map { classifier.scores($0, geometry: geometry) }],
                mended: [])
        }
        let policy = MRZReadingPolicy.standard
        let behind = try #require(document(read: "O").calibratedLead(at: Self.judged, between: "O", and: "0"))
        // Between the two bounds: far enough from the document's 0s not to be one, not so far as to show an O itself.
        #expect(behind.shown == "0")
        #expect(behind.lead <= -policy.documentLeadUnlike && behind.lead > -policy.documentLeadLost, "\(behind.lead)")
        #expect(CloseCallJudge(document: document(read: "O"), policy: policy)(Self.judged, "O", "0") == .settled)
        #expect(CloseCallJudge(document: document(read: "0"), policy: policy)(Self.judged, "0", "O") == .open)
    }
}
