import Synchronization

/// Set when the run should stop taking input (SIGINT, SIGTERM); documents already taken still finish.
/// Intake checks `isStopped` between inputs and may also wait for it with `stopped()`.
package final class StopSignal: Sendable {
    private struct State {
        var stopped = false
        var nextId: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    package func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    package var isStopped: Bool { state.withLock { $0.stopped } }

    /// Returns once `stop()` has been called, or when the calling task is cancelled.
    package func stopped() async {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state in
                    guard !state.stopped, !Task.isCancelled else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
