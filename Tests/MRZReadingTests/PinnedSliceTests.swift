import BlockingWaits
import Foundation
import ImageDecoding
import Testing
import VerifyModel

@testable import MRZReading

/// A slice of `scripts/bench-mrz`'s corpus, pinned: the kept generator (`scripts/generator/mrz_pages.py`, seed 29,
/// two pages of each of its 28 conditions) makes the pages, and each page's outcome is compared with the one kept in
/// `Fixtures/pinned-slice.json`: read (its lines must be the generator's, whatever the pin says) by a pass, refused
/// for a reason at a field, or nothing found. A change in what the reader reads fails here rather than in the next
/// benchmark run. `VERIFY_PIPELINE_PIN_RECORD=1` writes the file anew from what the reader reads (never a wrong
/// reading: that fails the test first); read the diff before committing it.
@Suite("MRZ reader: a pinned slice of the benchmark")
struct PinnedSliceTests {
    static let seed = 29
    static let perCondition = 2
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pinned = root.appendingPathComponent("Tests/MRZReadingTests/Fixtures/pinned-slice.json")
    /// The generator's expiry dates are years ahead of this; its birth dates behind.
    static let referenceDate = Date(timeIntervalSince1970: 1_780_000_000)

    struct Outcome: Codable, Equatable, CustomStringConvertible {
        /// `read`, `refused` or `none`.
        var outcome: String
        var pass: String?
        var reason: String?
        var field: String?

        var description: String { [outcome, pass, reason, field].compactMap { $0 }.joined(separator: " ") }
    }

    struct Truth: Decodable {
        var lines: [String]
    }

    @Test("each page of the pinned slice reads, or is refused, as pinned; no page reads wrong")
    func slice() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pinned-slice-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.generate(into: folder)
        let truth = try JSONDecoder().decode([String: Truth].self, from: Data(contentsOf: folder.appendingPathComponent("expected.json")))
        #expect(truth.count == 28 * Self.perCondition + 1 || truth.count == 28 * Self.perCondition, "\(truth.count) pages")
        let read = try await Self.read(truth.keys.sorted(), in: folder)
        let outcomes = read.mapValues(\.outcome)
        let wrong = read.filter { $0.value.lines != nil && $0.value.lines != truth[$0.key]?.lines }.keys
        #expect(wrong.isEmpty, "read wrong (seed \(Self.seed)): \(wrong.sorted())")
        if ProcessInfo.processInfo.environment["VERIFY_PIPELINE_PIN_RECORD"] == "1" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try (encoder.encode(outcomes) + Data("\n".utf8)).write(to: Self.pinned)
            return
        }
        let expected = try JSONDecoder().decode([String: Outcome].self, from: Data(contentsOf: Self.pinned))
        #expect(Set(expected.keys) == Set(outcomes.keys), "the slice's pages are not the pinned ones (seed \(Self.seed))")
        let changed = expected.keys.sorted().filter { expected[$0] != outcomes[$0] }
        let report = changed.map { "\($0): pinned \(expected[$0]!), now \(outcomes[$0].map(\.description) ?? "-")" }
        #expect(changed.isEmpty, "\(changed.count) of \(expected.count) pages changed (seed \(Self.seed)): \(report.joined(separator: "; "))")
        // The slice shows every kind of outcome, so that a change in any of them shows.
        let kinds = Set(outcomes.values.map(\.outcome))
        #expect(kinds == ["read", "refused", "none"], "\(kinds)")
    }

    static func generate(into folder: URL) async throws {
        let generator = root.appendingPathComponent("scripts/generator/mrz_pages.py").path
        // One process, killed past 300 s: a multiprocessing pool whose worker died hung once under the full suite, and
        // the test process passes a signal mask blocking SIGTERM on to its children.
        let arguments = [generator, folder.path, "--per-condition", "\(perCondition)", "--seed", "\(seed)", "--jobs", "1"]
        let status = try await offCooperativePool { () throws -> Int32 in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments = ["-s", "KILL", "300", "/usr/bin/python3"] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 0, "the generator failed or ran past 300 s (python3-pil, python3-numpy and fonts-ocr-b: scripts/install-deps)")
    }

    /// Each page's outcome, two pages at a time.
    static func read(_ pages: [String], in folder: URL) async throws -> [String: (outcome: Outcome, lines: [String]?)] {
        try await withThrowingTaskGroup(of: (String, (outcome: Outcome, lines: [String]?)).self) { group in
            var outcomes: [String: (outcome: Outcome, lines: [String]?)] = [:]
            var pending = pages[...]
            func next() -> String? { pending.popFirst() }
            for _ in 0..<2 {
                guard let page = next() else { break }
                group.addTask { try await (page, outcome(of: folder.appendingPathComponent(page))) }
            }
            while let (page, outcome) = try await group.next() {
                outcomes[page] = outcome
                if let page = next() { group.addTask { try await (page, Self.outcome(of: folder.appendingPathComponent(page))) } }
            }
            return outcomes
        }
    }

    /// A page's outcome, and the lines read.
    static func outcome(of file: URL) async throws -> (outcome: Outcome, lines: [String]?) {
        let bytes = [UInt8](try Data(contentsOf: file))
        return try await offCooperativePool { () throws -> (outcome: Outcome, lines: [String]?) in
            switch try MRZImageReader(referenceDate: referenceDate).read(bytes, decoder: ImageDecoder()) {
            case .read(let reading): (Outcome(outcome: "read", pass: reading.pass.rawValue), reading.mrz.lines)
            case .unreadable(let refusal), .misprinted(_, let refusal):
                (Outcome(outcome: "refused", pass: refusal.pass.rawValue, reason: refusal.reason.rawValue, field: refusal.field.rawValue), nil)
            case .notFound: (Outcome(outcome: "none"), nil)
            }
        }
    }
}
