/// Rows under a header, for a terminal: each column as wide as its widest cell and two spaces from the next, so that
/// every column starts at the same offset on every line. One column may give way: when the table is wider than the
/// width asked for, that column gets what the others leave (never less than its header) and its longer cells are
/// shortened in the middle with `…`. Cells are escaped (`escapingControls`) before they are measured, a character
/// as one column (what it lists is ASCII: the ids a run records pass `VerificationQR.isSafeIdentifier`, the rest are
/// the model's words).
package struct TextTable: Sendable {
    package static let gap = "  "

    private let headers: [String]
    private let shrinking: Int?
    private var rows: [[String]] = []

    /// `shrinking`: the index of the column that gives way to fit a width.
    package init(headers: [String], shrinking: Int? = nil) {
        self.headers = headers.map(\.escapingControls)
        self.shrinking = shrinking
    }

    /// A row of one cell per header.
    package mutating func append(_ cells: [String]) {
        precondition(cells.count == headers.count, "a row has one cell per column")
        rows.append(cells.map(\.escapingControls))
    }

    /// The header and the rows, at most `width` characters each when the others leave the shrinking column its header's
    /// width; nil: every cell whole.
    package func lines(width: Int?) -> [String] {
        let widths = columnWidths(fitting: width)
        return ([headers] + rows).map { cells in
            var line = ""
            for (column, cell) in cells.enumerated() {
                let text = cell.shortenedInMiddle(to: widths[column])
                line += column == cells.count - 1 ? text : text + String(repeating: " ", count: widths[column] - text.count) + Self.gap
            }
            return line
        }
    }

    private func columnWidths(fitting width: Int?) -> [Int] {
        var widths = headers.indices.map { column in rows.reduce(headers[column].count) { max($0, $1[column].count) } }
        guard let width, let shrinking else { return widths }
        let others = widths.indices.filter { $0 != shrinking }.reduce(0) { $0 + widths[$1] } + Self.gap.count * (widths.count - 1)
        widths[shrinking] = max(headers[shrinking].count, min(widths[shrinking], width - others))
        return widths
    }
}

extension String {
    /// At most `width` characters: the start and the end kept, the middle replaced by `…` (an id's end tells it
    /// apart as often as its start, so the end keeps the odd character).
    package func shortenedInMiddle(to width: Int) -> String {
        guard count > width else { return self }
        guard width > 1 else { return String(prefix(width)) }
        let head = (width - 1) / 2
        return prefix(head) + "…" + suffix(width - 1 - head)
    }
}
