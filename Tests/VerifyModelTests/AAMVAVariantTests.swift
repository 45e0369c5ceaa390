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
        "separators lost on a single line are restored where every split on the element ids gives the same identity (class 3)",
        arguments: ["version 10", "version 5", "version 01, ANSI header, DAA full name with commas, CCYYMMDD dates"])
    func separatorsStripped(_ name: String) throws {
        let fixture = try #require(AAMVAFixtures.all.first { $0.name == name })
        let text = AAMVATransport.separatorsStripped.apply(fixture.text)
        #expect(!text.contains("\n"))
        let record = try AAMVARecord(parsing: text)
        #expect(try fields(text) == fixture.expected)
        #expect(record.warnings.contains("separatorsRestored: element separators were lost; the elements were split on their ids"))
        #expect(AAMVARepair.named(in: record.warnings) == [.separatorsRestored])
    }

    @Test("separators lost: every fixture reads its identity exactly or is refused; other fields are right or absent", arguments: AAMVAFixtures.all)
    func separatorsStrippedNeverWrong(_ fixture: AAMVAFixture) {
        let text = AAMVATransport.separatorsStripped.apply(fixture.text)
        do {
            let read = try fields(text)
            let identity: [DocumentKey] = [.lastName, .firstName, .middleName, .dateOfBirth, .dateOfExpiry, .documentNumber]
            for key in identity { #expect(read[key] == fixture.expected[key], "\(fixture.name): \(key.rawValue)") }
            // An element two splits read differently is dropped, never reported with either value.
            let different = read.filter { fixture.expected[$0.key] != $0.value }
            #expect(different.isEmpty, "\(fixture.name): \(different.keys.map(\.rawValue).sorted())")
        } catch let error as AAMVAError {
            #expect(error.message.hasPrefix("AAMVA"), "\(fixture.name): \(error.message)")
        } catch {
            Issue.record("\(fixture.name): \(error)")
        }
    }

    @Test("a run-together record is split only when shown whole: a subfile after it, or the directory's length")
    func separatorsStrippedWhole() throws {
        let fixture = try #require(AAMVAFixtures.all.first { $0.name == "version 10" })
        let stripped = AAMVATransport.separatorsStripped.apply(fixture.text)
        // The DL entry's length (the four digits after its offset) made wrong: the ZX subfile after it still shows
        // the run whole, as real captures need (anonymised or re-encoded records carry such lengths).
        let directory = try #require(stripped.range(of: "DL0041"))
        let lengthRange = directory.upperBound..<stripped.index(directory.upperBound, offsetBy: 4)
        let wrongLength = stripped.replacingCharacters(in: lengthRange, with: "9999")
        #expect(try fields(wrongLength) == fixture.expected)
        // Without a subfile after it and with a length that is not its own, it may be cut: refused.
        var alone = AAMVAPayload(
            version: 10,
            elements: AAMVAFixtures.current(
                number: "T64235789", last: "SAMPLE", first: "MICHAEL", middle: "JOHN", birth: "06061986", expiry: "06062030",
                issue: "06062022"))
        alone.jurisdiction = nil
        let unshown = AAMVATransport.separatorsStripped.apply(alone.text)
        #expect(try fields(unshown)[.documentNumber] == "T64235789")
        let length = try #require(unshown.range(of: "DL0031"))
        let cutLength = unshown.replacingCharacters(
            in: length.upperBound..<unshown.index(length.upperBound, offsetBy: 4), with: "9999")
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: cutLength) }
        #expect(error?.message.hasSuffix("(nothing shows the run whole: no subfile follows it and the directory gives another length)") == true)
        // Some separators kept and others lost: the mandatory elements stand inside other values.
        let partly = fixture.text.replacingOccurrences(of: "\nDBB", with: "DBB")
        let refused = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: partly) }
        #expect(refused?.message == "AAMVA data: element separators were lost (DBB inside other elements)")
    }

    @Test("a name holding an id where the split cannot tell is refused, not read short (`MCDAHL`: DCS then DAH?)")
    func ambiguousBoundaryRefused() throws {
        // A subfile after the run shows it whole; no length then tells the two splits apart.
        var payload = AAMVAPayload(
            version: 10,
            elements: AAMVAFixtures.current(
                number: "H5550101", last: "MCDAHL", first: "RUTH", middle: "NONE", birth: "01021990", expiry: "01022031",
                issue: "01022023"))
        let text = AAMVATransport.separatorsStripped.apply(payload.text)
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: text) }
        #expect(
            error?.message
                == "AAMVA data: element separators were lost and the elements cannot be told apart (DCS could end at more than one element id)")
        #expect(error?.message.contains("MCDAHL") == false)
        // With its separators the same card reads.
        #expect(try fields(payload.text)[.lastName] == "MCDAHL")
        // Without it, the directory's length holds only for the split that keeps the name whole.
        payload.jurisdiction = nil
        #expect(try fields(AAMVATransport.separatorsStripped.apply(payload.text))[.lastName] == "MCDAHL")
    }

    @Test(
        "a damaged header is read past where a DL/ID directory and its elements follow, with a headerRecovered warning",
        arguments: AAMVAFixtures.all, [AAMVATransport.headerKeysMangled, .scannerPreamble])
    func headerRecovered(_ fixture: AAMVAFixture, _ transport: AAMVATransport) throws {
        let text = transport.apply(fixture.text)
        #expect(AAMVARecord.hasHeader(text))
        #expect(try fields(text) == fixture.expected)
        #expect(AAMVARepair.named(in: try AAMVARecord(parsing: text).warnings) == [.headerRecovered])
    }

    @Test("no header to recover: elements without one, a damaged header with no DL/ID elements after it, letters for the IIN")
    func headerNotRecovered() throws {
        let fixture = try #require(AAMVAFixtures.all.first { $0.name == "version 10" })
        let body = try #require(fixture.text.range(of: "DLDCA"))
        let elementsOnly = String(fixture.text[body.lowerBound...].dropFirst(2))
        #expect(!AAMVARecord.hasHeader(elementsOnly))
        #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: elementsOnly) }
        let headerOnly = AAMVATransport.headerKeysMangled.apply(String(fixture.text[..<body.lowerBound]))
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: headerOnly) }
        #expect(error?.message == "not AAMVA data: a damaged header with no DL or ID elements after it")
        let lettersForIIN = AAMVATransport.headerKeysMangled.apply(fixture.text.replacingOccurrences(of: "ANSI 636000", with: "ANSI ABCDEF"))
        #expect(!AAMVARecord.hasHeader(lettersForIIN))
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
        #expect(try AAMVARecord(parsing: spaced).warnings == ["headerRecovered: whitespace or control bytes before the '@' were ignored"])
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

    @Test("magnetic-stripe track text (British Columbia's PDF417) is not DL/ID data: AAMVAReading reads it (class 10)")
    func magneticStripe() throws {
        #expect(AAMVARecord.isMagneticStripe(AAMVAFixtures.magneticStripe))
        #expect(!AAMVARecord.hasHeader(AAMVAFixtures.magneticStripe))
        let error = #expect(throws: AAMVAError.self) { try AAMVARecord(parsing: AAMVAFixtures.magneticStripe) }
        #expect(error?.message.hasPrefix("magnetic-stripe track data, not AAMVA DL/ID elements") == true)
        #expect(error?.message.contains("SPECIMEN") == false)
        let fields = try AAMVAReading(parsing: AAMVAFixtures.magneticStripe).fields
        #expect(fields[.lastName] == "SPECIMEN")
        #expect(fields[.dateOfBirth] == "1980-07-19")
        #expect(fields[.dateOfExpiry] == "2029-07-31")
        #expect(fields[.documentNumber] == "9999991")
    }
}
