import Foundation
import Logging
import TransactionStore

/// The work shared by several workers (`verify-pipeline enqueue` / `worker`): documents claimed with a lease
/// that the holder renews; an item whose holder died is claimed again once its lease runs out. PostgreSQL
/// implements it, in the store's database (`StoreLocation.withWorkQueue`); nothing else does, so a caller never
/// needs to ask which store it has.
package protocol WorkQueue: Sendable {
    func createBatch(_ kind: WorkBatchKind) async throws -> Int64
    /// Adds documents to a batch, with their groups' counts, in one database transaction.
    func enqueue(_ items: [NewWorkItem], batch: Int64) async throws
    /// Claims up to `limit` items that are queued, or whose lease has run out.
    func claim(owner: String, limit: Int, lease: Duration) async throws -> [WorkItem]
    /// Renews the leases of the given items while `owner` holds them. Only the items the worker is still working
    /// on: one it has let go (its completion could not be written) must expire, for another worker to redo it.
    func heartbeat(owner: String, items: [Int64], lease: Duration) async throws
    /// Marks an item done; the first completion of a group's last open document queues the group's end.
    func complete(_ item: Int64, transactionId: String?, result: String) async throws
    /// Gives an item `owner` holds back to the queue, for another attempt; nothing when another worker has claimed it
    /// since (its lease ran out meanwhile).
    func release(_ item: Int64, owner: String) async throws
    /// The transactions the documents of a group belonged to.
    func transactions(ofGroup group: String, batch: Int64) async throws -> [String]
    /// Items not yet done, in any batch.
    func openItems() async throws -> Int
    /// Returns when there may be work to claim: an item was queued, given back or done, or a lease another worker
    /// holds ran out; at once when there is already, or when nothing is open. Throws `CancellationError` when the
    /// task is cancelled, `StoreError` when the database cannot be asked.
    func waitForWork() async throws
}

package enum WorkBatchKind: String, Sendable {
    case folder, stream
}

package enum WorkItemKind: String, Sendable {
    /// A document job, as the pipeline serialised it.
    case document
    /// Every document of `group` is done.
    case groupEnd = "group-end"
}

/// A claimed item.
package struct WorkItem: Sendable {
    package var id: Int64
    package var batch: Int64
    package var kind: WorkItemKind
    package var group: String?
    /// The document job, for a document; a description, for a group's end.
    package var job: String
    /// How many times the item has been claimed, this claim included.
    package var claims: Int = 1
}

/// A document to queue, and the group whose end it belongs to (nil: none).
package struct NewWorkItem: Sendable {
    package var job: String
    package var group: String?
    /// The transaction, when the input names it: a purge of that transaction then empties the item's job even
    /// while it waits in the queue.
    package var transactionId: String?

    package init(job: String, group: String?, transactionId: String? = nil) {
        self.job = job
        self.group = group
        self.transactionId = transactionId
    }
}

extension StoreLocation {
    /// Why a work queue needs PostgreSQL, for a command run with another store.
    package static let workQueueRequirement = "the work queue needs a PostgreSQL store (--store postgres://USER@HOST:PORT/DATABASE)"

    /// Opens the store and its shared work queue for the duration of `body`; only PostgreSQL has one. `create`
    /// false: both must exist already.
    package func withWorkQueue<T: Sendable>(
        create: Bool, encryption: StoreEncryption = .ifEncrypted(nil),
        logger: Logger = Logger(label: "verify-pipeline.store"),
        _ body: @escaping @Sendable (TransactionStore, any WorkQueue) async throws -> T
    ) async throws -> T {
        try await withPostgres(
            create: create, encryption: encryption, logger: logger, neighbours: WorkItems.neighbours, requirement: Self.workQueueRequirement
        ) { store, database in
            try await body(store, try await database.workQueue(sealing: store.sealing, create: create))
        }
    }
}

extension StoreDatabase {
    /// The shared work queue in this database, its tables made this version's (`create`) or required to be; its
    /// items sealed with the store's `sealing`.
    package func workQueue(sealing: StoreSealing, create: Bool) async throws -> any WorkQueue {
        let queue = PostgresWorkQueue(database: self, sealing: sealing)
        do {
            if create {
                try await queue.migrate()
            } else {
                try await queue.requireSchema()
            }
        } catch let error as StoreError where error.code == .database {
            throw StoreError.cannotOpen("\(location): \(error.detail)")
        }
        return queue
    }
}
