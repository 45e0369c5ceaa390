import ImageDecoding

/// A connected blob of ink: one printed character, most of the time.
struct InkComponent {
    var minX: Int, minY: Int, maxX: Int, maxY: Int
    var pixels: Int
    var sumX: Int, sumY: Int

    var width: Int { maxX - minX + 1 }
    var height: Int { maxY - minY + 1 }
    var center: Point { Point(x: Double(sumX) / Double(pixels), y: Double(sumY) / Double(pixels)) }
    /// The middle of its bounding box: for a character, closer to its cell's centre than the ink's centroid.
    var boxCenter: Point { Point(x: Double(minX + maxX) / 2, y: Double(minY + maxY) / 2) }
}

struct Point {
    var x: Double
    var y: Double
}

/// Ink (pixels darker than their neighbourhood) split into connected components: the characters of a page.
enum InkComponents {
    /// How much darker than the mean of its neighbourhood a pixel must be to be ink: below `tenths` tenths of it and
    /// at least `levels` grey levels below it.
    struct Threshold {
        var tenths: UInt32
        var levels: UInt32

        /// Print on paper: at most 80 % of the local mean and 12 grey levels below it.
        static let print = Threshold(tenths: 8, levels: 12)
        /// Print under glare or a screen's own light: at most 90 % of the local mean and 6 levels below it.
        static let faint = Threshold(tenths: 9, levels: 6)
    }

    /// Binarises against the mean of a `window`-pixel square around each pixel (an integral image: uneven light
    /// and glare move the mean with them), then labels 8-connected dark pixels with union-find.
    static func find(in image: GrayImage, window: Int, threshold: Threshold = .print) -> [InkComponent] {
        let width = image.width, height = image.height
        guard width > 2, height > 2 else { return [] }
        var labels = Labels(count: width * height)
        labels.label(binarise(image, window: window, threshold: threshold), width: width, height: height)
        return labels.components(width: width, height: height)
    }

    /// Union-find over the labels of dark pixels.
    private struct Labels {
        var labels: [Int32]
        var parent: [Int32] = [0]

        init(count: Int) { labels = [Int32](repeating: 0, count: count) }

        mutating func root(_ label: Int32) -> Int32 {
            var label = label
            while parent[Int(label)] != label {
                parent[Int(label)] = parent[Int(parent[Int(label)])]
                label = parent[Int(label)]
            }
            return label
        }

        mutating func union(_ a: Int32, _ b: Int32) -> Int32 {
            let (ra, rb) = (root(a), root(b))
            if ra == rb { return ra }
            let (low, high) = ra < rb ? (ra, rb) : (rb, ra)
            parent[Int(high)] = low
            return low
        }

        /// First pass: each dark pixel takes the label of the four neighbours already visited (left, and the three
        /// above), uniting theirs, or a new one.
        mutating func label(_ dark: [Bool], width: Int, height: Int) {
            var labels = self.labels
            defer { self.labels = labels }
            self.labels = []
            dark.withUnsafeBufferPointer { dark in
                labels.withUnsafeMutableBufferPointer { labels in
                    for y in 0..<height {
                        let row = y * width
                        for x in 0..<width where dark[row + x] {
                            var label: Int32 = 0
                            if x > 0, labels[row + x - 1] != 0 { label = labels[row + x - 1] }
                            if y > 0 {
                                let above = row - width + x
                                for neighbour in [x > 0 ? above - 1 : -1, above, x + 1 < width ? above + 1 : -1] where neighbour >= 0 {
                                    let other = labels[neighbour]
                                    guard other != 0 else { continue }
                                    label = label == 0 ? other : union(label, other)
                                }
                            }
                            if label == 0 {
                                label = Int32(parent.count)
                                parent.append(label)
                            }
                            labels[row + x] = label
                        }
                    }
                }
            }
        }

        /// Second pass: every label to its root, and the roots' boxes and sums.
        mutating func components(width: Int, height: Int) -> [InkComponent] {
            var index = [Int32](repeating: -1, count: parent.count)
            var components: [InkComponent] = []
            let labels = self.labels
            labels.withUnsafeBufferPointer { labels in
                for y in 0..<height {
                    for x in 0..<width {
                        let label = labels[y * width + x]
                        guard label != 0 else { continue }
                        let top = root(label)
                        if index[Int(top)] < 0 {
                            index[Int(top)] = Int32(components.count)
                            components.append(InkComponent(minX: x, minY: y, maxX: x, maxY: y, pixels: 0, sumX: 0, sumY: 0))
                        }
                        let at = Int(index[Int(top)])
                        components[at].minX = min(components[at].minX, x)
                        components[at].maxX = max(components[at].maxX, x)
                        components[at].maxY = y
                        components[at].pixels += 1
                        components[at].sumX += x
                        components[at].sumY += y
                    }
                }
            }
            return components
        }
    }

    /// Dark: below the local mean by `threshold`.
    static func binarise(_ image: GrayImage, window: Int, threshold: Threshold = .print) -> [Bool] {
        let width = image.width, height = image.height
        // Row-major integral image, one row and column of zeros first. 32 bits hold 16 million pixels of 255.
        var integral = [UInt32](repeating: 0, count: (width + 1) * (height + 1))
        image.pixels.withUnsafeBufferPointer { pixels in
            integral.withUnsafeMutableBufferPointer { sums in
                for y in 0..<height {
                    var rowSum: UInt32 = 0
                    for x in 0..<width {
                        rowSum &+= UInt32(pixels[y * width + x])
                        sums[(y + 1) * (width + 1) + x + 1] = sums[y * (width + 1) + x + 1] &+ rowSum
                    }
                }
            }
        }
        let half = max(1, window / 2)
        var dark = [Bool](repeating: false, count: width * height)
        image.pixels.withUnsafeBufferPointer { pixels in
            integral.withUnsafeBufferPointer { sums in
                dark.withUnsafeMutableBufferPointer { dark in
                    for y in 0..<height {
                        let top = max(0, y - half), bottom = min(height, y + half + 1)
                        for x in 0..<width {
                            let left = max(0, x - half), right = min(width, x + half + 1)
                            let total =
                                sums[bottom * (width + 1) + right] &- sums[top * (width + 1) + right]
                                &- sums[bottom * (width + 1) + left] &+ sums[top * (width + 1) + left]
                            let area = UInt32((bottom - top) * (right - left))
                            let value = UInt32(pixels[y * width + x])
                            // value < tenths / 10 of the mean and value + levels < mean, in integers.
                            dark[y * width + x] =
                                value * area * 10 < total * threshold.tenths && (value + threshold.levels) * area < total
                        }
                    }
                }
            }
        }
        return dark
    }
}
