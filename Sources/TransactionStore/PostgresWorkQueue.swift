import Foundation
import Logging
import PostgresNIO

/// A queue of documents to process, in the same PostgreSQL database as the store. Workers on any number
/// of machines claim items with `SELECT ... FOR UPDATE SKIP LOCKED`, hold them with a lease they renew
/// (the heartbeat), and mark them done; an item whose worker died is claimed again once its lease runs out.
/// Exactly-once submission does not depend on the queue: a document processed twice is recognised by its id.
public struct PostgresWorkQueue: Sendable {
    public enum BatchKind: String, Sendable {
        case folder, stream
    }

    public struct Item: Sendable {
        public var id: Int64
        public var batch: Int64
        /// The document job, as the pipeline serialised it.
        public var job: String
    }

    let store: PostgresTransactionStore

    /// The queue of a PostgreSQL store; nil for any other kind of store.
    public init?(_ store: any TransactionStore) {
        guard let store = store as? PostgresTransactionStore else { return nil }
        self.store = store
    }

    var logger: Logger { store.logger }

    public func createBatch(_ kind: BatchKind) async throws(StoreError) -> Int64 {
        try await store.transaction { connection in
            for try await id in try await connection.query(
                "INSERT INTO batches (kind, created_at) VALUES (\(kind.rawValue), \(Date())) RETURNING id", logger: logger).decode(Int64.self) {
                return id
            }
            throw StoreError.database("the batch was not created")
        }
    }

    /// Adds jobs to a batch, in one database transaction.
    public func enqueue(_ jobs: [String], batch: Int64) async throws(StoreError) {
        try await store.transaction { connection in
            for job in jobs {
                try await connection.query("INSERT INTO work_items (batch_id, job, state) VALUES (\(batch), \(job), 'QUEUED')",
                                           logger: logger)
            }
        }
    }

    /// Claims up to `limit` items that are queued, or whose lease has run out.
    public func claim(owner: String, limit: Int, lease: Duration) async throws(StoreError) -> [Item] {
        try await store.transaction { connection in
            var items: [Item] = []
            for try await (id, batch, job) in try await connection.query("""
                UPDATE work_items SET state = 'CLAIMED', lease_owner = \(owner),
                    lease_expires_at = now() + \(Self.seconds(lease)) * interval '1 second', claims = claims + 1
                WHERE id IN (
                    SELECT id FROM work_items
                    WHERE state = 'QUEUED' OR (state = 'CLAIMED' AND lease_expires_at < now())
                    ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id, batch_id, job
                """, logger: logger).decode((Int64, Int64, String).self) {
                items.append(Item(id: id, batch: batch, job: job))
            }
            return items.sorted { $0.id < $1.id }
        }
    }

    /// Renews the leases of every item `owner` holds.
    public func heartbeat(owner: String, lease: Duration) async throws(StoreError) {
        try await store.transaction { connection in
            try await connection.query("""
                UPDATE work_items SET lease_expires_at = now() + \(Self.seconds(lease)) * interval '1 second'
                WHERE state = 'CLAIMED' AND lease_owner = \(owner)
                """, logger: logger)
        }
    }

    /// Marks an item done. Returns the batch when this was its last open item and the batch was not yet
    /// marked finished: exactly one caller gets it, to run the end-of-batch work.
    public func complete(_ item: Int64, transactionId: String?, result: String) async throws(StoreError) -> (id: Int64, kind: BatchKind)? {
        try await store.transaction { connection in
            var batch: Int64?
            for try await id in try await connection.query("""
                UPDATE work_items SET state = 'DONE', lease_owner = NULL, lease_expires_at = NULL,
                    transaction_id = \(transactionId), result = \(result)
                WHERE id = \(item) RETURNING batch_id
                """, logger: logger).decode(Int64.self) {
                batch = id
            }
            guard let batch else { return nil }
            for try await kind in try await connection.query("""
                UPDATE batches SET finished_at = now()
                WHERE id = \(batch) AND finished_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM work_items WHERE batch_id = \(batch) AND state <> 'DONE')
                RETURNING kind
                """, logger: logger).decode(String.self) {
                return (batch, BatchKind(rawValue: kind)!)
            }
            return nil
        }
    }

    /// The transactions a batch's documents belonged to.
    public func transactions(ofBatch batch: Int64) async throws(StoreError) -> [String] {
        try await store.withConnection { connection in
            var ids: [String] = []
            for try await id in try await connection.query("""
                SELECT DISTINCT transaction_id FROM work_items WHERE batch_id = \(batch) AND transaction_id IS NOT NULL ORDER BY 1
                """, logger: logger).decode(String.self) {
                ids.append(id)
            }
            return ids
        }
    }

    /// Items not yet done, in any batch.
    public func openItems() async throws(StoreError) -> Int {
        try await store.withConnection { connection in
            try await connection.query("SELECT count(*) FROM work_items WHERE state <> 'DONE'", logger: logger)
                .collect().first?.decode(Int.self) ?? 0
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
