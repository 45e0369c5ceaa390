import Foundation
import Logging
import Metrics
import PostgresNIO
import TransactionStore

/// A queue of documents to process, in the same PostgreSQL database as the store. Workers on any number
/// of machines claim items with `SELECT ... FOR UPDATE SKIP LOCKED`, hold them with a lease they renew
/// (the heartbeat), and mark them done; an item whose worker died is claimed again once its lease runs out.
/// Exactly-once submission does not depend on the queue: a document processed twice is recognised by its id.
///
/// Documents may belong to a group (a transaction folder of a batch): each group counts its open documents,
/// and the completion that brings the count to zero queues the group's end, in the same database transaction,
/// as an item of its own. Whoever claims that item does the end-of-input work, so it is neither lost with a
/// worker that dies nor left to one worker for the whole batch.
struct PostgresWorkQueue: WorkQueue {
    let database: StoreDatabase
    /// The store's: a document's job and its result hold identity data, sealed like the store's own, bound to the item.
    var sealing: StoreSealing = .clear

    var logger: Logger { database.logger }

    /// Named migrations as frozen SQL, in a ledger of their own (`work_queue_migrations`); never change one once
    /// shipped (a test checksums them), add a new one. The first two were shipped in the store's ledger and moved
    /// here unchanged: a database that applied them there adopts them.
    static let migrations: [(String, [String])] = [
        (
            "v3-work-queue",
            [
                """
                CREATE TABLE batches (
                    id bigserial PRIMARY KEY,
                    kind text NOT NULL CHECK (kind IN ('folder', 'stream')),
                    created_at timestamptz NOT NULL,
                    finished_at timestamptz
                )
                """,
                """
                CREATE TABLE work_items (
                    id bigserial PRIMARY KEY,
                    batch_id bigint NOT NULL REFERENCES batches(id),
                    job text NOT NULL,
                    state text NOT NULL CHECK (state IN ('QUEUED', 'CLAIMED', 'DONE')),
                    lease_owner text,
                    lease_expires_at timestamptz,
                    claims integer NOT NULL DEFAULT 0 CHECK (claims >= 0),
                    transaction_id text,
                    result text,
                    CHECK ((state = 'CLAIMED') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
                )
                """,
                "CREATE INDEX work_items_open ON work_items(state, id) WHERE state <> 'DONE'",
                "CREATE INDEX work_items_by_batch ON work_items(batch_id)"
            ]
        ),
        // The end of each transaction folder becomes work of its own, counted down per group, instead of one
        // worker electing itself at the end of the whole batch.
        (
            "v4-work-groups",
            [
                "ALTER TABLE work_items ADD COLUMN kind text NOT NULL DEFAULT 'document' CHECK (kind IN ('document', 'group-end'))",
                "ALTER TABLE work_items ADD COLUMN group_key text",
                "ALTER TABLE work_items ADD CHECK (kind = 'document' OR group_key IS NOT NULL)",
                """
                CREATE TABLE work_groups (
                    batch_id bigint NOT NULL REFERENCES batches(id),
                    group_key text NOT NULL,
                    open_items integer NOT NULL CHECK (open_items >= 0),
                    PRIMARY KEY (batch_id, group_key)
                )
                """,
                "CREATE INDEX work_items_by_group ON work_items(batch_id, group_key) WHERE group_key IS NOT NULL",
                "ALTER TABLE batches DROP COLUMN finished_at"
            ]
        ),
        // Idle workers LISTEN instead of asking again and again: an item queued (or given back) or done notifies
        // them. PostgreSQL folds a transaction's identical notifications into one.
        (
            "v5-work-notifications",
            [
                """
                CREATE FUNCTION notify_work_changed() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM pg_notify('verify_pipeline_work', '');
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER work_changed AFTER INSERT OR UPDATE OF state ON work_items
                FOR EACH ROW WHEN (NEW.state IN ('QUEUED', 'DONE')) EXECUTE FUNCTION notify_work_changed()
                """
            ]
        )
    ]

    /// The channel the trigger above notifies.
    static let channel = "verify_pipeline_work"

    static let ledger = "work_queue_migrations"

    func migrate() async throws {
        try await database.migrate(ledger: Self.ledger, Self.migrations, adoptingFrom: "schema_migrations")
    }

    func requireSchema() async throws {
        try await database.requireMigrations(ledger: Self.ledger, Self.migrations)
    }

    func createBatch(_ kind: WorkBatchKind) async throws -> Int64 {
        try await database.withConnection { connection in
            for try await id in try await connection.query(
                "INSERT INTO batches (kind, created_at) VALUES (\(kind.rawValue), \(Date())) RETURNING id", logger: logger
            ).decode(Int64.self) {
                return id
            }
            throw StoreError.database("the batch was not created")
        }
    }

