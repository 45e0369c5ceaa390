import Synchronization
import Testing

@testable import Pipeline

@Suite("Bounded queues")
struct BoundedQueueTests {
    @Test("a full queue suspends its sender until an item is taken")
    func backpressure() async throws {
        let queue = BoundedQueue<Int>(capacity: 3)
        let sent = Mutex(0)
        let producer = Task {
            for value in 0..<10 {
                await queue.send(value)
                sent.withLock { $0 += 1 }
            }
            await queue.finish()
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(sent.withLock { $0 } == 3, "only the capacity may be sent before anything is taken")
        #expect(await queue.count == 3)
        var received: [Int] = []
        while let value = await queue.receive() {
            received.append(value)
            #expect(await queue.count <= 3)
        }
        await producer.value
        #expect(received == Array(0..<10))
    }

    @Test("several receivers each get every item once, then nil")
    func manyReceivers() async {
        let queue = BoundedQueue<Int>(capacity: 2)
        let received = await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var mine: [Int] = []
                    while let value = await queue.receive() { mine.append(value) }
                    return mine
                }
            }
            for value in 0..<500 { await queue.send(value) }
            await queue.finish()
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(received.sorted() == Array(0..<500))
    }
}
