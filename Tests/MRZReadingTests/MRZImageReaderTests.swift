import Foundation
import ImageDecoding
import Testing
import VerifyModel

@testable import MRZReading

enum MRZFixtures {
    static let folder = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    struct Entry: Decodable {
        var format: String?
        var lines: [String]
    }

    /// File name -> what it must read as, written by Fixtures/generate.py from its inputs (the ICAO 9303 specimens).
    static let manifest: [String: Entry] = {
        let data = try! Data(contentsOf: folder.appendingPathComponent("manifest.json"))
        return try! JSONDecoder().decode([String: Entry].self, from: data)
    }()

    static func read(_ name: String) throws -> MRZImageReader.Outcome {
        let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
        return try MRZImageReader(referenceDate: Date(timeIntervalSince1970: 1_795_305_600)).read(bytes, decoder: ImageDecoder())
    }
}

@Suite("Reading the MRZ from a page's image")
struct MRZImageReaderTests {
    @Test(
        "each specimen page, card, tilt and rotation reads exactly as printed",
        arguments: MRZFixtures.manifest
            .filter { entry in
                !entry.value.lines.isEmpty
                    && !["bad-check-digit", "unknown-code", "letters-after-name", "zero-o-cancel", "misprint", "digit-in-name", "code-look-alike"]
                        .contains {
                            entry.key.contains($0)
                        }
            }
            .keys.sorted())
    func readsAsPrinted(name: String) throws {
        guard case .read(let reading) = try MRZFixtures.read(name) else {
            Issue.record("\(name): no reading")
            return
        }
        let mrz = reading.mrz
        #expect(mrz.lines == MRZFixtures.manifest[name]!.lines)
        #expect(mrz.format.rawValue == MRZFixtures.manifest[name]!.format)
    }

    @Test("the TD3 specimen gives every field of the data page")
    func td3Fields() throws {
        guard case .read(let reading) = try MRZFixtures.read("td3-specimen.png") else {
            Issue.record("no reading")
            return
        }
        let mrz = reading.mrz
        let fields = mrz.fields
        #expect(fields[.lastName] == "ERIKSSON")
        #expect(fields[.firstName] == "ANNA")
        #expect(fields[.middleName] == "MARIA")
        #expect(fields[.documentNumber] == "L898902C3")
        #expect(fields[.nationality] == "UTO")
        #expect(fields[.country] == "UTO")
        #expect(fields[.dateOfBirth] == "1974-08-12")
        #expect(fields[.sex] == "F")
        #expect(fields[.dateOfExpiry] == "2012-04-15")
        #expect(fields[.personalIdNumber] == "ZE184226B")
        #expect(fields[.mrzData] == MRZFixtures.manifest["td3-specimen.png"]!.lines.joined(separator: "\n"))
    }

    @Test("the TD1 and TD2 specimens give the card's fields")
    func cardFields() throws {
        for name in ["td1-specimen.png", "td2-specimen.png"] {
            guard case .read(let reading) = try MRZFixtures.read(name) else {
                Issue.record("\(name): no reading")
                continue
            }
            let mrz = reading.mrz
            let fields = mrz.fields
            #expect(fields[.documentNumber] == "D23145890", "\(name)")
            #expect(fields[.lastName] == "ERIKSSON" && fields[.firstName] == "ANNA", "\(name)")
            #expect(fields[.dateOfBirth] == "1974-08-12" && fields[.dateOfExpiry] == "2012-04-15", "\(name)")
            #expect(fields[.sex] == "F" && fields[.nationality] == "UTO", "\(name)")
        }
    }

    @Test("a check digit printed wrong is found, not mended: unreadable, naming the field")
    func badCheckDigit() throws {
        guard case .unreadable(let error) = try MRZFixtures.read("td3-bad-check-digit.png") else {
            Issue.record("a page with a wrong check digit was not reported as unreadable")
            return
        }
        #expect(error.field == .dateOfBirth)
        #expect(error.failureCode == .document(.documentCaptureError))
        #expect(!error.message.contains("740812"))
    }