    /// Adds documents to a batch, with their groups' counts, in one database transaction of three statements
    /// however many items: their ids, the items, the groups' counts.
    func enqueue(_ items: [NewWorkItem], batch: Int64) async throws {
        guard !items.isEmpty else { return }
        let sealing = sealing, logger = logger
        try await database.transaction { connection in
            // The ids first: each sealed job is bound to its item's id.
            var ids: [Int64] = []
            for try await id in try await connection.query(
                """
                SELECT nextval(pg_get_serial_sequence('work_items', 'id')) FROM generate_series(1, \(items.count))
                """, logger: logger
            ).decode(Int64.self) {
                ids.append(id)
            }
            guard ids.count == items.count else { throw StoreError.database("the queue's ids could not be drawn") }
            ids.sort()
            var jobs: [String] = [], groups: [String] = [], grouped: [Bool] = [], transactions: [String] = [], named: [Bool] = []
            var counts: [String: Int] = [:]
            for (id, item) in zip(ids, items) {
                jobs.append(try sealing.seal(item.job, .workJob, row: "\(id)"))
                groups.append(item.group ?? "")
                grouped.append(item.group != nil)
                transactions.append(item.transactionId ?? "")
                named.append(item.transactionId != nil)
                if let group = item.group { counts[group, default: 0] += 1 }
            }
            try await connection.query(
                """
                INSERT INTO work_items (id, batch_id, job, state, kind, group_key, transaction_id)
                SELECT id, \(batch), job, 'QUEUED', 'document', CASE WHEN grouped THEN grp END, CASE WHEN named THEN txn END
                FROM unnest(\(ids)::int8[], \(jobs)::text[], \(groups)::text[], \(grouped)::bool[], \(transactions)::text[], \(named)::bool[])
                    AS item(id, job, grp, grouped, txn, named)
                ORDER BY id
                """, logger: logger)
            guard !counts.isEmpty else { return }
            let sorted = counts.sorted { $0.key < $1.key }
            try await connection.query(
                """
                INSERT INTO work_groups (batch_id, group_key, open_items)
                SELECT \(batch), grp, cnt FROM unnest(\(sorted.map(\.key))::text[], \(sorted.map { Int64($0.value) })::int8[]) AS g(grp, cnt)
                """, logger: logger)
        }
    }

    /// Claims up to `limit` items that are queued, or whose lease has run out.
    func claim(owner: String, limit: Int, lease: Duration) async throws -> [WorkItem] {
        let sealing = sealing
        return try await database.withConnection { connection in
            var items: [WorkItem] = []
            let statement = ClaimWorkItems(owner: owner, leaseSeconds: Self.seconds(lease), limit: limit)
            var expired = 0
            for try await (id, batch, kind, group, job, takenOver, claims) in try await connection.execute(statement, logger: logger) {
                if takenOver { expired += 1 }
                guard let kind = WorkItemKind(rawValue: kind) else { throw StoreError.database("work item \(id) has an unknown kind") }
                // A group's end holds only its folder's name, written by the database itself: never sealed.
                // An empty job is one a purge of its transaction emptied while it waited: nothing to open.
                let opened = kind == .document && !job.isEmpty ? try sealing.open(job, .workJob, row: "\(id)") : job
                items.append(WorkItem(id: id, batch: batch, kind: kind, group: group, job: opened, claims: Int(claims)))
            }
            if expired > 0 { Counter(label: "verify_work_lease_expiries_total").increment(by: expired) }
            return items.sorted { $0.id < $1.id }
        }
    }

    /// Renews the leases of the given items while `owner` holds them.
    func heartbeat(owner: String, items: [Int64], lease: Duration) async throws {
        guard !items.isEmpty else { return }
        // Within a third of the lease: a renewal that waits longer lets the leases run out, and the next one must go.
        try await database.withConnection(answerWithin: lease / 3) { connection in
            _ = try await connection.query(
                """
                UPDATE work_items SET lease_expires_at = now() + \(Self.seconds(lease)) * interval '1 second'
                WHERE state = 'CLAIMED' AND lease_owner = \(owner) AND id = ANY(\(items)::int8[])
                """, logger: logger)
        }
    }

    /// Marks an item done. The first completion of a group's last open document queues the group's end;
    /// completing an item that is already done changes nothing.
    func complete(_ item: Int64, transactionId: String?, result: String) async throws {
        let sealed = try sealing.seal(result, .workResult, row: "\(item)")
        try await database.withConnection { connection in
            _ = try await connection.execute(CompleteWorkItem(item: item, transactionId: transactionId, result: sealed), logger: logger)
        }
    }

    /// Gives an item `owner` holds back to the queue, for another attempt.
    func release(_ item: Int64, owner: String) async throws {
        try await database.withConnection { connection in
            _ = try await connection.query(
                """
                UPDATE work_items SET state = 'QUEUED', lease_owner = NULL, lease_expires_at = NULL
                WHERE id = \(item) AND state = 'CLAIMED' AND lease_owner = \(owner)
                """, logger: logger)
        }
    }

    /// The transactions the documents of a group belonged to.
    func transactions(ofGroup group: String, batch: Int64) async throws -> [String] {
        try await database.withConnection { connection in
            var ids: [String] = []
            for try await id in try await connection.execute(GroupTransactions(batch: batch, group: group), logger: logger) {
                ids.append(id)
            }
            return ids
        }
    }

