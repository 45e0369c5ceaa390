import CImageCodecs

/// A size or an argument an image operation cannot take (a negative size, pixels that do not fill it, a share outside
/// 0...1): the caller's value, refused.
public struct GrayImageError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// An 8-bit grayscale image, rows packed (stride == width).
public struct GrayImage: Sendable {
    public let width: Int
    public let height: Int
    /// The size the file declares; larger than `width`×`height` when the decoder scaled it down.
    public let sourceWidth: Int
    public let sourceHeight: Int
    public let pixels: [UInt8]

    /// Refused unless the width and height are at least 0 and `pixels` holds exactly width × height.
    public init(width: Int, height: Int, pixels: [UInt8], sourceWidth: Int? = nil, sourceHeight: Int? = nil) throws(GrayImageError) {
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        guard width >= 0, height >= 0, !overflow, count == pixels.count else {
            throw GrayImageError(message: "\(pixels.count) pixels do not make an image of \(width) × \(height)")
        }
        self.init(width: width, height: height, packed: pixels, sourceWidth: sourceWidth ?? width, sourceHeight: sourceHeight ?? height)
    }

    /// An image whose size comes from a valid one's (a decode, a crop, a filter): `pixels` holds width × height.
    package init(width: Int, height: Int, packed pixels: [UInt8], sourceWidth: Int, sourceHeight: Int) {
        self.width = width
        self.height = height
        self.pixels = pixels
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
    }

    /// Whether this is a reduced-size decode of a larger picture.
    public var isScaledDown: Bool { width < sourceWidth || height < sourceHeight }

