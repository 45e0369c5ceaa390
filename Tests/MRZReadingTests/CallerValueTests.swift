import Foundation
import ImageDecoding
import Testing
import VerifyModel

@testable import MRZReading

/// The reader is a library: its policy refuses values it cannot use when it is made, and nothing traps later.
@Suite("MRZReading: caller values are validated, not trapped on")
struct CallerValueTests {
    static func read(_ name: String, _ configure: (inout MRZImageReader) -> Void) throws -> MRZImageReader.Outcome {
        let bytes = [UInt8](try Data(contentsOf: MRZFixtures.folder.appendingPathComponent(name)))
        var reader = MRZImageReader(referenceDate: Date(timeIntervalSince1970: 1_795_305_600))
        configure(&reader)
        return try reader.read(bytes, decoder: ImageDecoder())
    }

    @Test("no mend allowed (maximumMends 0): a page read without one still reads")
    func noMendAllowed() throws {
        let policy = try MRZReadingPolicy(maximumMends: 0)
        guard case .read(let reading) = try Self.read("td3-specimen.png", { $0.policy = policy }) else {
            Issue.record("no reading with maximumMends = 0")
            return
        }
        #expect(reading.repairs.isEmpty)
        #expect(reading.mrz.lines == MRZFixtures.manifest["td3-specimen.png"]!.lines)
    }

    @Test("a policy value out of range, NaN or infinite is refused when the policy is made, naming it")
    func policyValidated() throws {
        let cases: [(String, () throws(MRZReadingPolicy.Invalid) -> MRZReadingPolicy)] = [
            ("searchPixels", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(searchPixels: Int.min) }),
            ("searchPixels", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(searchPixels: 0) }),
            ("readablePitchPixels", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(readablePitchPixels: .nan) }),
            ("minimumMargin", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(minimumMargin: -.infinity) }),
            ("maximumMends", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(maximumMends: -1) }),
            ("minimumMeanScore", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(minimumMeanScore: 1.5) }),
            ("closeCall", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(closeCall: .infinity) }),
            ("roundBow", { () throws(MRZReadingPolicy.Invalid) in try MRZReadingPolicy(roundBow: .nan) })
        ]
        for (name, make) in cases {
            #expect(throws: MRZReadingPolicy.Invalid.self, "\(name)") { try make() }
            do throws(MRZReadingPolicy.Invalid) {
                _ = try make()
            } catch {
                #expect(error.name == name && error.description.contains(name))
            }
        }
        // The defaults are in range, and giving a default explicitly changes nothing.
        #expect(throws: Never.self) { try MRZReadingPolicy.standard.validate() }
        #expect(try MRZReadingPolicy(minimumMargin: 0.02, closeCall: 0.5) == MRZReadingPolicy.standard)
        #expect(try MRZReadingPolicy(minimumMargin: 0.1) != MRZReadingPolicy.standard)
        #expect(try MRZReadingPolicy(searchPixels: 1, minimumMargin: 0).searchPixels == 1)
    }

    /// A one-pixel search finds the band at no size, then reads it from the full picture (a pitch under 1000 pixels).
    @Test("search sizes at their extremes read the page", arguments: [1, 1_000_000_000])
    func searchPixelsExtremes(_ pixels: Int) throws {
        let policy = try MRZReadingPolicy(searchPixels: pixels, readablePitchPixels: 1000, minimumMargin: 0)
        guard case .read(let reading) = try Self.read("td3-specimen.png", { $0.policy = policy }) else {
            Issue.record("no reading with searchPixels = \(pixels)")
            return
        }
        #expect(reading.mrz.lines == MRZFixtures.manifest["td3-specimen.png"]!.lines)
    }
}
