import DequeModule
import Synchronization
import VerifyModel

/// Shares one answer per folder to "which transaction is this?": the first document of a folder to ask reads
/// the QR image; the others wait for its answer instead of scanning the same image again.
///
/// A folder's documents travel together, so only the most recent answers are kept: a worker runs for days,
/// and an answer per folder ever seen would grow without end. A folder asked again after its answer was
/// dropped is read again, which gives the same answer.
final class QRResolver: Sendable {
    typealias Answer = Result<VerificationQR, DocumentFailure>

    private enum Entry {
        case pending([UInt64: CheckedContinuation<Answer?, any Error>])
        case done(Answer)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var answered: Deque<String> = []
        var nextId: UInt64 = 0
    }

    private let keep: Int
    private let state = Mutex(State())

    init(keep: Int = 1024) {
        self.keep = keep
    }

    /// The known answer, or nil when the caller is the first to ask and must `fulfill` the group. A caller
    /// waiting for another's answer throws `CancellationError` when its task is cancelled.
    func claim(_ group: String) async throws(CancellationError) -> Answer? {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Answer?, any Error>) in
                    let immediate: Result<Answer?, CancellationError>? = state.withLock { state in
                        switch state.entries[group] {
                        case nil:
                            state.entries[group] = .pending([:])
                            return .success(nil)
                        case .done(let answer):
                            return .success(answer)
                        case .pending(var waiters):
                            if Task.isCancelled { return .failure(CancellationError()) }
                            waiters[id] = continuation
                            state.entries[group] = .pending(waiters)
                            return nil
                        }
                    }
                    if let immediate { continuation.resume(with: immediate) }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Answer?, any Error>? in
                    guard case .pending(var waiters) = state.entries[group], let waiter = waiters.removeValue(forKey: id) else { return nil }
                    state.entries[group] = .pending(waiters)
                    return waiter
                }
                waiter?.resume(throwing: CancellationError())
            }
        } catch {
            throw CancellationError()
        }
    }

    /// Gives the group's answer to everyone waiting for it, and to those who ask later.
    func fulfill(_ group: String, with answer: Answer) {
        let waiters = state.withLock { state in
            var waiters: [CheckedContinuation<Answer?, any Error>] = []
            if case .pending(let pending) = state.entries[group] { waiters = Array(pending.values) }
            state.entries[group] = .done(answer)
            state.answered.append(group)
            while state.answered.count > keep, let oldest = state.answered.popFirst() {
                if case .done = state.entries[oldest] { state.entries[oldest] = nil }
            }
            return waiters
        }
        waiters.forEach { $0.resume(returning: answer) }
    }

    /// Callers waiting for `group`'s answer, for tests.
    func waiting(for group: String) -> Int {
        state.withLock { state in if case .pending(let waiters) = state.entries[group] { waiters.count } else { 0 } }
    }

    /// Answers held, for tests.
    var answersHeld: Int {
        state.withLock { state in state.entries.values.filter { if case .done = $0 { true } else { false } }.count }
    }
}