    /// Listens first, then looks: work queued between the look and the wait still wakes it. Returns at once when
    /// something is claimable or nothing is open; else when a notification finds it so, or when the earliest lease
    /// another worker holds runs out (its item is then claimable), whichever comes first. A notification that
    /// changes nothing for this worker (another worker's item done) costs one look, not a return to the intake.
    func waitForWork() async throws {
        let logger = logger
        do {
            try await database.client.withConnection { connection in
                try await connection.listen(on: Self.channel) { notifications in
                    guard case .wait(let secondsToExpiry) = try await Self.readiness(connection, logger: logger) else { return }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await _ in notifications {
                                if case .go = try await Self.readiness(connection, logger: logger) { return }
                            }
                        }
                        if let secondsToExpiry {
                            group.addTask { try await Task.sleep(for: .milliseconds(Int64(max(0, secondsToExpiry) * 1000) + 1)) }
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
            }
        } catch let error as CancellationError {
            throw error
        } catch {
            throw StoreDatabase.storeError(error)
        }
    }

    enum Readiness {
        /// Something is claimable, or nothing is open.
        case go
        /// Nothing to do yet; the earliest lease runs out in this many seconds (nil: none is held).
        case wait(secondsToExpiry: Double?)
    }

    static func readiness(_ connection: PostgresConnection, logger: Logger) async throws -> Readiness {
        for try await (claimable, open, secondsToExpiry) in try await connection.execute(WorkReadiness(), logger: logger) {
            return claimable || open == 0 ? .go : .wait(secondsToExpiry: secondsToExpiry)
        }
        return .go
    }

    /// Items not yet done, in any batch.
    func openItems() async throws -> Int {
        try await database.withConnection { connection in
            try await connection.query("SELECT count(*) FROM work_items WHERE state <> 'DONE'", logger: logger)
                .collect().first?.decode(Int.self) ?? 0
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

struct ClaimWorkItems: PostgresPreparedStatement {
    /// `expired` says whether the item was taken over from a holder whose lease ran out; `claims` counts this claim.
    static let sql = """
        WITH picked AS (
            SELECT id, state = 'CLAIMED' AS expired FROM work_items
            WHERE state = 'QUEUED' OR (state = 'CLAIMED' AND lease_expires_at < now())
            ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED
        )
        UPDATE work_items w SET state = 'CLAIMED', lease_owner = $1, lease_expires_at = now() + $2 * interval '1 second',
            claims = w.claims + 1
        FROM picked WHERE w.id = picked.id
        RETURNING w.id, w.batch_id, w.kind, w.group_key, w.job, picked.expired, w.claims
        """
    static let bindingDataTypes: [PostgresDataType] = [.text, .float8, .int8]
    typealias Row = (Int64, Int64, String, String?, String, Bool, Int32)

    var owner: String
    var leaseSeconds: Double
    var limit: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(owner)
        bindings.append(leaseSeconds)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// One statement: the group's row lock makes concurrent completions of its documents take turns, and exactly one
/// of them sees the count reach zero and queues the group's end.
struct CompleteWorkItem: PostgresPreparedStatement {
    static let sql = """
        WITH done AS (
            UPDATE work_items SET state = 'DONE', lease_owner = NULL, lease_expires_at = NULL, transaction_id = $2,
                result = CASE WHEN job = '' THEN NULL ELSE $3 END
            WHERE id = $1 AND state <> 'DONE' RETURNING batch_id, kind, group_key
        ), counted AS (
            UPDATE work_groups g SET open_items = g.open_items - 1 FROM done
            WHERE done.kind = 'document' AND g.batch_id = done.batch_id AND g.group_key = done.group_key
            RETURNING g.batch_id, g.group_key, g.open_items
        )
        INSERT INTO work_items (batch_id, job, state, kind, group_key)
        SELECT batch_id, 'end of ' || group_key, 'QUEUED', 'group-end', group_key FROM counted WHERE open_items = 0
        """
    static let bindingDataTypes: [PostgresDataType] = [.int8, .text, .text]
    typealias Row = ()

    var item: Int64
    var transactionId: String?
    var result: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(item)
        bindings.append(transactionId)
        bindings.append(result)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

/// Whether anything is claimable now, how many items are open, and when the earliest lease runs out (seconds from
/// now; nil when nothing is claimed).
struct WorkReadiness: PostgresPreparedStatement {
    static let sql = """
        SELECT coalesce(bool_or(state = 'QUEUED' OR lease_expires_at < now()), false), count(*),
            EXTRACT(EPOCH FROM min(lease_expires_at) - now())::float8
        FROM work_items WHERE state <> 'DONE'
        """
    static let bindingDataTypes: [PostgresDataType] = []
    typealias Row = (Bool, Int, Double?)

    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

struct GroupTransactions: PostgresPreparedStatement {
    static let sql = """
        SELECT DISTINCT transaction_id FROM work_items
        WHERE batch_id = $1 AND group_key = $2 AND kind = 'document' AND transaction_id IS NOT NULL ORDER BY 1
        """
    static let bindingDataTypes: [PostgresDataType] = [.int8, .text]
    typealias Row = String

    var batch: Int64
    var group: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(batch)
        bindings.append(group)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(String.self) }
}
