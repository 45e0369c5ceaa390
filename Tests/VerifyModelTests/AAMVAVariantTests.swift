import AAMVAFixtures
import Foundation
import Testing

@testable import VerifyModel

/// Every AAMVA version and the variants real issuers and transports ship (issue 26's classes), each with the
/// exact fields written out in `AAMVAFixtures`.
@Suite("AAMVA versions and issuer variants")
struct AAMVAVariantTests {
    func fields(_ text: String) throws -> [DocumentKey: String] {
        var fields = try AAMVARecord(parsing: text).fields.values
        #expect(fields.removeValue(forKey: .barcode) == text)
        return fields
    }

    @Test("each version and variant reads to exactly its fields", arguments: AAMVAFixtures.all)
    func fixture(_ fixture: AAMVAFixture) throws {
        #expect(try fields(fixture.text) == fixture.expected)
    }

    @Test(
        "damage in transit changes nothing: leading space or newline, | separators, C1 bytes, CR LF, a trimmed final CR (class 3)",
        arguments: AAMVAFixtures.all, [AAMVATransport.leadingSpace, .leadingNewline, .pipes, .c1AroundSeparators, .crlf, .finalCRTrimmed])
    func transport(_ fixture: AAMVAFixture, _ transport: AAMVATransport) throws {
        let text = transport.apply(fixture.text)
        #expect(AAMVARecord.hasHeader(text))
        #expect(try fields(text) == fixture.expected)
    }

    @Test(
        "separators lost on a single line are recovered where the directory's length makes the split unique (class 3)",
        arguments: ["version 10", "version 5", "version 01, ANSI header, DAA full name with commas, CCYYMMDD dates"])
    func separatorsStripped(_ name: String) throws {
        let fixture = try #require(AAMVAFixtures.all.first { $0.name == name })
        let text = AAMVATransport.separatorsStripped.apply(fixture.text)
        #expect(!text.contains("\n"))
        let record = try AAMVARecord(parsing: text)
        #expect(try fields(text) == fixture.expected)
        #expect(record.warnings.contains("AAMVA data: element separators were lost; the elements were split on their ids"))
    }

    @Test("separators lost: every fixture reads exactly right or is refused, never a wrong identity", arguments: AAMVAFixtures.all)
    func separatorsStrippedNeverWrong(_ fixture: AAMVAFixture) {
        let text = AAMVATransport.separatorsStripped.apply(fixture.text)
        do {
            let read = try fields(text)
            // What is read must be what the card says; a field may only be missing where the split refused it.
            #expect(read == fixture.expected, "\(fixture.name)")
        } catch let error as AAMVAError {
            #expect(error.message.hasPrefix("AAMVA"), "\(fixture.name): \(error.message)")
        } catch {
            Issue.record("\(fixture.name): \(error)")
        }
    }

    @Test("a run-together record whose directory length does not match cannot be split: refused")
    func separatorsStrippedWithoutLength() throws {
        let fixture = try #require(AAMVAFixtures.all.first { $0.name == "version 10" })
        let stripped = AAMVATransport.separatorsStripped.apply(fixture.text)
        // The DL entry's length (the four digits after its offset) made too large to give an element count.
        let directory = try #require(stripped.range(of: "DL0041"))
        let broken = stripped.replacingCharacters(in: directory.upperBound..<stripped.index(directory.upperBound, offsetBy: 4), with: "9999")
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: broken) }
        #expect(error?.message == "AAMVA data: element separators were lost and the directory gives no length to split them by")
        // Some separators kept and others lost: the mandatory elements stand inside other values.
        let partly = fixture.text.replacingOccurrences(of: "\nDBB", with: "DBB")
        let refused = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: partly) }
        #expect(refused?.message == "AAMVA data: element separators were lost (DBB inside other elements)")
    }

    @Test("ZIP codes of other lengths become 5 digits or ZIP+4 (class 4)", arguments: AAMVAFixtures.zipCodes)
    func zipCodes(_ raw: String, _ zip: String) throws {
        let text = AAMVAPayload(elements: [("DAQ", "Z1"), ("DCS", "ZIP"), ("DBB", "01011980"), ("DAK", raw)]).text
        #expect(try fields(text)[.addressZip] == zip)
    }

    @Test(
        "DAA full names: commas or $, suffixes in their place, spaces on version-01 cards (class 5)",
        arguments: [
            ("JOHNSON,JACK,,3RD", "JOHNSON", "JACK", nil, "3RD"),
            ("SMITH$JANE$Q", "SMITH", "JANE", "Q", nil),
            ("NOVAK,PETER,JR", "NOVAK", "PETER", nil, "JR"),
            ("NOVAK,PETER,V", "NOVAK", "PETER", "V", nil),
            ("JOHN P SMITH", "SMITH", "JOHN", "P", nil),
            ("JOHN SMITH II", "SMITH", "JOHN", nil, "II"),
            ("ROBINS ,ANN ", "ROBINS", "ANN", nil, nil)
        ] as [(String, String, String?, String?, String?)])
    func fullNames(_ full: String, _ last: String, _ first: String?, _ middle: String?, _ suffix: String?) throws {
        let text = AAMVAPayload(version: 1, elements: [("DAQ", "N1"), ("DAA", full), ("DBB", "19800101")]).text
        let read = try fields(text)
        #expect(read[.lastName] == last)
        #expect(read[.firstName] == first)
        #expect(read[.middleName] == middle)
        #expect(read[.additionalNameInfo] == suffix)
    }

    @Test("warnings name what was dropped or repaired, never a value")
    func warnings() throws {
        let garza = try #require(AAMVAFixtures.all.first { $0.name.contains("unreadable optional element") })
        #expect(try AAMVARecord(parsing: garza.text).reading().warnings == ["AAMVA DBD (date of issue) is not a valid date: dropped"])
        let alberta = try #require(AAMVAFixtures.all.first { $0.name.contains("letters in a subfile offset") })
        #expect(
            try AAMVARecord(parsing: alberta.text).warnings
                == ["AAMVA header: a subfile offset or length is not 4 digits; the subfile was found by its type"])
        let spaced = AAMVATransport.leadingSpace.apply(AAMVAFixtures.expired.text)
        #expect(try AAMVARecord(parsing: spaced).warnings == ["AAMVA data: whitespace or control bytes before the '@' were ignored"])
    }

    @Test("data cut inside its last element drops that element rather than report it shortened")
    func truncatedLastElement() throws {
        // The document number last, cut after three of its characters.
        let text = AAMVAPayload(elements: [("DCS", "CUT"), ("DBB", "01011980"), ("DAQ", "D1234567")]).text
        let position = try #require(text.range(of: "DAQD12"))
        let cut = String(text[..<position.upperBound])
        let record = try AAMVARecord(parsing: cut)
        #expect(record.elements["DAQ"] == nil)
        #expect(record.warnings == ["AAMVA data ends before its directory says: the last element (DAQ) was dropped"])
        #expect(try record.fields[DocumentKey.lastName] == "CUT")
    }

    @Test("magnetic-stripe track text (British Columbia's PDF417) is refused with its own message (class 10)")
    func magneticStripe() {
        #expect(AAMVARecord.isMagneticStripe(AAMVAFixtures.magneticStripe))
        #expect(!AAMVARecord.hasHeader(AAMVAFixtures.magneticStripe))
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: AAMVAFixtures.magneticStripe) }
        #expect(error?.message.hasPrefix("magnetic-stripe track data, not AAMVA DL/ID elements") == true)
        #expect(error?.message.contains("SPECIMEN") == false)
    }
}
