import Foundation
import Testing

@testable import ImageDecoding

/// The decoder is a library: sizes, shares, radii and limits its callers pass are refused with an error, or taken at
/// their documented meaning, never trapped on.
@Suite("ImageDecoding: caller values are refused, not trapped on")
struct CallerValueTests {
    static let page = try! GrayImage(width: 4, height: 2, pixels: [0, 50, 100, 150, 200, 250, 255, 10])

    @Test(
        "an image whose size is negative, overflows, or does not match its pixels is refused",
        arguments: [(-1, -1, 1), (0, -5, 0), (-3, 0, 0), (Int.max, 2, 0), (Int.max / 2 + 1, 4, 0), (3, 3, 8), (2, 2, 5)])
    func invalidSize(width: Int, height: Int, count: Int) {
        #expect(throws: GrayImageError.self) { try GrayImage(width: width, height: height, pixels: [UInt8](repeating: 0, count: count)) }
    }

    @Test("an empty image is an image")
    func emptyImage() throws {
        let empty = try GrayImage(width: 0, height: 7, pixels: [])
        #expect(empty.width == 0 && empty.height == 7 && empty.pixels.isEmpty)
    }

    @Test(
        "contrast shares outside 0...1 (NaN, infinities included) are refused",
        arguments: [Double.nan, -.infinity, .infinity, -0.1, 1.5, Double.greatestFiniteMagnitude])
    func invalidShare(_ share: Double) {
        #expect(throws: GrayImageError.self) { try Self.page.contrastStretched(darkShare: share) }
        #expect(throws: GrayImageError.self) { try Self.page.contrastStretched(lightShare: share) }
    }

    @Test("a blur radius below zero or beyond the image's larger side is refused", arguments: [Int.min, -1, 5, Int.max])
    func invalidRadius(_ radius: Int) {
        #expect(throws: GrayImageError.self) { try Self.page.boxBlurred(radius: radius) }
    }

    @Test("every radius up to the image's larger side blurs as the block mean does, edges repeated", arguments: 0...9)
    func everyRadius(_ radius: Int) throws {
        let width = 9, height = 4
        let image = try GrayImage(width: width, height: height, pixels: (0..<(width * height)).map { UInt8(($0 * 37 + $0 / width * 101) % 256) })
        // The reference: each pass the rounded mean of 2 × radius + 1 pixels, indices clamped to the line.
        func pass(_ source: [UInt8], count: Int, lines: Int, at index: (Int, Int) -> Int) -> [UInt8] {
            var out = source
            let span = 2 * radius + 1
            for line in 0..<lines {
                for i in 0..<count {
                    let sum = (-radius...radius).reduce(0) { $0 + Int(source[index(line, min(max(i + $1, 0), count - 1))]) }
                    out[index(line, i)] = UInt8((sum + span / 2) / span)
                }
            }
            return out
        }
        let rows = pass(image.pixels, count: width, lines: height) { $0 * width + $1 }
        let expected = pass(rows, count: height, lines: width) { $1 * width + $0 }
        #expect(try image.boxBlurred(radius: radius).pixels == expected)
    }

    @Test("closing the ink with any radius keeps the image's size; a radius past the image closes it all", arguments: [Int.min, 0, 3, Int.max])
    func anyClosingRadius(_ radius: Int) {
        let closed = Self.page.closedInk(radius: radius)
        #expect(closed.width == 4 && closed.height == 2)
        #expect(radius > 0 || closed.pixels == Self.page.pixels)
    }

    @Test("a CPU budget of centuries is no limit, and one under a millisecond is a millisecond")
    func cpuBudgetExtremes() throws {
        let bytes = try FixtureManifest.bytes("hostile-many-scans.jpg")
        for budget in [Duration.seconds(Int64.max), .seconds(10_000 * 365 * 86_400)] {
            #expect(try ImageDecoder(configuration: .init(maxScans: 0, cpuBudget: budget)).decode(bytes).width == 97)
        }
        let tiny = ImageDecoder(configuration: .init(maxScans: 0, cpuBudget: .nanoseconds(1)))
        let error = #expect(throws: ImageDecodingError.self) { try tiny.decode(bytes) }
        #expect(error?.reason == .tooCostly)
    }

    @Test("a file read under the largest limit reads whole, even one that states no size (/proc)")
    func largestReadLimit() throws {
        let text = try BoundedFile.readText("/proc/self/status", limit: .max)
        #expect(text.hasPrefix("Name:"))
    }
}
