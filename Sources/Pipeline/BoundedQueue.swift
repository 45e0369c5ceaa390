import DequeModule

/// A FIFO between two stages holding at most `capacity` items: a full queue suspends its senders, so a slow
/// stage slows the ones before it instead of letting memory grow (backpressure).
actor BoundedQueue<Element: Sendable> {
    private let capacity: Int
    private var buffer: Deque<Element> = []
    private var senders: Deque<CheckedContinuation<Void, Never>> = []
    private var receivers: Deque<CheckedContinuation<Element?, Never>> = []
    private var finished = false

    init(capacity: Int) {
        precondition(capacity >= 1, "a queue holds at least one item")
        self.capacity = capacity
    }

    /// Waits while the queue is full. Sending after `finish()` is a programming error.
    func send(_ element: Element) async {
        precondition(!finished, "send after finish")
        if let receiver = receivers.popFirst() {
            receiver.resume(returning: element)
            return
        }
        while buffer.count >= capacity {
            await withCheckedContinuation { senders.append($0) }
        }
        if let receiver = receivers.popFirst() {
            receiver.resume(returning: element)
        } else {
            buffer.append(element)
        }
    }

    /// The next item, or nil once the queue is finished and drained.
    func receive() async -> Element? {
        if let element = buffer.popFirst() {
            senders.popFirst()?.resume()
            return element
        }
        if finished { return nil }
        return await withCheckedContinuation { receivers.append($0) }
    }

    /// No more items will be sent: receivers drain what is left, then get nil.
    func finish() {
        finished = true
        while let receiver = receivers.popFirst() { receiver.resume(returning: nil) }
    }

    var count: Int { buffer.count }
}
