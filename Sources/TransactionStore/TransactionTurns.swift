import DequeModule
import Synchronization

/// One task at a time decides and writes a given transaction, within this process. The documents of one
/// transaction travel through the pipeline together; without turns their optimistic writes would refuse each
/// other and be decided again. Other processes on the same store are still caught by the version check.
final class TransactionTurns: Sendable {
    private struct State {
        /// Transactions whose turn is taken, with the tasks waiting for it in arrival order.
        var taken: [String: Deque<(id: UInt64, continuation: CheckedContinuation<Void, any Error>)>] = [:]
        var nextId: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Runs `body` in the transaction's turn. A task cancelled while it waits for its turn gets `.cancelled`.
    func withTurn<T>(_ transactionId: String, _ body: () async throws -> T) async throws -> T {
        do {
            try await take(transactionId)
        } catch {
            throw StoreError.cancelled
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        pass(transactionId)
        return try result.get()
    }

    private func take(_ transactionId: String) async throws {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, CancellationError>? = state.withLock { state in
                    guard var waiting = state.taken[transactionId] else {
                        state.taken[transactionId] = []
                        return .success(())
                    }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    waiting.append((id, continuation))
                    state.taken[transactionId] = waiting
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard var waiting = state.taken[transactionId], let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
                let waiter = waiting.remove(at: index).continuation
                state.taken[transactionId] = waiting
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Hands the turn to the next waiting task, or frees it.
    private func pass(_ transactionId: String) {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var waiting = state.taken[transactionId], !waiting.isEmpty else {
                state.taken[transactionId] = nil
                return nil
            }
            let next = waiting.removeFirst().continuation
            state.taken[transactionId] = waiting
            return next
        }
        next?.resume()
    }
}
