import AsyncAlgorithms
import NIOCore
import SeededRandom
import Testing

@testable import Pipeline

@Suite("Splitting standard input into NDJSON lines")
struct LineSplitterTests {
    func lines(_ text: String, chunkSizes: [Int], maxLineBytes: Int = 1 << 20) async throws -> [InputLine] {
        var bytes = Array(text.utf8)[...]
        var chunks: [ByteBuffer] = []
        var index = 0
        while !bytes.isEmpty {
            let size = max(1, chunkSizes[index % chunkSizes.count])
            chunks.append(ByteBuffer(bytes: bytes.prefix(size)))
            bytes = bytes.dropFirst(size)
            index += 1
        }
        var result: [InputLine] = []
        for try await line in LineSplitter(chunks: chunks.async, maxLineBytes: maxLineBytes) { result.append(line) }
        return result
    }

    @Test("lines, CRLF endings and a last line without a newline; a blank tail is no line")
    func basics() async throws {
        #expect(try await lines("a\nbb\r\nccc", chunkSizes: [1 << 16]) == [.text("a"), .text("bb"), .text("ccc")])
        #expect(try await lines("a\n \t\r", chunkSizes: [3]) == [.text("a")])
        #expect(try await lines("", chunkSizes: [1]) == [])
    }

    @Test("a line over the limit is counted and dropped as it streams past; the next line is read whole")
    func tooLong() async throws {
        let long = String(repeating: "x", count: 5_000)
        #expect(
            try await lines("\(long)\nok\n\(long)", chunkSizes: [700], maxLineBytes: 1_000)
                == [.tooLong(bytes: 5_000), .text("ok"), .tooLong(bytes: 5_000)])
    }

    @Test("a line over the limit that arrives whole in one chunk is refused too, the last one included")
    func tooLongInOneChunk() async throws {
        let long = String(repeating: "x", count: 1_001), limit = String(repeating: "y", count: 1_000)
        #expect(
            try await lines("\(long)\n\(limit)\n\(long)", chunkSizes: [1 << 16], maxLineBytes: 1_000)
                == [.tooLong(bytes: 1_001), .text(limit), .tooLong(bytes: 1_001)])
    }

    @Test("any chunking of the same bytes gives the same lines (seeded)", arguments: [1, 7, 42, 2026])
    func chunking(_ seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let expected = (0..<200).map { index in
            String(repeating: "é\(index)", count: Int.random(in: 0...40, using: &generator))
        }.filter { !$0.isEmpty }
        let text = expected.joined(separator: "\n") + "\n"
        let sizes = (0..<64).map { _ in Int.random(in: 1...300, using: &generator) }
        #expect(try await lines(text, chunkSizes: sizes) == expected.map(InputLine.text), "seed \(seed)")
    }
}
