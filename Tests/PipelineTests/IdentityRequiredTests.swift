import AAMVAFixtures
import BarcodeScanning
import DocumentOutcomes
import Foundation
import Testing
import VerifyModel

@testable import Pipeline

/// Contract §11: a government id reaches PROCESSED only with the identity the policy needs; blank, truncated,
/// magnetic-stripe or opaque barcode text never completes one.
@Suite("A government id is read right or refused")
struct IdentityRequiredTests {
    /// 2026-11-26.
    static let today = Date(timeIntervalSince1970: 1_795_651_200)

    func document(barcode: String? = nil, back: String? = nil, type: DocumentType = .governmentId) -> ScannedDocument {
        var job = DocumentJob(sequence: 0, source: "test", type: type, identity: .known("t"))
        if let barcode { job.captured = DocumentFields([.barcode: barcode]) }
        var document = ScannedDocument(job: job, transaction: .named("t"), images: [:], capture: .init())
        if let back {
            document.images[.back] = [1]
            document.backBarcodes = [Barcode(format: .pdf417, text: back)]
        }
        return document
    }

    func refusal(_ document: ScannedDocument, configuration: PipelineConfiguration = PipelineConfiguration()) -> DocumentFailure? {
        #expect(throws: DocumentFailure.self) {
            try DocumentAssembly(configuration: configuration, today: Self.today).fields(for: document)
        }
    }

    @Test("an expired licence's text with one leading space is refused as expired, as it is without the space")
    func expiredWithLeadingSpace() {
        for text in [AAMVAFixtures.expired.text, " " + AAMVAFixtures.expired.text, "\n" + AAMVAFixtures.expired.text] {
            let error = refusal(document(barcode: text))
            #expect(error?.code == .document(.documentCaptureError))
            #expect(error?.message == "the identity document has expired")
        }
    }

    @Test("empty or blank barcode text is refused", arguments: ["", " ", "\n\r\t ", "\u{1E}\u{85}"])
    func blank(_ text: String) {
        let error = refusal(document(barcode: text))
        #expect(error?.code == .document(.documentCaptureError))
        #expect(error?.message == "barcode: the barcode text is empty")
    }

    @Test("a record cut after its header is refused, naming every missing field")
    func truncatedAfterHeader() throws {
        let text = AAMVAFixtures.all[0].text
        let header = String(text.unicodeScalars.prefix(41))
        #expect(header.hasSuffix("ZX") == false && header.hasPrefix("@\n\u{1E}\rANSI 636000"))
        let error = refusal(document(barcode: header))
        #expect(error?.message == "barcode: no family name, date of birth, document number or date of expiry could be read")
    }

    @Test("a back PDF417 that parses but lacks a birth date is refused, naming it")
    func missingBirthDate() throws {
        let text = AAMVAPayload(elements: [("DAQ", "B1"), ("DCS", "NOBIRTH"), ("DBA", "01012030")]).text
        let error = refusal(document(back: text))
        #expect(error?.message == "back barcode: no date of birth could be read")
        // Without failExpiredId the expiry is not needed, the birth date still is.
        var lenient = PipelineConfiguration()
        lenient.failExpiredId = false
        let noExpiry = AAMVAPayload(elements: [("DAQ", "B1"), ("DCS", "NOBIRTH"), ("DBB", "01011990")]).text
        #expect(try DocumentAssembly(configuration: lenient, today: Self.today).fields(for: document(back: noExpiry))[.dateOfBirth] == "1990-01-01")
        let refused = refusal(document(back: noExpiry))
        #expect(refused?.message == "back barcode: no date of expiry could be read")
    }

    @Test(
        "an expired licence stays refused whatever its damage: leading space, header keys mangled, a preamble, separators stripped",
        arguments: [AAMVATransport.intact, .leadingSpace, .headerKeysMangled, .scannerPreamble, .separatorsStripped, .pipes])
    func expiredWhateverDamage(_ transport: AAMVATransport) {
        let text = transport.apply(AAMVAFixtures.expired.text)
        for document in [document(barcode: text), document(back: text)] {
            let error = refusal(document)
            #expect(error?.message == "the identity document has expired", "\(transport)")
        }
        // Cut anywhere, it is refused too (expired, or its identity not read).
        let scalars = Array(text.unicodeScalars)
        for cut in stride(from: 0, to: scalars.count, by: 7) {
            let error = refusal(document(barcode: String(String.UnicodeScalarView(scalars[..<cut]))))
            #expect(error?.code == .document(.documentCaptureError), "\(transport), cut \(cut)")
        }
    }

    @Test("magnetic-stripe text is read like a licence record; its expiry month must not have begun under failExpiredId")
    func magneticStripe() throws {
        var stripe = AAMVAStripe()
        stripe.expiry = "3104"
        for document in [document(barcode: stripe.text), document(back: stripe.text)] {
            let fields = try DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today).fields(for: document)
            #expect(fields[.lastName] == "NAKAMURA")
            #expect(fields[.dateOfExpiry] == "2031-04-30")
        }
        // Today is 2026-11-26: a stripe expiring in November 2026 may have expired already, one in October has.
        for month in ["2611", "2610"] {
            stripe.expiry = month
            let error = refusal(document(barcode: stripe.text))
            #expect(
                error?.message
                    == "barcode: the identity document may have expired: its magnetic stripe gives only the expiry month, which has begun")
        }
        var lenient = PipelineConfiguration()
        lenient.failExpiredId = false
        #expect(
            try DocumentAssembly(configuration: lenient, today: Self.today).fields(for: document(barcode: stripe.text))[.dateOfExpiry] == "2026-10-31"
        )
        // A damaged track refuses the document, naming the track.
        let damaged = refusal(document(barcode: stripe.text.replacingOccurrences(of: "=", with: "")))
        #expect(damaged?.message.hasPrefix("barcode: magnetic-stripe licence: track 2") == true)
        // Non-expiring (77): no expiry date, which failExpiredId needs.
        stripe.expiry = "3277"
        #expect(refusal(document(barcode: stripe.text))?.message == "barcode: no date of expiry could be read")
    }

    @Test("scan.opaqueBarcodes in a pipeline file: refuse by default, accept on request, anything else is a usage error")
    func opaqueBarcodesSetting() throws {
        #expect(PipelineConfiguration().acceptOpaqueBarcodes == false)
        let accepting = try PipelineConfiguration(yaml: "scan:\n  opaqueBarcodes: accept\n", name: "p.yaml")
        #expect(accepting.acceptOpaqueBarcodes)
        let refusing = try PipelineConfiguration(yaml: "scan:\n  opaqueBarcodes: refuse\n", name: "p.yaml")
        #expect(!refusing.acceptOpaqueBarcodes)
        #expect(throws: ConfigurationError.self) { try PipelineConfiguration(yaml: "scan:\n  opaqueBarcodes: maybe\n", name: "p.yaml") }
    }

    /// Every cut point of every fixture, expired one included: a cut record is refused or gives the card's own
    /// identity, never a shortened or missing one.
    @Test("a sweep over every truncation of every fixture accepts no document without its whole identity")
    func truncationSweep() {
        let identity: [DocumentKey] = [.lastName, .dateOfBirth, .documentNumber, .dateOfExpiry]
        let assembly = DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today)
        var accepted = 0, refused = 0
        for fixture in AAMVAFixtures.all + [AAMVAFixtures.expired] {
            let scalars = Array(fixture.text.unicodeScalars)
            for cut in 0...scalars.count {
                let text = String(String.UnicodeScalarView(scalars[..<cut]))
                do {
                    let fields = try assembly.fields(for: document(barcode: text))
                    accepted += 1
                    for key in identity {
                        #expect(fields[key] == fixture.expected[key], "\(fixture.name), cut at \(cut): \(key.rawValue)")
                    }
                } catch {
                    refused += 1
                    #expect(error.code == .document(.documentCaptureError), "\(fixture.name), cut at \(cut)")
                }
            }
        }
        // The whole records are among the accepted; most cuts lose part of the identity.
        #expect(accepted >= AAMVAFixtures.all.count && refused > accepted)
    }

    @Test("an MRZ whose issuing state ICAO 9303 does not list is kept as read and flagged in the warnings")
    func unknownStateFlagged() throws {
        // Interpol's travel document: INP is no state; the check digits hold.
        var job = DocumentJob(sequence: 0, source: "test", type: .governmentId, identity: .known("t"))
        job.mrz = "P<INPERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F3204153ZE184226B<<<<<16"
        job.readWarnings = ["MRZ documentNumber: 1 look-alike(s) changed"]
        let document = ScannedDocument(job: job, transaction: .named("t"), images: [:], capture: .init())
        let assembled = try DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today).assemble(document)
        #expect(assembled.fields[.country] == "INP")
        #expect(
            assembled.warnings == [
                "MRZ documentNumber: 1 look-alike(s) changed",
                "MRZ issuingState is not a code ICAO 9303 lists: kept as read"
            ])
    }
}
