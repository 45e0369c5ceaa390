import Foundation
import VerifyModel

/// Where an MRZ's characters are on a page: the centre of every character cell, line by line, and the vector of
/// one pitch (the advance from one character to the next) at that cell. Image coordinates. Each line has one cell
/// more at each end than the format's characters: a line whose end was lost or padded by a stray blot comes out
/// a cell off, and the recogniser picks the window that reads best.
struct MRZGrid {
    struct Cell {
        var center: Point
        var pitch: Point
    }

    var format: MRZ.Format
    var lines: [[Cell]]
    /// How well the characters fit a regular grid: mean distance from their cells, in pitches. Lower is better.
    var residual: Double

    func scaled(by factor: Double) -> MRZGrid {
        var grid = self
        grid.lines = lines.map {
            $0.map {
                Cell(
                    center: Point(x: $0.center.x * factor, y: $0.center.y * factor),
                    pitch: Point(x: $0.pitch.x * factor, y: $0.pitch.y * factor))
            }
        }
        return grid
    }
}

/// Finds MRZ bands among a page's ink components in any position, tilt or rotation: the text direction is the
/// commonest direction between neighbouring characters; characters are chained along it into lines; two or three
/// stacked, aligned, evenly pitched lines of 30, 36 or 44 characters are an MRZ. Both readings of the direction
/// (the page as it is, and upside down) are returned: the recogniser tells them apart.
enum MRZLocator {
    static let layouts: [(format: MRZ.Format, lines: Int, characters: Int)] = [(.td3, 2, 44), (.td2, 2, 36), (.td1, 3, 30)]

    static func locate(_ all: [InkComponent]) -> [MRZGrid] {
        let components = all.filter { component in
            let size = max(component.width, component.height)
            return size >= 5 && size <= 400 && component.pixels >= 8
                && component.width <= 3 * component.height && component.height <= 6 * component.width + 6
        }
        guard components.count >= 60, let angle = textDirection(components) else { return [] }
        var grids: [MRZGrid] = []
        for turn in [0.0, Double.pi] {
            grids += locate(components, angle: angle + turn)
        }
        return grids.sorted { $0.residual < $1.residual }
    }

    /// The commonest direction (modulo 180°) from a character to its nearest similar neighbour, in radians.
    static func textDirection(_ components: [InkComponent]) -> Double? {
        let sizes = components.map { Double(max($0.width, $0.height)) }
        let cellSize = max(4.0, median(sizes) * 2)
        var buckets: [Int: [Int]] = [:]
        func key(_ x: Double, _ y: Double) -> Int { Int(x / cellSize) * 100_003 + Int(y / cellSize) }
        for (index, component) in components.enumerated() {
            buckets[key(component.center.x, component.center.y), default: []].append(index)
        }
        var histogram = [Double](repeating: 0, count: 180)
        for (index, component) in components.enumerated() {
            let center = component.center, size = sizes[index]
            var best: (distance: Double, angle: Double)?
            let cx = Int(center.x / cellSize), cy = Int(center.y / cellSize)
            for bx in (cx - 1)...(cx + 1) {
                for by in (cy - 1)...(cy + 1) {
                    for other in buckets[bx * 100_003 + by] ?? [] where other != index {
                        let ratio = sizes[other] / size
                        guard ratio > 0.7, ratio < 1.43 else { continue }
                        let dx = components[other].center.x - center.x, dy = components[other].center.y - center.y
                        let distance = (dx * dx + dy * dy).squareRoot()
                        guard distance < 2.2 * size, distance < best?.distance ?? .infinity else { continue }
                        best = (distance, atan2(dy, dx))
                    }
                }
            }
            guard let best else { continue }
            var degrees = best.angle * 180 / .pi
            while degrees < 0 { degrees += 180 }
            histogram[Int(degrees.rounded()) % 180] += 1
        }
        // Smoothed over ±2°, then the peak refined by the mean of its neighbourhood.
        let smoothed = (0..<180).map { bin in (-2...2).reduce(0.0) { $0 + histogram[(bin + $1 + 180) % 180] } }
        guard let peak = smoothed.indices.max(by: { smoothed[$0] < smoothed[$1] }), smoothed[peak] >= 20 else { return nil }
        var weight = 0.0, sum = 0.0
        for offset in -3...3 {
            let count = histogram[(peak + offset + 180) % 180]
            weight += count
            sum += count * Double(peak + offset)
        }
        return (weight > 0 ? sum / weight : Double(peak)) * .pi / 180
    }

    private struct Placed {
        var u: Double, v: Double, size: Double
    }

    private struct Line {
        var members: [Placed]
        var pitch: Double
        var start: Double, end: Double
        var v: Double
    }

