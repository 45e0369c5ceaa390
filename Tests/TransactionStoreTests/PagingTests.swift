import Foundation
import SeededRandom
import Testing
import VerifyModel

@testable import TransactionStore

/// The transaction list as the API pages it (`after=` a page's `next`), and the cursors a client can forge.
@Suite("Paging the transaction list")
struct PagingTests {
    /// 1,500 transactions, many sharing a millisecond (PostgreSQL keeps the microseconds apart), paged by 7: each
    /// is shown once, newest first.
    @Test("1,500 transactions paged by 7 show each once, in order", arguments: [StoreKind.sqlite, .postgres])
    func everyRowOnce(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            let base = Date(timeIntervalSince1970: 1_790_000_000.123_000)
            var expected: [(Date, String)] = []
            for n in 0..<1_500 {
                // Three rows per millisecond, 317 µs apart within it, and some with the very same time.
                let at = base.addingTimeInterval(Double(n / 3) * 0.001 + Double(n % 3) * 0.000_317 * Double(n % 2))
                let id = String(format: "txn-%04d", (n * 7_919) % 1_500)
                _ = try await store.openTransaction(
                    NewTransaction(
                        id: id, verificationCode: "1", policy: [.email: .required],
                        createdAt: at, expiresAt: at.addingTimeInterval(3_600)))
                expected.append((at, id))
            }
            var shown: [String] = []
            var cursor: TransactionCursor?
            repeat {
                let page = try await store.transactions(status: nil, search: nil, limit: 7, after: cursor)
                shown += page.transactions.map(\.id)
                // What a client gets back is text; it is parsed again as the API does.
                cursor = try page.next.map { try #require(TransactionCursor(text: $0.text)) }
                if shown.count > 2_000 { break }
            } while cursor != nil
            #expect(shown.count == 1_500, "repeats or misses: \(shown.count) rows shown")
            #expect(Set(shown).count == 1_500)
            let all = try await store.transactions(status: nil, search: nil, limit: 1_000, after: nil).transactions.map(\.id)
            #expect(Array(shown.prefix(1_000)) == all, "paging by 7 gives the order one page of 1,000 gives")
        }
    }

    /// Any 64-bit time in a forged cursor: refused when no store can hold it, and one that parses reads a page on
    /// both backends without trapping (PostgreSQL's date encoding trapped on milliseconds of 2^63 - 1).
    @Test("a cursor of any 64-bit time is refused or reads a page, on both stores", arguments: [StoreKind.sqlite, .postgres])
    func forgedCursors(_ kind: StoreKind) async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["CURSOR_SEED"] ?? "") ?? 0xC0_75_0E
        var random = SeededGenerator(seed: seed)
        var values: [Int64] = [
            .min, .max, -1, 0, 1, 253_402_300_799_999, 253_402_300_800_000, 253_402_300_799_999_999,
            253_402_300_800_000_000, 9_223_372_036_854_775, 9_223_372_036_854_776
        ]
        values += (0..<200).map { _ in Int64(bitPattern: random.next()) }
        values += (0..<100).map { _ in Int64.random(in: -1_000...300_000_000_000_000_000, using: &random) }
        let cases = values
        try await kind.withFreshStore { store, _ in
            let at = Date(timeIntervalSince1970: 1_790_000_000)
            _ = try await store.openTransaction(
                NewTransaction(
                    id: "only", verificationCode: "1", policy: [.email: .required],
                    createdAt: at, expiresAt: at.addingTimeInterval(60)))
            for value in cases {
                for text in ["u\(value)|zz", "\(value)|zz"] {
                    let encoded = Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    let microseconds = text.hasPrefix("u") ? value : (value.multipliedReportingOverflow(by: 1000).overflow ? nil : value * 1000)
                    let holdable = microseconds.map { (0...253_402_300_799_999_999).contains($0) } ?? false
                    let cursor = TransactionCursor(text: encoded)
                    #expect((cursor != nil) == holdable, "seed \(seed): \(text)")
                    guard let cursor else { continue }
                    let page = try await store.transactions(status: nil, search: nil, limit: 5, after: cursor)
                    // "only" comes after the cursor exactly when its time (or, at the same time, its id) is smaller.
                    let later = at.timeIntervalSince1970 * 1_000_000 <= Double(cursor.time.microseconds)
                    #expect(page.transactions.map(\.id) == (later ? ["only"] : []), "seed \(seed): \(text)")
                }
            }
        }
    }

    /// 1,200 transactions a second apart, ids `txn-0000` to `txn-1199`: the list `status` prints, read a page at a time.
    @Test("the status list: at most a limit, since a time, by a part of the id; next only when more match", arguments: [StoreKind.sqlite, .postgres])
    func statusList(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            let base = Date(timeIntervalSince1970: 1_790_000_000)
            for n in 0..<1_200 {
                let at = base.addingTimeInterval(Double(n))
                _ = try await store.openTransaction(
                    NewTransaction(
                        id: String(format: "txn-%04d", n), verificationCode: "1", policy: [.email: .required], createdAt: at,
                        expiresAt: at.addingTimeInterval(3_600)))
            }
            let all = try await store.transactions(status: nil, search: nil, changedSince: nil, limit: nil)
            #expect(all.transactions.count == 1_200 && all.next == nil, "more than a page of the list (500) is read whole")
            #expect(all.transactions.first?.id == "txn-1199" && all.transactions.last?.id == "txn-0000")
            let limited = try await store.transactions(status: nil, search: nil, changedSince: nil, limit: 700)
            #expect(limited.transactions.map(\.id) == Array(all.transactions.prefix(700).map(\.id)) && limited.next != nil)
            let exact = try await store.transactions(status: nil, search: nil, changedSince: nil, limit: 1_200)
            #expect(exact.transactions.count == 1_200 && exact.next == nil, "a limit of exactly as many: nothing more")
            // Since the 600th: it and the 599 after it, however the pages fall.
            let recent = try await store.transactions(status: nil, search: nil, changedSince: base.addingTimeInterval(600), limit: nil)
            #expect(recent.transactions.count == 600 && recent.transactions.last?.id == "txn-0600" && recent.next == nil)
            let recentLimited = try await store.transactions(status: nil, search: nil, changedSince: base.addingTimeInterval(1_190), limit: 10)
            #expect(recentLimited.transactions.count == 10 && recentLimited.next == nil, "the row past the limit is older: nothing more")
            let searched = try await store.transactions(status: .notStarted, search: "-11", changedSince: base.addingTimeInterval(1_150), limit: 5)
            #expect(searched.transactions.map(\.id) == ["txn-1199", "txn-1198", "txn-1197", "txn-1196", "txn-1195"] && searched.next != nil)
            let none = try await store.transactions(status: .completed, search: nil, changedSince: nil, limit: nil)
            #expect(none.transactions.isEmpty && none.next == nil)
        }
    }
}
