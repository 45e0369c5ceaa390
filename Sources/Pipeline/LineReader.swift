import Dispatch
import Foundation
import Synchronization

/// Set when the run should stop taking input (SIGINT, SIGTERM); in-flight documents still finish.
public final class StopSignal: Sendable {
    private let flag = Mutex(false)

    public init() {}

    public func stop() { flag.withLock { $0 = true } }
    public var isStopped: Bool { flag.withLock { $0 } }
}

/// One line of NDJSON input, or a line too long to hold.
enum InputLine: Sendable {
    case text(String)
    case tooLong(bytes: Int)
}

/// Reads lines from a file descriptor on a thread of its own, so a blocking read never holds one of the few
/// threads the stages run on. At most `window` lines wait to be taken: a slow pipeline slows the reading.
final class LineReader: Sendable {
    static let maxLineBytes = 256 << 20

    let lines: AsyncStream<InputLine>
    private let slots: DispatchSemaphore

    init(fileDescriptor: Int32, stop: StopSignal, window: Int = 64) {
        let (stream, continuation) = AsyncStream.makeStream(of: InputLine.self)
        lines = stream
        let slots = DispatchSemaphore(value: window)
        self.slots = slots
        let thread = Thread {
            var buffer: [UInt8] = []
            var overlong = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            var finished = false
            func emit(_ line: InputLine) {
                slots.wait()
                continuation.yield(line)
            }
            while !finished {
                // Hand out every complete line already buffered.
                while let newline = buffer.firstIndex(of: 0x0A) {
                    if overlong > 0 {
                        emit(.tooLong(bytes: overlong + newline))
                        overlong = 0
                    } else {
                        var line = buffer[..<newline]
                        if line.last == 0x0D { line = line.dropLast() }
                        emit(.text(String(decoding: line, as: UTF8.self)))
                    }
                    buffer.removeSubrange(...newline)
                }
                if buffer.count > Self.maxLineBytes {
                    overlong += buffer.count
                    buffer.removeAll(keepingCapacity: false)
                }
                if stop.isStopped { break }
                var poller = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 200) > 0 else { continue }
                let count = read(fileDescriptor, &chunk, chunk.count)
                if count > 0 {
                    buffer.append(contentsOf: chunk[..<count])
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    finished = true
                }
            }
            if !stop.isStopped {
                if overlong > 0 {
                    emit(.tooLong(bytes: overlong + buffer.count))
                } else if !buffer.isEmpty, buffer.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) {
                    emit(.text(String(decoding: buffer, as: UTF8.self)))
                }
            }
            continuation.finish()
        }
        thread.name = "verify-pipeline stdin"
        thread.start()
    }

    /// The consumer took a line: the reader may read one more.
    func taken() { slots.signal() }
}