    /// Pages printed clearly with what ICAO 9303 rules out and no check digit covers: a passport's document code
    /// beginning with T; letters after the fillers that end a name (what fillers read as letters look like).
    @Test(
        "what ICAO 9303 rules out where no check digit covers it is refused, naming the field",
        arguments: [("td3-unknown-code.png", "documentCode"), ("td3-letters-after-name.png", "name")])
    func ruledOut(fixture: String, field: String) throws {
        guard case .unreadable(let error) = try MRZFixtures.read(fixture) else {
            Issue.record("\(fixture) was not reported as unreadable")
            return
        }
        #expect(error.field.rawValue == field)
        #expect(error.failureCode == .document(.documentCaptureError))
    }

    /// Specimens printed with data ICAO 9303 does not allow, every check digit valid (as some issuers' specimens are):
    /// not accepted, and what was read is exactly what is printed, with the rule it breaks. A nationality in digits
    /// that have letter look-alikes (2/Z, 8/B, 6/G) reads as those digits, never as the letters.
    @Test(
        "a print that breaks ICAO 9303 with valid check digits is refused with what it reads as printed",
        arguments: [
            ("td3-misprint-february-29.png", MRZField.dateOfBirth, MRZRefusal.Reason.invalidDate),
            ("td1-misprint-zero-birth.png", .dateOfBirth, .invalidDate),
            ("td2-misprint-numeric-nationality.png", .nationality, .digitInLetters),
            ("td2-misprint-numeric-look-alikes.png", .nationality, .digitInLetters)
        ])
    func misprinted(fixture: String, field: MRZField, reason: MRZRefusal.Reason) throws {
        guard case .misprinted(let reading, let refusal) = try MRZFixtures.read(fixture) else {
            Issue.record("\(fixture) was not reported as misprinted")
            return
        }
        #expect(reading.mrz.lines == MRZFixtures.manifest[fixture]!.lines)
        #expect(refusal.field == field)
        #expect(refusal.reason == reason)
        #expect(refusal.failureCode == .document(.documentCaptureError))
    }

    /// A passport whose document code is printed `P2`: the letters' alphabet read it `PZ` (no check digit covers the
    /// code). `I7`, whose digit no letter looks like, reads as printed (`readsAsPrinted`).
    @Test("a document code's digit that a letter looks like is refused, never read as the letter")
    func documentCodeLookAlikeDigit() throws {
        guard case .unreadable(let refusal) = try MRZFixtures.read("td3-code-look-alike-digit.png") else {
            Issue.record("a document code printed P2 was not reported as unreadable")
            return
        }
        #expect(refusal.field == .documentCode)
        #expect(refusal.reason == .uncheckedCloseCall)
    }

    /// A given name printed with a digit in it: the reader before read the digit as the letter its slot allowed
    /// (`MAR4A` came back `MARAA`, every check digit valid, since none covers the name).
    @Test("a digit printed in a name is refused, never read as a letter")
    func digitInName() throws {
        guard case .unreadable(let refusal) = try MRZFixtures.read("td3-digit-in-name.png") else {
            Issue.record("a name with a digit in it was not reported as unreadable")
            return
        }
        #expect(refusal.field == .name)
        #expect(refusal.reason == .digitInLetters)
        #expect(!refusal.message.contains("MAR"))
    }

    /// A zero-filled number in a cut whose `0` and `O` are nearly one glyph: two of its zeros read `O` (one settled so by
    /// the document's own cells, one mended) cancel in the check digit. The reader before returned `0000O0O00`.
    @Test("zeros read as O that cancel in the check digit, where the print's own 0 and O barely differ, are refused")
    func zerosAlikeInPrint() throws {
        guard case .unreadable(let error) = try MRZFixtures.read("td1-zero-o-cancel.png") else {
            Issue.record("a zero-filled number whose 0s and Os the print barely tells apart was not reported as unreadable")
            return
        }
        #expect(error.field == .documentNumber)
        #expect(error.failureCode == .document(.documentCaptureError))
        #expect(!error.message.contains("0000"))
    }

