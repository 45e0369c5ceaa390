import ImageDecoding

extension GrayImage {
    /// Outline (hollow) print made solid: the ink as `InkComponents` binarises it, with every hole that is a stroke's
    /// hollow filled in. A hole (paper enclosed by ink, 4-connected) is a hollow stroke when it is a thin strip: its
    /// edge pixels, squared, at least `elongation` times its area (a disc's is 4π, about 12.6), and its mean width (twice
    /// its area over its edge) at most `thinness` of its longer side. A character's counter (the inside of an `O`,
    /// a `B`'s two, an `A`'s triangle) is compact and stays paper. Ink is 0, paper 255.
    func filledHollowStrokes(window: Int, elongation: Int = 24, thinness: Double = 0.12) -> GrayImage {
        let width = self.width, height = self.height
        guard width > 2, height > 2 else { return self }
        let dark = InkComponents.binarise(self, window: window)
        // Paper flooded 4-connected, region by region; each region's area, edge pixels, extent and whether it reaches
        // the border, then the hollows filled in a second pass.
        struct Region {
            var area = 0, edge = 0, minX: Int, maxX: Int, minY: Int, maxY: Int
            var touchesBorder = false
        }
        var region = [Int32](repeating: -1, count: width * height)
        var regions: [Region] = []
        var stack: [Int32] = []
        for start in 0..<(width * height) where !dark[start] && region[start] < 0 {
            let id = Int32(regions.count)
            var stats = Region(minX: width, maxX: 0, minY: height, maxY: 0)
            region[start] = id
            stack.append(Int32(start))
            while let popped = stack.popLast() {
                let pixel = Int(popped), x = pixel % width, y = pixel / width
                stats.area += 1
                stats.minX = Swift.min(stats.minX, x)
                stats.maxX = Swift.max(stats.maxX, x)
                stats.minY = Swift.min(stats.minY, y)
                stats.maxY = Swift.max(stats.maxY, y)
                if x == 0 || y == 0 || x == width - 1 || y == height - 1 { stats.touchesBorder = true }
                var onEdge = false
                func visit(_ neighbour: Int) {
                    if dark[neighbour] {
                        onEdge = true
                    } else if region[neighbour] < 0 {
                        region[neighbour] = id
                        stack.append(Int32(neighbour))
                    }
                }
                if x > 0 { visit(pixel - 1) }
                if x < width - 1 { visit(pixel + 1) }
                if y > 0 { visit(pixel - width) }
                if y < height - 1 { visit(pixel + width) }
                if onEdge { stats.edge += 1 }
            }
            regions.append(stats)
        }
        let hollow = regions.map { stats in
            let side = Swift.max(stats.maxX - stats.minX, stats.maxY - stats.minY) + 1
            return !stats.touchesBorder && stats.edge > 0 && stats.edge * stats.edge >= elongation * stats.area
                && Double(2 * stats.area) / Double(stats.edge) <= thinness * Double(side)
        }
        var pixels = [UInt8](repeating: 255, count: width * height)
        for index in pixels.indices where dark[index] || hollow[Int(region[index])] { pixels[index] = 0 }
        return GrayImage(
            width: width, height: height, packed: pixels, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }
}
