import AAMVAFixtures
import Foundation
import SeededRandom
import Testing

@testable import VerifyModel

/// Magnetic-stripe licence text (the AAMVA stripe annex), written by `AAMVAStripe` in the layouts readers give:
/// the identity read into the DL/ID record's keys, a damaged track refused naming it.
@Suite("AAMVA magnetic stripes")
struct AAMVAStripeTests {
    @Test("each layout reads to its holder's fields", arguments: AAMVAStripe.Layout.allCases)
    func layouts(_ layout: AAMVAStripe.Layout) throws {
        var stripe = AAMVAStripe()
        stripe.layout = layout
        stripe.middle = "ANN"
        if layout == .twoTracksWithLRC { stripe.number = "1234567890123" + "45" }
        let text = stripe.text
        #expect(AAMVARecord.isMagneticStripe(text))
        #expect(!AAMVARecord.hasHeader(text))
        let reading = try AAMVAReading(parsing: text)
        var expected: [DocumentKey: String] = [
            .lastName: "NAKAMURA", .firstName: "KEIKO", .middleName: "ANN", .fullName: "KEIKO ANN NAKAMURA",
            .documentNumber: layout == .twoTracksWithLRC ? "123456789012345" : "7001234", .dateOfBirth: "1985-04-12",
            .dateOfExpiry: "2031-04-30", .addressState: "BC", .addressCity: "VICTORIA", .addressStreet: "1200 DOUGLAS ST",
            .barcode: text
        ]
        if layout != .twoTracksWithLRC {
            expected[.addressZip] = "V8W2E7"
            expected[.sex] = "F"
        }
        #expect(reading.fields.values == expected)
        #expect(reading.expiryIsMonth)
    }

    @Test("a 13-character city and a name given whole after the family name's comma (British Columbia's layout)")
    func fullLengthCity() throws {
        var stripe = AAMVAStripe()
        stripe.city = "PORT COQUITLAM"  // 14 letters: the track keeps 13, with no `^` after them
        stripe.family = "LEE,"
        stripe.given = "MEI LING"
        let fields = try AAMVAReading(parsing: stripe.text).fields
        #expect(fields[.addressCity] == "PORT COQUITLA")
        #expect(fields[.lastName] == "LEE")
        #expect(fields[.firstName] == "MEI")
        #expect(fields[.middleName] == "LING")
    }

    @Test("expiry months: 01-12 its last day, 77 (non-expiring) and 88/99 (relative to the birth date) give none")
    func expiryCodes() throws {
        for (code, expiry) in [("3102", "2031-02-28"), ("2812", "2028-12-31"), ("3277", nil), ("3088", nil), ("3099", nil)] {
            var stripe = AAMVAStripe()
            stripe.expiry = code
            let reading = try AAMVAReading(parsing: stripe.text)
            #expect(reading.fields[.dateOfExpiry] == expiry, "\(code)")
            #expect(reading.expiryIsMonth == (expiry != nil))
        }
    }

    /// What a reader or a swipe does to a track.
    enum Damage: String, CaseIterable {
        case track2WithoutSeparator, nameWithoutDollar, cutInsideTrack2, birthMonth13, expiryMonth13, track3Sex7, junkAfter

        func apply(_ text: String) -> String {
            switch self {
            case .track2WithoutSeparator: text.replacingOccurrences(of: "=", with: "")
            case .nameWithoutDollar: text.replacingOccurrences(of: "NAKAMURA$KEIKO$", with: "NAKAMURA KEIKO ")
            case .cutInsideTrack2: String(text.prefix { $0 != "=" })
            case .birthMonth13: text.replacingOccurrences(of: "19850412", with: "19851312")
            case .expiryMonth13: text.replacingOccurrences(of: "=3104", with: "=3113")
            case .track3Sex7: text.replacingOccurrences(of: "    2165", with: "    7165")
            case .junkAfter: text + "EXTRA DATA?"
            }
        }

        var track: String {
            switch self {
            case .track2WithoutSeparator: "track 2 (issuer number, licence number, '=')"
            case .nameWithoutDollar: "track 1's name (family$given$middle)"
            case .cutInsideTrack2: "track 2 (no ';' … '?' track after track 1)"
            case .birthMonth13: "track 2's birth date"
            case .expiryMonth13: "track 2's expiry"
            case .track3Sex7: "track 3's sex"
            case .junkAfter: "the text after the tracks"
            }
        }
    }

    @Test("a damaged track is refused naming it, never read in part", arguments: Damage.allCases)
    func damagedTrack(_ damage: Damage) {
        let text = damage.apply(AAMVAStripe().text)
        #expect(text != AAMVAStripe().text)
        let error = #expect(throws: AAMVAError.self) { try AAMVAReading(parsing: text) }
        #expect(error?.message == "magnetic-stripe licence: \(damage.track) does not follow the AAMVA stripe layout: refused")
        #expect(error?.message.contains("NAKAMURA") == false)
    }

    /// `AAMVA_STRIPE_SEED` replays or explores another seed; the one used is in every failure's message.
    @Test("500 random stripes of every layout, whole and cut anywhere: read exactly right or refused")
    func randomCuts() {
        let seed = ProcessInfo.processInfo.environment["AAMVA_STRIPE_SEED"].flatMap { UInt64($0) } ?? 0x5791_9E50
        var rng = SeededGenerator(seed: seed)
        var exact = 0
        for index in 0..<500 {
            var stripe = AAMVAStripe()
            stripe.layout = AAMVAStripe.Layout.allCases.randomElement(using: &rng)!
            stripe.family = ["DOE", "SINGH", "VAN DER BERG", "O'NEIL", "ABERCROMBIE-FITZGERALD"].randomElement(using: &rng)!
            stripe.number = String((0..<Int.random(in: 6...17, using: &rng)).map { _ in "0123456789".randomElement(using: &rng)! })
            let text = stripe.text
            let count = text.unicodeScalars.count
            for cut in [count, Int.random(in: 0...count, using: &rng)] {
                let part = String(String.UnicodeScalarView(text.unicodeScalars.prefix(cut)))
                guard let fields = try? AAMVAReading(parsing: part).fields else {
                    #expect(cut < count, "seed \(seed), stripe \(index): whole, refused")
                    continue
                }
                let identity = [fields[.lastName], fields[.documentNumber], fields[.dateOfBirth]]
                #expect(identity == [stripe.family, stripe.number, "1985-04-12"], "seed \(seed), stripe \(index), cut \(cut)")
                if identity == [stripe.family, stripe.number, "1985-04-12"] { exact += 1 }
            }
        }
        #expect(exact >= 500, "seed \(seed): \(exact) read")
    }
}