    private static func locate(_ components: [InkComponent], angle: Double) -> [MRZGrid] {
        let (c, s) = (cos(angle), sin(angle))
        let placed = components.map { component -> Placed in
            let p = component.center
            return Placed(u: p.x * c + p.y * s, v: -p.x * s + p.y * c, size: Double(max(component.width, component.height)))
        }.sorted { $0.u < $1.u }
        let lines = chains(placed)
        var grids: [MRZGrid] = []
        for layout in layouts {
            for group in stacks(lines, count: layout.lines, characters: layout.characters) {
                if let grid = fit(group, layout: layout, cos: c, sin: s) { grids.append(grid) }
            }
        }
        return grids
    }

    /// Chains characters left to right: each one's successor is the nearest one ahead on the same line, a pitch or
    /// two away. Chains of at least 15 are returned as lines.
    private static func chains(_ placed: [Placed]) -> [Line] {
        var lines: [Line] = []
        for chained in joined(fragments(placed)) where chained.count >= 15 {
            let members = characters(chained)
            let steps = zip(members.dropFirst(), members).map { $0.u - $1.u }
            let pitch = median(steps)
            lines.append(
                Line(
                    members: members, pitch: pitch, start: members.first!.u, end: members.last!.u,
                    v: members.map(\.v).reduce(0, +) / Double(members.count)))
        }
        return lines.sorted { $0.v < $1.v }
    }

    /// Runs of at least 3 characters, each linked to its successor: the nearest one ahead on the same line, a pitch or
    /// two away (two characters claiming one successor: the closer keeps it).
    private static func fragments(_ placed: [Placed]) -> [[Placed]] {
        var successor = [Int](repeating: -1, count: placed.count)
        var successorCost = [Double](repeating: .infinity, count: placed.count)
        var predecessor = [Int](repeating: -1, count: placed.count)
        for i in placed.indices {
            let a = placed[i]
            var best = -1, bestCost = Double.infinity
            var j = i + 1
            while j < placed.count, placed[j].u - a.u < 2.6 * a.size {
                let b = placed[j]
                let du = b.u - a.u, dv = abs(b.v - a.v), ratio = b.size / a.size
                if du > 0.35 * a.size, dv < 0.4 * a.size, ratio > 0.6, ratio < 1.6 {
                    let cost = du + 3 * dv
                    if cost < bestCost { (best, bestCost) = (j, cost) }
                }
                j += 1
            }
            guard best >= 0 else { continue }
            // Two characters claiming one successor: the closer keeps it.
            if predecessor[best] >= 0 {
                guard bestCost < successorCost[predecessor[best]] else { continue }
                successor[predecessor[best]] = -1
            }
            successor[i] = best
            successorCost[i] = bestCost
            predecessor[best] = i
        }
        var fragments: [[Placed]] = []
        for start in placed.indices where predecessor[start] < 0 && successor[start] >= 0 {
            var members: [Placed] = []
            var at = start
            while at >= 0 {
                members.append(placed[at])
                at = successor[at]
            }
            if members.count >= 3 { fragments.append(members) }
        }
        return fragments
    }

    /// A line broken where one link failed (a filler much smaller than the letter before it, a blot) is joined
    /// again: fragments in line with each other, on the same pitch, a few pitches apart or overlapping by a character.
    private static func joined(_ fragments: [[Placed]]) -> [[Placed]] {
        var fragments = fragments
        // A line broken where one link failed (a filler much smaller than the letter before it, a blot) is joined
        // again: fragments in line with each other, on the same pitch, a few pitches apart or overlapping by a character.
        fragments.sort { $0.first!.u < $1.first!.u }
        var joined: [[Placed]] = []
        var used = [Bool](repeating: false, count: fragments.count)
        for index in fragments.indices where !used[index] {
            var members = fragments[index]
            used[index] = true
            var extended = true
            while extended {
                extended = false
                let pitch = median(zip(members.dropFirst(), members).map { $0.u - $1.u })
                // Where each side runs, from a line through its last (first) six members: a single member may be a
                // piece of a character (the top loop of a hollow `8`), off the line by half its height.
                let tail = course(members.suffix(6))
                for other in fragments.indices where !used[other] {
                    let head = fragments[other].first!, end = members.last!
                    let gap = head.u - end.u
                    let middle = (head.u + end.u) / 2
                    guard gap > -1.5 * pitch, gap < 4.5 * pitch,
                        abs(course(fragments[other].prefix(6))(middle) - tail(middle)) < 0.45 * pitch
                    else { continue }
                    let otherPitch = median(zip(fragments[other].dropFirst(), fragments[other]).map { $0.u - $1.u })
                    guard abs(otherPitch / pitch - 1) < 0.25 else { continue }
                    // Fragments that overlap share a character or two in pieces (a hollow character's top in one,
                    // its foot in the other): in order along the line, `characters` merges them.
                    members = (members + fragments[other]).sorted { $0.u < $1.u }
                    used[other] = true
                    extended = true
                    break
                }
            }
            joined.append(members)
        }
        return joined
    }

