import Testing
import TransactionViews

/// The table the transaction list is printed as: within a width, aligned whatever the cells hold.
@Suite("Text table")
struct TextTableTests {
    /// Ids from 1 to 90 characters, one holding a terminal control, beside cells of fixed widths.
    static func table() -> TextTable {
        var table = TextTable(headers: ["TRANSACTION", "STATUS", "UPDATED"], shrinking: 0)
        for length in 1...90 {
            let id = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            table.append([id, length.isMultiple(of: 2) ? "NOT_STARTED" : "PROCESS", "2026-11-22T00:00:03Z"])
        }
        table.append(["txn-\u{1B}[2J-escaped", "STARTED", "2026-11-22T00:00:04Z"])
        return table
    }

    /// Where each column starts on every line: at the header's offsets, two spaces after the column before.
    static func expectAligned(_ lines: [String]) {
        let header = lines[0]
        let starts = ["STATUS", "UPDATED"].map { header.distance(from: header.startIndex, to: header.range(of: $0)!.lowerBound) }
        for line in lines.dropFirst() {
            let characters = Array(line)
            for start in starts {
                #expect(characters[start - 2] == " " && characters[start - 1] == " " && characters[start] != " ", "\(line)")
            }
        }
    }

    @Test("every line fits the width, every column starts at one offset, long ids are shortened in the middle", arguments: [50, 60, 80, 100])
    func fits(_ width: Int) {
        let lines = Self.table().lines(width: width)
        #expect(lines.count == 92)
        #expect(lines.allSatisfy { $0.count <= width }, "\(lines.map(\.count).max() ?? 0) > \(width)")
        #expect(lines.map(\.count).max() == width, "the id column takes the room the others leave")
        Self.expectAligned(lines)
        // The 90-character id: its start and its end, `…` between.
        let longest = lines[90]
        let id = String(longest.prefix { $0 != " " })
        #expect(id.hasPrefix("abcd") && id.hasSuffix("jkl") && id.contains("…"), "\(id)")
        #expect(lines[1].hasPrefix("a  "), "a short id stays whole")
        #expect(lines[91].hasPrefix("txn-\\u{") && !lines[91].contains("\u{1B}"), "a control is escaped, and measured escaped")
    }

    @Test("narrower than the other columns allow, the id keeps its header's width")
    func narrowest() {
        let lines = Self.table().lines(width: 20)
        #expect(lines.dropFirst().allSatisfy { $0.count == 11 + 2 + 11 + 2 + 20 })
        #expect(lines[0].hasPrefix("TRANSACTION  STATUS"))
        Self.expectAligned(lines)
    }

    @Test("with no width, every cell whole")
    func wide() {
        let lines = Self.table().lines(width: nil)
        #expect(lines[90].hasPrefix(String((0..<90).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) }) + "  "))
        #expect(!lines.joined().contains("…"))
        Self.expectAligned(lines)
    }

    @Test(
        "shortening in the middle keeps the start and one more character of the end",
        arguments: [
            (10, "abcdefghij"), (9, "abcd…ghij"), (5, "ab…ij"), (2, "…j"), (1, "a")
        ])
    func shortened(_ width: Int, _ expected: String) {
        #expect("abcdefghij".shortenedInMiddle(to: width) == expected)
        #expect(expected.count == width)
    }
}
