import CImageCodecs

/// An 8-bit grayscale image, rows packed (stride == width).
public struct GrayImage: Sendable {
    public let width: Int
    public let height: Int
    /// The size the file declares; larger than `width`×`height` when the decoder scaled it down.
    public let sourceWidth: Int
    public let sourceHeight: Int
    public let pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8], sourceWidth: Int? = nil, sourceHeight: Int? = nil) {
        precondition(pixels.count == width * height, "pixel count must be width × height")
        self.width = width
        self.height = height
        self.pixels = pixels
        self.sourceWidth = sourceWidth ?? width
        self.sourceHeight = sourceHeight ?? height
    }

    /// Whether this is a reduced-size decode of a larger picture.
    public var isScaledDown: Bool { width < sourceWidth || height < sourceHeight }

    /// The photographic negative: light codes on dark backgrounds become readable.
    public func inverted() -> GrayImage {
        GrayImage(width: width, height: height, pixels: pixels.map { 255 &- $0 },
                  sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// The pixels of a rectangle, clamped to the image.
    public func cropped(minX: Int, minY: Int, maxX: Int, maxY: Int) -> GrayImage {
        let left = max(0, min(minX, width)), right = max(left, min(maxX, width))
        let top = max(0, min(minY, height)), bottom = max(top, min(maxY, height))
        var region = [UInt8]()
        region.reserveCapacity((right - left) * (bottom - top))
        for row in top..<bottom { region.append(contentsOf: pixels[row * width + left..<row * width + right]) }
        return GrayImage(width: right - left, height: bottom - top, pixels: region)
    }

    public subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }
}
