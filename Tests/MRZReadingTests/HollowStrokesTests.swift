import ImageDecoding
import Testing

@testable import MRZReading

@Suite("Hollow print made solid")
struct HollowStrokesTests {
    /// White paper 80 x 60 with `ink` pixels black.
    static func page(_ ink: (Int, Int) -> Bool) -> GrayImage {
        let width = 80, height = 60
        var pixels = [UInt8](repeating: 255, count: width * height)
        for y in 0..<height {
            for x in 0..<width where ink(x, y) { pixels[y * width + x] = 0 }
        }
        return GrayImage(width: width, height: height, packed: pixels, sourceWidth: width, sourceHeight: height)
    }

    /// A stroke 5 pixels wide and 30 high at x 10...14, y 15...44, drawn as its edge only (outline print); and an `O`,
    /// a solid ring 4 pixels thick around a 10 x 20 counter at x 44...53, y 20...39.
    static func hollowStrokeAndSolidRing(x: Int, y: Int) -> Bool {
        let stroke = (10...14).contains(x) && (15...44).contains(y)
        let strokeInside = (11...13).contains(x) && (16...43).contains(y)
        let ring = (40...57).contains(x) && (16...43).contains(y)
        let counter = (44...53).contains(x) && (20...39).contains(y)
        return (stroke && !strokeInside) || (ring && !counter)
    }

    @Test("a hollow stroke's inside becomes ink; a solid ring's counter and the paper around stay paper")
    func fillsOnlyHollows() {
        let solid = Self.page(Self.hollowStrokeAndSolidRing).filledHollowStrokes(window: 31)
        func ink(_ x: Int, _ y: Int) -> Bool { solid.pixels[y * solid.width + x] == 0 }
        #expect((16...43).allSatisfy { y in (11...13).allSatisfy { x in ink(x, y) } }, "the stroke's inside is filled")
        #expect((20...39).allSatisfy { y in (44...53).allSatisfy { x in !ink(x, y) } }, "the O's counter stays open")
        #expect(!ink(5, 5) && !ink(25, 30) && !ink(70, 50), "paper outside stays paper")
        #expect(ink(10, 15) && ink(40, 16) && ink(57, 43), "the ink stays ink")
    }
}
