import Foundation
import Testing

@testable import ImageDecoding

/// The fixture manifest written by Fixtures/generate.py.
struct FixtureManifest: Decodable {
    struct Decode: Decodable, CustomTestStringConvertible, Sendable {
        var file: String
        var reference: String
        var width: Int
        var height: Int
        var tolerance: Int
        var targetPixels: Int

        var testDescription: String { "\(file) → \(reference)" }
    }

    var decodes: [Decode]
    var corrupt: [String]

    static let fixtures = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")
    static let shared: FixtureManifest = {
        let data = try! Data(contentsOf: fixtures.appendingPathComponent("manifest.json"))
        return try! JSONDecoder().decode(FixtureManifest.self, from: data)
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }
}

/// Reads a binary PGM (P5, maxval 255), the reference decodes' format.
func readPGM(_ bytes: [UInt8]) throws -> GrayImage {
    var fields: [String] = []
    var index = 0
    while fields.count < 4 {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A { index += 1 }
        let start = index
        while index < bytes.count, bytes[index] != 0x20, bytes[index] != 0x0A { index += 1 }
        fields.append(String(decoding: bytes[start..<index], as: UTF8.self))
    }
    index += 1
    let width = Int(fields[1])!, height = Int(fields[2])!
    try #require(fields[0] == "P5" && fields[3] == "255")
    return try GrayImage(width: width, height: height, pixels: Array(bytes[index..<(index + width * height)]))
}

@Suite("Decoding every JPEG, PNG and WebP variant to grayscale")
struct ImageDecoderTests {
    @Test("matches the reference decode", arguments: FixtureManifest.shared.decodes)
    func matchesReference(_ fixture: FixtureManifest.Decode) throws {
        let decoder = ImageDecoder()
        let image = try decoder.decode(
            try FixtureManifest.bytes(fixture.file),
            targetPixels: fixture.targetPixels == 0 ? nil : fixture.targetPixels)
        let reference = try readPGM(try FixtureManifest.bytes(fixture.reference))
        #expect(image.width == fixture.width)
        #expect(image.height == fixture.height)
        try #require(image.width == reference.width && image.height == reference.height)
        let differences = zip(image.pixels, reference.pixels).map { abs(Int($0) - Int($1)) }
        let worst = differences.max() ?? 0
        let mean = Double(differences.reduce(0, +)) / Double(differences.count)
        #expect(worst <= fixture.tolerance, "largest difference \(worst) > \(fixture.tolerance)")
        #expect(mean < 1.0, "mean difference \(mean)")
    }

    @Test("halving averages each 2×2 block, rounding half up, and drops an odd last row and column")
    func halved() throws {
        let image = try GrayImage(
            width: 5, height: 3,
            pixels: [
                0, 1, 10, 20, 99,
                2, 3, 30, 41, 99,
                99, 99, 99, 99, 99
            ])
        let half = image.halved()
        #expect(half.width == 2 && half.height == 1)
        #expect(half.pixels == [2, 25])
        #expect(half.sourceWidth == 5 && half.sourceHeight == 3)
    }

    @Test("a box blur of radius 1 gives each pixel the rounded mean of its 3×3 block, edges repeated")
    func boxBlurred() throws {
        // One black pixel (0) on white (255) in the middle of a 5×4 image.
        var pixels = [UInt8](repeating: 255, count: 20)
        pixels[2 * 5 + 2] = 0
        let blurred = try GrayImage(width: 5, height: 4, pixels: pixels).boxBlurred(radius: 1)
        #expect(blurred.width == 5 && blurred.height == 4)
        // Its 3×3 neighbourhood holds it once: (8 × 255 + 0) / 9 = 226.67, rounded to 227; farther pixels stay white.
        #expect(
            blurred.pixels == [
                255, 255, 255, 255, 255,
                255, 227, 227, 227, 255,
                255, 227, 227, 227, 255,
                255, 227, 227, 227, 255
            ])
    }

    @Test("a faded page's greys are stretched: its darkest half a percent black, its lightest tenth white, the rest in between")
    func contrastStretched() throws {
        // 1,000 pixels: 100 of ink at 150, 100 at 190, 800 of paper at 230.
        let pixels = [UInt8](repeating: 150, count: 100) + [UInt8](repeating: 190, count: 100) + [UInt8](repeating: 230, count: 800)
        let stretched = try GrayImage(width: 100, height: 10, pixels: pixels).contrastStretched()
        // 150 -> 0, 230 -> 255, 190 -> (190 - 150) * 255 / 80 = 127.
        #expect(stretched.pixels == [UInt8](repeating: 0, count: 100) + [UInt8](repeating: 127, count: 100) + [UInt8](repeating: 255, count: 800))
        // A page of one grey (no contrast to stretch) is left as it is.
        let flat = [UInt8](repeating: 200, count: 64)
        #expect(try GrayImage(width: 8, height: 8, pixels: flat).contrastStretched().pixels == flat)
    }

    @Test("closing the ink fills a stroke drawn as its two edges and keeps the stroke's outer shape")
    func closedInk() throws {
        // A hollow stroke on white: rows 2 and 4 inked (0) from column 2 to 6, row 3 between them white, as an
        // outline font draws a horizontal bar; a 9×7 image.
        var pixels = [UInt8](repeating: 255, count: 63)
        for row in [2, 4] { for column in 2...6 { pixels[row * 9 + column] = 0 } }
        let closed = try GrayImage(width: 9, height: 7, pixels: pixels).closedInk(radius: 1)
        #expect(closed.width == 9 && closed.height == 7)
        // The gap between the edges is inked; nothing outside the bar is.
        let white: [UInt8] = [255, 255, 255, 255, 255, 255, 255, 255, 255]
        let bar: [UInt8] = [255, 255, 0, 0, 0, 0, 0, 255, 255]
        #expect(closed.pixels == white + white + bar + bar + bar + white + white)
        // Radius 0 changes nothing.
        #expect(try GrayImage(width: 9, height: 7, pixels: pixels).closedInk(radius: 0).pixels == pixels)
    }

    @Test("a reduced JPEG decode remembers the declared size")
    func scaledDecodeKeepsSourceSize() throws {
        let image = try ImageDecoder().decode(try FixtureManifest.bytes("jpeg-baseline.jpg"), targetPixels: 25 * 16)
        #expect(image.sourceWidth == 97 && image.sourceHeight == 61)
        #expect(image.width == 25 && image.height == 16)
        #expect(image.isScaledDown)
    }

    @Test("the format comes from the bytes, not the name")
    func sniffsFormat() throws {
        // A PNG's bytes decode as PNG whatever the caller believes the file is called.
        let png = try FixtureManifest.bytes("png-rgb8.png")
        #expect(ImageFormat(sniffing: png) == .png)
        #expect(ImageFormat(sniffing: try FixtureManifest.bytes("jpeg-baseline.jpg")) == .jpeg)
        #expect(ImageFormat(sniffing: try FixtureManifest.bytes("webp-lossy.webp")) == .webp)
        #expect(ImageFormat(sniffing: Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8)) == nil, "a RIFF file that is not a WebP")
        #expect(ImageFormat(sniffing: Array("GIF89a".utf8)) == nil)
    }
}

