import DequeModule
import Synchronization

/// What a `send` does once it holds the lock.
private enum SendAction<Element: Sendable> {
    case resume, cancelled
    case handOver(CheckedContinuation<Element?, Never>)
    case wait
}

/// How much a queue between two stages holds at most.
package struct QueueLimits: Sendable, Equatable {
    package var items: Int
    package var bytes: Int

    package init(items: Int, bytes: Int) {
        self.items = items
        self.bytes = bytes
    }
}

/// A FIFO between two stages, bounded in items and in bytes: a full queue suspends its senders, so a slow stage
/// slows the ones before it instead of letting memory grow (backpressure), and a few large images fill it as
/// surely as many small ones. One element larger than the byte bound is still let through on its own.
///
/// Every suspension honours cancellation: a cancelled `send` throws `CancellationError` and its element is
/// dropped; a cancelled `receive` returns nil.
final class StageQueue<Element: Sendable>: Sendable {
    typealias Limits = QueueLimits

    private struct WaitingSender {
        var id: UInt64
        var element: Element
        var weight: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var buffer: Deque<(element: Element, weight: Int)> = []
        var bytes = 0
        var finished = false
        var nextId: UInt64 = 0
        var senders: Deque<WaitingSender> = []
        var receivers: Deque<(id: UInt64, continuation: CheckedContinuation<Element?, Never>)> = []

        func fits(_ weight: Int, _ limits: Limits) -> Bool {
            buffer.isEmpty || (buffer.count < limits.items && bytes + weight <= limits.bytes)
        }

        /// Moves waiting senders whose elements now fit into the buffer; returns them to be resumed.
        mutating func admitSenders(_ limits: Limits) -> [CheckedContinuation<Void, any Error>] {
            var admitted: [CheckedContinuation<Void, any Error>] = []
            while let first = senders.first, fits(first.weight, limits) {
                senders.removeFirst()
                buffer.append((first.element, first.weight))
                bytes += first.weight
                admitted.append(first.continuation)
            }
            return admitted
        }
    }

    let limits: Limits
    private let state = Mutex(State())

    init(limits: Limits) {
        precondition(limits.items >= 1 && limits.bytes >= 1, "a queue holds at least one item")
        self.limits = limits
    }

    /// Documents waiting in the queue, or to enter it: its depth, for the metrics.
    var depth: Int { state.withLock { $0.buffer.count + $0.senders.count } }

    /// Waits while the queue is full. Sending after `finish()` is a programming error.
    func send(_ element: Element, weight: Int = 0) async throws {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let action: SendAction<Element> = state.withLock { state in
                        precondition(!state.finished, "send after finish")
                        if Task.isCancelled { return .cancelled }
                        if let receiver = state.receivers.popFirst() { return .handOver(receiver.continuation) }
                        if state.senders.isEmpty, state.fits(weight, limits) {
                            state.buffer.append((element, weight))
                            state.bytes += weight
                            return .resume
                        }
                        state.senders.append(WaitingSender(id: id, element: element, weight: weight, continuation: continuation))
                        return .wait
                    }
                    switch action {
                    case .resume: continuation.resume()
                    case .cancelled: continuation.resume(throwing: CancellationError())
                    case .handOver(let receiver):
                        receiver.resume(returning: element)
                        continuation.resume()
                    case .wait: break
                    }
                }
            } onCancel: {
                let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let index = state.senders.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.senders.remove(at: index).continuation
                }
                waiting?.resume(throwing: CancellationError())
            }
        } catch {
            throw CancellationError()
        }
    }

    /// Adds `element` without waiting: handed to a waiting receiver, or buffered when it fits; false when the queue is
    /// full (nothing is added).
    func trySend(_ element: Element, weight: Int = 0) -> Bool {
        let action: SendAction<Element> = state.withLock { state in
            precondition(!state.finished, "send after finish")
            if let receiver = state.receivers.popFirst() { return .handOver(receiver.continuation) }
            guard state.senders.isEmpty, state.fits(weight, limits) else { return .wait }
            state.buffer.append((element, weight))
            state.bytes += weight
            return .resume
        }
        switch action {
        case .handOver(let receiver): receiver.resume(returning: element)
        case .resume, .cancelled: break
        case .wait: return false
        }
        return true
    }

    /// The next element, or nil once the queue is finished and drained, or when the task is cancelled.
    func receive() async -> Element? {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let (element, admitted, done): (Element?, [CheckedContinuation<Void, any Error>], Bool) = state.withLock { state in
                    if let first = state.buffer.popFirst() {
                        state.bytes -= first.weight
                        return (first.element, state.admitSenders(limits), true)
                    }
                    // An empty buffer has no waiting senders: the last element out admitted them.
                    if state.finished || Task.isCancelled { return (nil, [], true) }
                    state.receivers.append((id, continuation))
                    return (nil, [], false)
                }
                admitted.forEach { $0.resume() }
                if done { continuation.resume(returning: element) }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Element?, Never>? in
                guard let index = state.receivers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.receivers.remove(at: index).continuation
            }
            waiting?.resume(returning: nil)
        }
    }

    /// No more elements will be sent: receivers drain what is left, then get nil.
    func finish() {
        let receivers = state.withLock { state in
            state.finished = true
            defer { state.receivers.removeAll() }
            return state.receivers
        }
        receivers.forEach { $0.continuation.resume(returning: nil) }
    }

    var count: Int { state.withLock { $0.buffer.count } }
    /// Senders suspended because the queue is full.
    var waitingSenders: Int { state.withLock { $0.senders.count } }
    /// Receivers suspended because the queue is empty.
    var waitingReceivers: Int { state.withLock { $0.receivers.count } }
    var bytes: Int { state.withLock { $0.bytes } }
}