    @Test("a reading says how surely each field was read, what was mended and which state codes are unlisted")
    func readingReport() throws {
        guard case .read(let reading) = try MRZFixtures.read("td3-specimen.png") else {
            Issue.record("no reading")
            return
        }
        #expect(
            Set(reading.confidence.keys) == [
                "documentCode", "issuingState", "name", "documentNumber", "nationality",
                "dateOfBirth", "sex", "dateOfExpiry", "personalIdNumber", "composite"
            ])
        // A clean specimen: every field's weakest character well ahead of the next, nothing mended, UTO listed.
        #expect(reading.confidence.values.allSatisfy { $0.score > 0.8 && $0.margin > 0.02 }, "\(reading.confidence)")
        #expect(reading.repairs.isEmpty && reading.unknownStates.isEmpty)
        // The same page at half and double the size reads the same.
        for name in ["td3-scale-half.png", "td3-scale-double.jpg"] {
            guard case .read(let scaled) = try MRZFixtures.read(name) else {
                Issue.record("\(name): no reading")
                continue
            }
            #expect(scaled.mrz == reading.mrz, "\(name)")
        }
    }

    @Test("a page without an MRZ reads nothing")
    func noMRZ() throws {
        guard case .notFound = try MRZFixtures.read("no-mrz.jpg") else {
            Issue.record("something was read on a page without an MRZ")
            return
        }
    }

    /// The TD1 specimen read from a grid whose names line has its first `shifted` cells half a pitch to the right, as a
    /// line located with a wrong start reads: its names, which no check digit covers, come out as other letters.
    static func namesLineHalfACellOff(shifted: Int, reader: MRZImageReader) throws -> Result<MRZReading, MRZImageReader.Unread> {
        let bytes = [UInt8](try Data(contentsOf: MRZFixtures.folder.appendingPathComponent("td1-specimen.png")))
        let image = try ImageDecoder().decode(bytes)
        let classifier = GlyphClassifier(image: image)
        let grids = MRZLocator.locate(InkComponents.find(in: image, window: MRZImageReader.inkWindow(image)))
        var grid = try #require(
            grids.first { grid in
                guard case .success(let reading) = reader.reading(grid, classifier: classifier) else { return false }
                return reading.mrz.lines == MRZFixtures.manifest["td1-specimen.png"]!.lines
            })
        for index in 0..<shifted { grid.lines[2][index].center.x += grid.lines[2][index].pitch.x / 2 }
        return reader.reading(grid, classifier: classifier)
    }

    @Test(
        "of the band as it is and upside down, the orientation whose capitals fit the templates is the one read, and reading every grid reads no other",
        arguments: ["td3-specimen.png", "td3-upside-down.png", "td1-specimen.png", "td1-rotated-90.png", "td2-specimen.png"])
    func orientationGate(name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: MRZFixtures.folder.appendingPathComponent(name)))
        let image = try ImageDecoder().decode(bytes)
        let classifier = GlyphClassifier(image: image)
        let grids = MRZLocator.locate(InkComponents.find(in: image, window: MRZImageReader.inkWindow(image)))
        let fits = grids.compactMap { classifier.uprightGeometry(of: Array($0.lines[0].dropFirst().dropLast()))?.fit }.sorted(by: >)
        try #require(fits.count >= 2, "\(name): \(grids.count) grids")
        // The band taken upside down fits clearly worse: it is not read further.
        #expect(fits[0] - fits[1] > MRZReadingPolicy.standard.orientationMargin, "\(name): first lines fit \(fits)")
        let everyGrid = try MRZImageReader(referenceDate: Date(timeIntervalSince1970: 1_795_305_600), policy: MRZReadingPolicy(orientationMargin: 2))
        guard case .read(let all) = try everyGrid.read(bytes, decoder: ImageDecoder()), case .read(let gated) = try MRZFixtures.read(name) else {
            Issue.record("\(name): no reading")
            return
        }
        #expect(gated.mrz.lines == MRZFixtures.manifest[name]!.lines)
        #expect(all.mrz.lines == gated.mrz.lines)
    }

    @Test("a line read half a cell off, its cells between two characters, is refused naming the field")
    func strayCells() throws {
        let reader = MRZImageReader(referenceDate: Date(timeIntervalSince1970: 1_795_305_600))
        let result = try Self.namesLineHalfACellOff(shifted: 14, reader: reader)
        guard case .failure(let unread) = result else {
            Issue.record("read: \(result)")
            return
        }
        #expect(unread.refusal.field == .name)
        #expect(unread.refusal.message == "MRZ name: a character does not look like an OCR-B character")
    }
}