    /// The photographic negative: light codes on dark backgrounds become readable.
    public func inverted() -> GrayImage {
        GrayImage(
            width: width, height: height, packed: pixels.map { 255 &- $0 },
            sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// The pixels of a rectangle, clamped to the image.
    public func cropped(minX: Int, minY: Int, maxX: Int, maxY: Int) -> GrayImage {
        let left = max(0, min(minX, width)), right = max(left, min(maxX, width))
        let top = max(0, min(minY, height)), bottom = max(top, min(maxY, height))
        var region = [UInt8]()
        region.reserveCapacity((right - left) * (bottom - top))
        for row in top..<bottom { region.append(contentsOf: pixels[row * width + left..<row * width + right]) }
        return GrayImage(width: right - left, height: bottom - top, packed: region, sourceWidth: right - left, sourceHeight: bottom - top)
    }

    /// Half the width and height, each pixel the mean of a 2×2 block.
    public func halved() -> GrayImage {
        let w = width / 2, h = height / 2
        var out = [UInt8](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let a = Int(pixels[2 * y * width + 2 * x]) + Int(pixels[2 * y * width + 2 * x + 1])
                let b = Int(pixels[(2 * y + 1) * width + 2 * x]) + Int(pixels[(2 * y + 1) * width + 2 * x + 1])
                out[y * w + x] = UInt8((a + b + 2) / 4)
            }
        }
        return GrayImage(width: w, height: h, packed: out, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// The greys stretched so that the darkest `darkShare` of the pixels are black and the lightest `lightShare` white
    /// (a linear map between those two levels, clipped): faded print on light paper gets a full contrast. Unchanged
    /// when the two levels are not at least 8 apart. A share outside 0...1 is refused.
    public func contrastStretched(darkShare: Double = 0.005, lightShare: Double = 0.1) throws(GrayImageError) -> GrayImage {
        guard (0...1).contains(darkShare), (0...1).contains(lightShare) else {
            throw GrayImageError(message: "the dark and light shares of a contrast stretch must be from 0 to 1")
        }
        guard !pixels.isEmpty else { return self }
        var histogram = [Int](repeating: 0, count: 256)
        for pixel in pixels { histogram[Int(pixel)] += 1 }
        func level(atShare share: Double) -> Int {
            let target = Int(Double(pixels.count) * share)
            var seen = 0
            for (grey, count) in histogram.enumerated() {
                seen += count
                if seen > target { return grey }
            }
            return 255
        }
        let black = level(atShare: darkShare), white = level(atShare: 1 - lightShare)
        guard white - black >= 8 else { return self }
        let map = (0..<256).map { grey in UInt8(min(255, max(0, (grey - black) * 255 / (white - black)))) }
        return GrayImage(width: width, height: height, packed: pixels.map { map[Int($0)] }, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// Each pixel the mean of the (2 × radius + 1)² block around it (a box blur; the edges repeat). A radius below 0
    /// or beyond the image's larger side is refused.
    public func boxBlurred(radius: Int) throws(GrayImageError) -> GrayImage {
        guard radius >= 0, radius <= max(width, height) else {
            throw GrayImageError(message: "a blur radius must be from 0 to the image's larger side, \(max(width, height)) pixels")
        }
        guard radius > 0, width > 0, height > 0 else { return self }
        let span = 2 * radius + 1
        func pass(_ source: [UInt8], count: Int, lines: Int, step: Int, stride: Int) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: source.count)
            for line in 0..<lines {
                let base = line * stride
                // The first window, -radius...radius with the edges repeated: the first pixel radius + 1 times, the
                // ones after it, and the last pixel once for each place the window reaches past the end.
                let last = base + (count - 1) * step
                var sum = (radius + 1) * Int(source[base]) + max(0, radius - (count - 1)) * Int(source[last])
                for k in Swift.stride(from: 1, through: min(radius, count - 1), by: 1) { sum += Int(source[base + k * step]) }
                for i in 0..<count {
                    out[base + i * step] = UInt8((sum + span / 2) / span)
                    sum += Int(source[base + min(i + radius + 1, count - 1) * step]) - Int(source[base + max(i - radius, 0) * step])
                }
            }
            return out
        }
        let rows = pass(pixels, count: width, lines: height, step: 1, stride: width)
        let both = pass(rows, count: height, lines: width, step: width, stride: 1)
        return GrayImage(width: width, height: height, packed: both, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// Dark strokes closed over gaps up to 2 × `radius` pixels wide: each pixel the darkest of the square of side
    /// 2 × radius + 1 around it, then the lightest of that (a greyscale closing of the ink; the edges repeat).
    /// Hollow or broken strokes (an outline print, dotted print) come out solid; ink keeps its outer shape. A radius
    /// of 0 or less changes nothing; one beyond the image takes the whole image.
    public func closedInk(radius: Int) -> GrayImage {
        guard radius > 0, width > 0, height > 0 else { return self }
        let inked = Self.extreme(pixels, width: width, height: height, radius: radius, darkest: true)
        let closed = Self.extreme(inked, width: width, height: height, radius: radius, darkest: false)
        return GrayImage(width: width, height: height, packed: closed, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// Each pixel the darkest (or the lightest) of the square of side 2 × radius + 1 around it, the edges repeated:
    /// each pass combines the image with itself shifted by 1 ... radius pixels, along the rows and then across
    /// them, in loops over contiguous pixels that the compiler vectorises.
    private static func extreme(_ source: [UInt8], width: Int, height: Int, radius: Int, darkest: Bool) -> [UInt8] {
        var along = source
        along.withUnsafeMutableBufferPointer { along in
            source.withUnsafeBufferPointer { source in
                for row in 0..<height {
                    let line = UnsafeMutableBufferPointer(rebasing: along[(row * width)..<((row + 1) * width)])
                    let original = UnsafeBufferPointer(rebasing: source[(row * width)..<((row + 1) * width)])
                    for shift in stride(from: 1, through: min(radius, width - 1), by: 1) {
                        combine(line, from: original, shift: shift, count: width - shift, darkest: darkest)
                    }
                }
            }
        }
        var out = along
        out.withUnsafeMutableBufferPointer { out in
            along.withUnsafeBufferPointer { along in
                for shift in stride(from: 1, through: min(radius, height - 1), by: 1) {
                    combine(out, from: along, shift: shift * width, count: (height - shift) * width, darkest: darkest)
                }
            }
        }
        return out
    }

    /// `target[i]` with `from[i + shift]` and `target[i + shift]` with `from[i]`, for i below `count`.
    private static func combine(
        _ target: UnsafeMutableBufferPointer<UInt8>, from: UnsafeBufferPointer<UInt8>, shift: Int, count: Int, darkest: Bool
    ) {
        if darkest {
            for i in 0..<count { target[i] = min(target[i], from[i + shift]) }
            for i in 0..<count { target[i + shift] = min(target[i + shift], from[i]) }
        } else {
            for i in 0..<count { target[i] = max(target[i], from[i + shift]) }
            for i in 0..<count { target[i + shift] = max(target[i + shift], from[i]) }
        }
    }

    public subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }
}
