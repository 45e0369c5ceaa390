import Foundation
import Logging
import Synchronization
import TransactionStore

/// `/readyz`'s question to the store, answered within `timeout` whatever the store does: a stopped PostgreSQL server
/// (the pool retrying its connection) or a frozen one (a query never answered) would otherwise hold the answer for a
/// minute, past any probe's timeout. One question is in flight at a time, however many probes ask; a change of
/// answer is logged once.
final class ReadinessProbe: Sendable {
    let timeout: Duration
    let logger: Logger
    private let ask: @Sendable () async -> Bool
    private let state = Mutex(State())

    struct State {
        var question: Task<Bool, Never>?
        var lastAnswer = true
    }

    init(store: TransactionStore, timeout: Duration = .seconds(1), logger: Logger) {
        self.timeout = timeout
        self.logger = logger
        ask = {
            do throws {
                _ = try await store.overview(collectedSince: Date())
                return true
            } catch {
                return false
            }
        }
    }

    /// Whether the store answered within the timeout.
    func isReady() async -> Bool {
        let question = state.withLock { state in
            if let question = state.question { return question }
            // Not structured: a store call that ignores cancellation must not hold the answer past the timeout.
            let question = Task { [ask] in
                let answer = await ask()
                self.state.withLock { $0.question = nil }
                return answer
            }
            state.question = question
            return question
        }
        let ready = await Self.answer(of: question, within: timeout) ?? false
        let changed = state.withLock { state in
            defer { state.lastAnswer = ready }
            return state.lastAnswer != ready
        }
        if changed {
            if ready {
                logger.warning("the store answers again: /readyz is 200")
            } else {
                logger.warning("the store does not answer: /readyz is 503 until it does")
            }
        }
        return ready
    }

    /// The question's answer, or nil when it takes longer than `timeout`.
    static func answer(of question: Task<Bool, Never>, within timeout: Duration) async -> Bool? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool?, Never>) in
            let slot = FirstAnswer(continuation)
            let timer = Task {
                do { try await Task.sleep(for: timeout) } catch { return }  // the answer came first
                slot.resume(nil)
            }
            Task {
                let answer = await question.value
                timer.cancel()
                slot.resume(answer)
            }
        }
    }
}