    /// The least-squares line through `members` (across the text direction, as a function of the position along it);
    /// their mean where there are too few to fit one.
    private static func course(_ members: ArraySlice<Placed>) -> (Double) -> Double {
        if let line = Polynomial.fit(x: members.map(\.u), y: members.map(\.v), degree: 1) { return line.value(at:) }
        let mean = members.map(\.v).reduce(0, +) / Double(max(1, members.count))
        return { _ in mean }
    }

    /// A chain's members, the pieces of one character merged: a character broken in two (a hollow `4` or `M`) is two
    /// members half a pitch apart, and counted cell by cell they would put every character after them a cell off.
    private static func characters(_ members: [Placed]) -> [Placed] {
        let pitch = median(zip(members.dropFirst(), members).map { $0.u - $1.u })
        var runs: [[Placed]] = []
        for member in members {
            if let last = runs.last?.last, member.u - last.u < 0.6 * pitch {
                runs[runs.count - 1].append(member)
            } else {
                runs.append([member])
            }
        }
        return runs.map { run in
            let count = Double(run.count)
            return Placed(
                u: run.map(\.u).reduce(0, +) / count, v: run.map(\.v).reduce(0, +) / count, size: run.map(\.size).max()!)
        }
    }

    /// Runs of `count` lines stacked one under the other, each about `characters` pitches long, beginning or ending
    /// together: a line found a character or two short (a hollow first character fallen apart) still ends with the
    /// others, and `fit` puts its characters in their columns. Stacked by its beginning only, such a band was found
    /// upside down alone and refused.
    private static func stacks(_ lines: [Line], count: Int, characters: Int) -> [[Line]] {
        func fits(_ line: Line) -> Bool {
            let length = (line.end - line.start) / line.pitch + 1
            return length > Double(characters) * 0.85 && length < Double(characters) * 1.12
        }
        let candidates = lines.filter(fits)
        guard candidates.count >= count else { return [] }
        var groups: [[Line]] = []
        func extend(_ group: [Line], from index: Int) {
            if group.count == count {
                groups.append(group)
                return
            }
            for next in index..<candidates.count {
                let line = candidates[next]
                if let last = group.last {
                    let pitch = (last.pitch + line.pitch) / 2
                    let gap = line.v - last.v
                    guard gap > 1.0 * pitch, gap < 3.2 * pitch, abs(line.pitch / last.pitch - 1) < 0.15,
                        abs(line.start - last.start) < 1.5 * pitch || abs(line.end - last.end) < 1.5 * pitch
                    else { continue }
                }
                extend(group + [line], from: next + 1)
            }
        }
        extend([], from: 0)
        return groups
    }

    /// Cells counted along the line step by step, each step in the local pitch (which perspective changes along the
    /// line), from the cell of the line's first character.
    private static func walk(_ line: Line, from first: Double, fit: Polynomial?) -> [Double] {
        var positions = [first]
        for (previous, member) in zip(line.members, line.members.dropFirst()) {
            let local = fit.map { $0.derivative(at: positions.last!) } ?? line.pitch
            positions.append(positions.last! + max(1, ((member.u - previous.u) / max(local, 1)).rounded()))
        }
        return positions
    }

    /// A line's cells from `first`, and the quadratic of their positions along the line.
    private static func fitted(_ line: Line, from first: Double) -> (positions: [Double], u: Polynomial)? {
        var positions = walk(line, from: first, fit: nil)
        guard let rough = Polynomial.fit(x: positions, y: line.members.map(\.u), degree: 2) else { return nil }
        positions = walk(line, from: first, fit: rough)
        guard let u = Polynomial.fit(x: positions, y: line.members.map(\.u), degree: 2) else { return nil }
        return (positions, u)
    }

