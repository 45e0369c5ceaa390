import Crypto
import Foundation
import Logging
import PostgresNIO
import PostgresTestSupport
import Testing

@testable import TransactionStore
@testable import WorkQueues

/// Runs `body` with the work queue of a fresh PostgreSQL database.
func withFreshQueue(_ body: @escaping @Sendable (any WorkQueue) async throws -> Void) async throws {
    let location = try StoreLocation(parsing: try await TestPostgres.freshDatabase(prefix: "queue"))
    try await location.withWorkQueue(create: true) { _, queue in try await body(queue) }
}

@Suite("PostgreSQL work queue")
struct WorkQueueTests {
    @Test("Concurrent and repeated completions of a group's documents queue the group's end exactly once")
    func groupEndsExactlyOnce() async throws {
        try await withFreshQueue { queue in
            let batch = try await queue.createBatch(.folder)
            let groups = (0..<40).map { "folder-\($0)" }
            var items = groups.flatMap { group in (0..<3).map { NewWorkItem(job: "\(group)/\($0)", group: group) } }
            items += (0..<5).map { NewWorkItem(job: "stream-\($0)", group: nil) }
            try await queue.enqueue(items, batch: batch)

            let claimed = try await queue.claim(owner: "a", limit: 500, lease: .seconds(60))
            #expect(claimed.count == 125)
            #expect(try await queue.claim(owner: "b", limit: 500, lease: .seconds(60)).isEmpty, "everything is leased to a")
            // Every document completed twice at once, 24 items (48 completions) at a time: the second completion of an
            // item must change nothing. (All 250 at once queued for the pool's connections longer than a store
            // operation's 30 s bound on a loaded 2-core machine: that measured the machine, not the queue.)
            for start in stride(from: 0, to: claimed.count, by: 24) {
                let slice = claimed[start..<min(start + 24, claimed.count)]
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for item in slice + slice {
                        group.addTask {
                            try await queue.complete(item.id, transactionId: "txn-" + (item.group ?? item.job), result: "{}")
                        }
                    }
                    try await group.waitForAll()
                }
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
        try await withFreshQueue { queue in
            let batch = try await queue.createBatch(.stream)
            try await queue.enqueue([.init(job: "one", group: nil), .init(job: "two", group: nil)], batch: batch)
            let first = try await queue.claim(owner: "a", limit: 1, lease: .seconds(600))
            let second = try await queue.claim(owner: "b", limit: 1, lease: .seconds(600))
            #expect(first.map(\.job) == ["one"] && second.map(\.job) == ["two"])
            // Only its holder gives an item back: a worker whose lease ran out meanwhile cannot take it from another.
            try await queue.release(second[0].id, owner: "a")
            #expect(try await queue.claim(owner: "c", limit: 5, lease: .seconds(600)).isEmpty)
            try await queue.release(second[0].id, owner: "b")
            #expect(try await queue.claim(owner: "c", limit: 5, lease: .seconds(600)).map(\.job) == ["two"])

            try await queue.enqueue([.init(job: "three", group: nil)], batch: batch)
            // A lease of zero has run out by the next statement: no waiting on the clock.
            #expect(try await queue.claim(owner: "d", limit: 5, lease: .zero).map(\.job) == ["three"])
            #expect(try await queue.claim(owner: "e", limit: 5, lease: .seconds(600)).map(\.job) == ["three"])
        }
    }
}

/// The bounds are far from the expected times (milliseconds, 2 s): on 2 cores the whole suite keeps both busy for
/// about 100 s, and a test may wait its turn for tens of seconds. What each bound tells apart stays apart.
@Suite("Waiting for work", .timeLimit(.minutes(5)))
struct WaitForWorkTests {
    @Test("an idle worker wakes when work is queued, long before any lease runs out")
    func wakesOnEnqueue() async throws {
        try await withFreshQueue { queue in
            let batch = try await queue.createBatch(.stream)
            try await queue.enqueue([NewWorkItem(job: "held", group: nil)], batch: batch)
            _ = try await queue.claim(owner: "a", limit: 1, lease: .seconds(900))
            let clock = ContinuousClock(), start = clock.now
            async let waited: Void = queue.waitForWork()
            try await queue.enqueue([NewWorkItem(job: "new", group: nil)], batch: batch)
            try await waited
            #expect(clock.now - start < .seconds(240), "woken by the new item, not by the lease's end (900 s)")
            #expect(try await queue.claim(owner: "b", limit: 5, lease: .seconds(60)).map(\.job) == ["new"])
        }
    }

