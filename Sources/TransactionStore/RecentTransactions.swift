import DequeModule
import Synchronization

/// The state this process last read or wrote of the transactions it worked on recently, so that a change can be
/// decided without reading first. Only ever a first guess: a change decided on an entry another process has made
/// stale is refused by the version check, and decided again on a read. Bounded: the oldest entries go first.
final class RecentTransactions: Sendable {
    private struct Entries {
        var reads: [String: TransactionRead] = [:]
        /// Transaction ids in the order they were first remembered.
        var order: Deque<String> = []
    }

    private let entries = Mutex(Entries())
    let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    subscript(_ transactionId: String) -> TransactionRead? {
        entries.withLock { $0.reads[transactionId] }
    }

    func remember(_ transaction: StoredTransaction) {
        entries.withLock { entries in
            if entries.reads.updateValue(TransactionRead(transaction: transaction), forKey: transaction.id) == nil {
                entries.order.append(transaction.id)
                while entries.order.count > capacity, let oldest = entries.order.popFirst() {
                    entries.reads[oldest] = nil
                }
            }
        }
    }

    /// Drops what it remembers of `ids` (their data was purged): the next change reads them.
    func forget(_ ids: [String]) {
        let forgotten = Set(ids)
        entries.withLock { entries in
            for id in forgotten { entries.reads[id] = nil }
            entries.order.removeAll { forgotten.contains($0) }
        }
    }
}
