import Synchronization
import Testing

@testable import Pipeline

/// Waits, without sleeping, until `condition` holds.
func eventually(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}

@Suite("Queues between stages")
struct StageQueueTests {
    @Test("a queue full in items suspends its sender until an item is taken")
    func backpressureByItems() async throws {
        let queue = StageQueue<Int>(limits: .init(items: 3, bytes: 1 << 20))
        let sent = Mutex(0)
        let producer = Task {
            for value in 0..<10 {
                try await queue.send(value, weight: 1)
                sent.withLock { $0 += 1 }
            }
            queue.finish()
        }
        await eventually { queue.waitingSenders == 1 }
        #expect(sent.withLock { $0 } == 3, "only the capacity may be sent before anything is taken")
        #expect(queue.count == 3)
        var received: [Int] = []
        while let value = await queue.receive() {
            received.append(value)
            #expect(queue.count <= 3)
        }
        try await producer.value
        #expect(received == Array(0..<10))
    }

    @Test("trySend adds without waiting while there is room, hands over to a waiting receiver, and refuses when full")
    func trySend() async throws {
        let queue = StageQueue<Int>(limits: .init(items: 2, bytes: 1 << 20))
        #expect(queue.trySend(1) && queue.trySend(2))
        #expect(!queue.trySend(3), "full: nothing is added")
        #expect(queue.count == 2)
        #expect(await queue.receive() == 1)
        #expect(await queue.receive() == 2)
        let receiver = Task { await queue.receive() }
        await eventually { queue.waitingReceivers == 1 }
        #expect(queue.trySend(4))
        #expect(await receiver.value == 4)
        #expect(queue.count == 0, "handed over, not buffered")
    }

    @Test("a queue full in bytes suspends its sender; an element larger than the bound still passes, alone")
    func backpressureByBytes() async throws {
        let queue = StageQueue<String>(limits: .init(items: 100, bytes: 10))
        try await queue.send("a", weight: 6)
        let second = Task { try await queue.send("b", weight: 6) }
        await eventually { queue.waitingSenders == 1 }
        #expect(queue.count == 1 && queue.bytes == 6)
        #expect(await queue.receive() == "a")
        try await second.value
        #expect(queue.bytes == 6)
        #expect(await queue.receive() == "b")
        try await queue.send("huge", weight: 1_000)
        #expect(queue.count == 1, "an empty queue takes any one element")
        #expect(await queue.receive() == "huge")
    }

    @Test("a cancelled sender throws and its element is never received; a cancelled receiver gets nil")
    func cancellation() async throws {
        let queue = StageQueue<Int>(limits: .init(items: 1, bytes: 100))
        try await queue.send(1)
        let blocked = Task { try await queue.send(2) }
        await eventually { queue.waitingSenders == 1 }
        blocked.cancel()
        await #expect(throws: CancellationError.self) { try await blocked.value }
        #expect(queue.waitingSenders == 0)
        #expect(await queue.receive() == 1)
        let receiver = Task { await queue.receive() }
        await eventually { queue.waitingReceivers == 1 }
        receiver.cancel()
        #expect(await receiver.value == nil)
        queue.finish()
        #expect(await queue.receive() == nil, "the cancelled element 2 was dropped")
    }

    @Test("several receivers each get every element once, then nil")
    func manyReceivers() async throws {
        let queue = StageQueue<Int>(limits: .init(items: 2, bytes: 1 << 20))
        let received = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var mine: [Int] = []
                    while let value = await queue.receive() { mine.append(value) }
                    return mine
                }
            }
            for value in 0..<500 { try await queue.send(value, weight: value % 7) }
            queue.finish()
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(received.sorted() == Array(0..<500))
        #expect(queue.bytes == 0)
    }
}
