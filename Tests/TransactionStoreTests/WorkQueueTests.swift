import Foundation
import Testing

@testable import TransactionStore

@Suite("PostgreSQL work queue")
struct WorkQueueTests {
    @Test("Concurrent and repeated completions of a group's documents queue the group's end exactly once")
    func groupEndsExactlyOnce() async throws {
        try await StoreKind.postgres.withFreshQueue { queue in
            let batch = try await queue.createBatch(.folder)
            let groups = (0..<40).map { "folder-\($0)" }
            var items = groups.flatMap { group in (0..<3).map { NewWorkItem(job: "\(group)/\($0)", group: group) } }
            items += (0..<5).map { NewWorkItem(job: "stream-\($0)", group: nil) }
            try await queue.enqueue(items, batch: batch)

            let claimed = try await queue.claim(owner: "a", limit: 500, lease: .seconds(60))
            #expect(claimed.count == 125)
            #expect(try await queue.claim(owner: "b", limit: 500, lease: .seconds(60)).isEmpty, "everything is leased to a")
            // Every document completed twice, all at once: the second completion of an item must change nothing.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for item in claimed + claimed {
                    group.addTask {
                        try await queue.complete(item.id, transactionId: "txn-" + (item.group ?? item.job), result: "{}")
                    }
                }
                try await group.waitForAll()
            }

            let ends = try await queue.claim(owner: "b", limit: 500, lease: .seconds(60))
            #expect(ends.count == 40)
            #expect(ends.allSatisfy { $0.kind == .groupEnd })
            #expect(Set(ends.compactMap(\.group)) == Set(groups))
            #expect(try await queue.transactions(ofGroup: "folder-7", batch: batch) == ["txn-folder-7"])
            #expect(try await queue.openItems() == 40)
            for end in ends { try await queue.complete(end.id, transactionId: nil, result: "{}") }
            #expect(try await queue.openItems() == 0, "a group's end queues nothing further")
        }
    }

    @Test("A released item, or one whose lease ran out, is claimed again")
    func releaseAndLeaseExpiry() async throws {
        try await StoreKind.postgres.withFreshQueue { queue in
            let batch = try await queue.createBatch(.stream)
            try await queue.enqueue([.init(job: "one", group: nil), .init(job: "two", group: nil)], batch: batch)
            let first = try await queue.claim(owner: "a", limit: 1, lease: .seconds(600))
            let second = try await queue.claim(owner: "b", limit: 1, lease: .seconds(600))
            #expect(first.map(\.job) == ["one"] && second.map(\.job) == ["two"])
            try await queue.release(second[0].id)
            #expect(try await queue.claim(owner: "c", limit: 5, lease: .seconds(600)).map(\.job) == ["two"])

            try await queue.enqueue([.init(job: "three", group: nil)], batch: batch)
            // A lease of zero has run out by the next statement: no waiting on the clock.
            #expect(try await queue.claim(owner: "d", limit: 5, lease: .zero).map(\.job) == ["three"])
            #expect(try await queue.claim(owner: "e", limit: 5, lease: .seconds(600)).map(\.job) == ["three"])
        }
    }
}