    @Test("with nothing queued, an idle worker waits until another worker's lease runs out, then can take its item")
    func wakesAtLeaseExpiry() async throws {
        try await withFreshQueue { queue in
            let batch = try await queue.createBatch(.stream)
            try await queue.enqueue([NewWorkItem(job: "held", group: nil)], batch: batch)
            // The clock starts before the claim: the lease runs out 2 s after the claim, at the earliest 2 s after
            // this, however long a busy machine takes to come back from the claim.
            let clock = ContinuousClock(), start = clock.now
            _ = try await queue.claim(owner: "a", limit: 1, lease: .seconds(2))
            try await queue.waitForWork()
            let waited = clock.now - start
            #expect(waited > .milliseconds(1500) && waited < .seconds(120), "\(waited)")
            #expect(try await queue.claim(owner: "b", limit: 5, lease: .seconds(60)).map(\.job) == ["held"])
        }
    }

    @Test("with nothing open, waiting returns at once")
    func nothingOpen() async throws {
        try await withFreshQueue { queue in
            let clock = ContinuousClock(), start = clock.now
            try await queue.waitForWork()
            #expect(clock.now - start < .seconds(60))
        }
    }
}

/// Shipped migrations are frozen; the queue's first two moved here from the store's ledger without a change.
@Suite("Work queue migrations")
struct WorkQueueMigrationTests {
    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    @Test("names, order and SQL as shipped (the digests they had in the store's ledger)")
    func frozen() {
        let shipped = PostgresWorkQueue.migrations.map { "\($0.0) \(Self.digest($0.1.joined(separator: ";\n")))" }
        #expect(
            shipped == [
                "v3-work-queue 27730b944afc898691e94cca3579231c4c6ef930faf7a3133f33074ecbb3dd75",
                "v4-work-groups 2051d6793c3c83a8e21f7d119f7df1c77d5e1f226d511281a20f474da2fcbdd3",
                "v5-work-notifications c79debbc1bee45a6fbe001c862d31e891e8adaf944f6c160137cecc1ed332784"
            ])
    }

    @Test("a database migrated when the queue's tables were the store's adopts them: nothing applied twice, nothing lost")
    func adoptsTheStoresLedger() async throws {
        let url = try await TestPostgres.freshDatabase(prefix: "queue")
        let components = try #require(URLComponents(string: url))
        let logger = Logger(label: "test")
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: try #require(components.host), port: components.port ?? 5432, username: try #require(components.user),
                password: components.password, database: String(components.path.dropFirst()), tls: .disable),
            id: 1, logger: logger)
        // The ledger as the release before the queue's move left it: store and queue migrations in one, under the
        // identifiers of that time.
        let earlier =
            PostgresSchema.migrations.prefix(2) + PostgresWorkQueue.migrations.prefix(2) + [
                ("v5-transaction-versions", PostgresSchema.migrations[2].1)
            ]
        try await connection.query("CREATE TABLE schema_migrations (identifier text PRIMARY KEY)", logger: logger)
        for (identifier, statements) in earlier {
            for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            try await connection.query("INSERT INTO schema_migrations (identifier) VALUES (\(identifier))", logger: logger)
        }
        try await connection.query("INSERT INTO batches (kind, created_at) VALUES ('folder', now())", logger: logger)
        try await connection.close()

        let location = try StoreLocation(parsing: url)
        try await location.withWorkQueue(create: true) { store, queue in
            let batch = try await queue.createBatch(.stream)
            #expect(batch == 2, "the earlier batch is still there")
            try await queue.enqueue([NewWorkItem(job: "j", group: "g")], batch: batch)
            #expect(try await queue.claim(owner: "a", limit: 5, lease: .seconds(60)).map(\.job) == ["j"])
            #expect(try await store.transactions(status: nil).isEmpty)
        }
        // Opened again, read-only: both ledgers are known.
        let open = try await location.withWorkQueue(create: false) { _, queue in try await queue.openItems() }
        #expect(open == 1)
    }
}