    /// Assigns every character of each line to a cell and fits the cells' positions along the line (a quadratic:
    /// a photographed page's pitch changes along the line) and across it (a line: the line may be slanted; a parabola
    /// where it is bowed, `across`).
    private static func fit(
        _ group: [Line], layout: (format: MRZ.Format, lines: Int, characters: Int),
        cos c: Double, sin s: Double
    ) -> MRZGrid? {
        let pitch = group.map(\.pitch).reduce(0, +) / Double(group.count)
        let n = Double(layout.characters)
        // A line as long as the format's is whole: its first character is cell 0.
        var fits = group.map { line -> (positions: [Double], u: Polynomial)? in
            abs((line.end - line.start) / line.pitch + 1 - n) < 0.6 ? fitted(line, from: 0) : nil
        }
        // A shorter one lost characters: its first is in the column of the nearest whole line's cell beside it
        // (columns line up; under perspective the lines' left edges do not quite).
        for index in group.indices where fits[index] == nil {
            let line = group[index]
            let reference = group.indices.filter { fits[$0] != nil }.min { abs(group[$0].v - line.v) < abs(group[$1].v - line.v) }
            let first: Double
            if let reference, let u = fits[reference]?.u {
                first = Double(
                    (-1...layout.characters).min { abs(u.value(at: Double($0)) - line.start) < abs(u.value(at: Double($1)) - line.start) }!)
            } else {
                first = ((line.start - group.map(\.start).min()!) / pitch).rounded()
            }
            fits[index] = fitted(line, from: first)
        }
        var residuals: [Double] = []
        var lines: [[MRZGrid.Cell]] = []
        for (line, fit) in zip(group, fits) {
            guard let (positions, uFit) = fit,
                let vFit = across(line, pitch: pitch),
                let first = positions.first, let last = positions.last,
                first > -1.5, last < n + 0.5
            else { return nil }
            for (member, position) in zip(line.members, positions) {
                residuals.append(abs(uFit.value(at: position) - member.u) / pitch)
            }
            lines.append(
                (-1...layout.characters).map { index in
                    let u = uFit.value(at: Double(index))
                    let v = vFit.value(at: u)
                    let step = uFit.derivative(at: Double(index))
                    return MRZGrid.Cell(center: Point(x: u * c - v * s, y: u * s + v * c), pitch: Point(x: step * c, y: step * s))
                })
        }
        let residual = residuals.reduce(0, +) / Double(max(1, residuals.count))
        guard residual < 0.25 else { return nil }
        return MRZGrid(format: layout.format, lines: lines, residual: residual)
    }

    /// A line's position across the text direction along it: a straight line, or a parabola where the line is bowed
    /// (a passport page bulging near its spine, a card on a curved surface). A straight line's characters sit within
    /// 0.06 of a pitch of it (their centroids differ by glyph) and a parabola fits them no better; a bowed line's are
    /// 0.07-0.33 off a straight line and 0.03-0.07 off a parabola, and read with a straight line the characters at its
    /// ends are sampled with their tops or feet cut off (an `I` read `T`, 277 of 289 bowed pages unread).
    private static func across(_ line: Line, pitch: Double) -> Polynomial? {
        let us = line.members.map(\.u), vs = line.members.map(\.v)
        guard let straight = Polynomial.fit(x: us, y: vs, degree: 1) else { return nil }
        guard let bowed = Polynomial.fit(x: us, y: vs, degree: 2) else { return straight }
        func deviation(_ fit: Polynomial) -> Double {
            (zip(us, vs).map { (fit.value(at: $0) - $1) * (fit.value(at: $0) - $1) }.reduce(0, +) / Double(us.count)).squareRoot()
        }
        let offStraight = deviation(straight)
        return offStraight > bowedBeyond * pitch && deviation(bowed) < 0.6 * offStraight ? bowed : straight
    }

    /// How far (in pitches, root mean square) a line's characters must be off a straight line for it to be fitted as
    /// bowed.
    static let bowedBeyond = 0.07

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}

/// A least-squares polynomial of degree 1 or 2.
struct Polynomial {
    var coefficients: [Double]

    func value(at x: Double) -> Double { coefficients.reversed().reduce(0) { $0 * x + $1 } }
    func derivative(at x: Double) -> Double {
        coefficients.count > 2 ? coefficients[1] + 2 * coefficients[2] * x : (coefficients.count > 1 ? coefficients[1] : 0)
    }

    static func fit(x: [Double], y: [Double], degree: Int) -> Polynomial? {
        let n = degree + 1
        guard x.count >= n + 1 else { return nil }
        // Normal equations, solved by Gaussian elimination with partial pivoting.
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: n + 1), count: n)
        for (xi, yi) in zip(x, y) {
            var powers = [Double](repeating: 1, count: 2 * n)
            for k in 1..<(2 * n) { powers[k] = powers[k - 1] * xi }
            for row in 0..<n {
                for column in 0..<n { matrix[row][column] += powers[row + column] }
                matrix[row][n] += powers[row] * yi
            }
        }
        for column in 0..<n {
            guard let pivot = (column..<n).max(by: { abs(matrix[$0][column]) < abs(matrix[$1][column]) }),
                abs(matrix[pivot][column]) > 1e-12
            else { return nil }
            matrix.swapAt(column, pivot)
            for row in 0..<n where row != column {
                let factor = matrix[row][column] / matrix[column][column]
                for k in column...n { matrix[row][k] -= factor * matrix[column][k] }
            }
        }
        return Polynomial(coefficients: (0..<n).map { matrix[$0][n] / matrix[$0][$0] })
    }
}