@Suite("Refusing corrupt and hostile inputs")
struct CorruptInputTests {
    static let expectedReasons: [String: ImageDecodingError.Reason] = [
        "corrupt-empty.jpg": .empty,
        "corrupt-random.jpg": .unknownFormat,
        "corrupt-random-jpeg-magic.jpg": .corrupt,
        "corrupt-truncated.jpg": .corrupt,
        "corrupt-truncated.png": .corrupt,
        "corrupt-bad-crc.png": .corrupt,
        "corrupt-huge-header.png": .tooLarge,
        "corrupt-huge-header.jpg": .tooLarge,
        "hostile-many-scans.jpg": .tooCostly,
        "corrupt-truncated.webp": .corrupt,
        "corrupt-huge-header.webp": .tooLarge,
        "corrupt-animated.webp": .corrupt
    ]

    @Test("every corrupt fixture has an expected reason")
    func manifestIsCovered() {
        #expect(Set(FixtureManifest.shared.corrupt) == Set(Self.expectedReasons.keys))
    }

    @Test("gives a documentCaptureError with the right reason", arguments: FixtureManifest.shared.corrupt)
    func refuses(_ name: String) throws {
        let bytes = try FixtureManifest.bytes(name)
        let error = #expect(throws: ImageDecodingError.self) { try ImageDecoder().decode(bytes) }
        #expect(error?.reason == Self.expectedReasons[name])
        #expect(error?.failureCode == .document(.documentCaptureError))
        #expect(error?.message.isEmpty == false)
    }

    @Test("a truncated JPEG is refused rather than filled with gray")
    func truncatedJPEGNamesPrematureEnd() throws {
        let error = #expect(throws: ImageDecodingError.self) {
            try ImageDecoder().decode(try FixtureManifest.bytes("corrupt-truncated.jpg"))
        }
        #expect(error?.message.contains("Premature end") == true)
    }

    @Test("a progressive JPEG with 10,000 scans is refused at its 101st")
    func scanLimit() throws {
        let error = #expect(throws: ImageDecodingError.self) { try ImageDecoder().decode(try FixtureManifest.bytes("hostile-many-scans.jpg")) }
        #expect(error?.message == "JPEG refused: the image has more than 100 scans")
        // The same file under a higher limit decodes: the limit, not damage, refused it.
        #expect(try ImageDecoder(configuration: .init(maxScans: 20_000)).decode(try FixtureManifest.bytes("hostile-many-scans.jpg")).width == 97)
    }

    @Test("a decode that spends its CPU budget is stopped", arguments: ["hostile-many-scans.jpg", "large-gradient.png", "large-gradient.webp"])
    func cpuBudget(_ name: String) throws {
        let bytes = try FixtureManifest.bytes(name)
        let tight = ImageDecoder(configuration: .init(maxScans: 0, cpuBudget: .milliseconds(1)))
        let error = #expect(throws: ImageDecodingError.self) { try tight.decode(bytes) }
        #expect(error?.reason == .tooCostly)
        #expect(error?.message.hasSuffix("refused: decoding took more than 1 ms of CPU") == true, "\(error?.message ?? "")")
        #expect(try ImageDecoder(configuration: .init(maxScans: 0)).decode(bytes).width > 0, "within the default budget it decodes")
    }

    @Test("the pixel limit is configurable and checked against the declared size")
    func pixelLimit() throws {
        let bytes = try FixtureManifest.bytes("png-rgb8.png")
        let strict = ImageDecoder(configuration: .init(maxPixels: 97 * 61 - 1))
        let error = #expect(throws: ImageDecodingError.self) { try strict.decode(bytes) }
        #expect(error?.reason == .tooLarge)
        let exact = ImageDecoder(configuration: .init(maxPixels: 97 * 61))
        #expect(try exact.decode(bytes).width == 97)
    }
}
