import Foundation
import NIOCore
import NIOPosix

/// One line of NDJSON input, or the size of a line too long to hold.
enum InputLine: Sendable, Equatable {
    case text(String)
    case tooLong(bytes: Int)

    /// Only spaces and tabs: skipped, and not counted. Stops at the first other byte, so a long line costs nothing.
    static func isBlank(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }
}

/// Splits a sequence of byte chunks into lines, in time linear in the input: each byte is searched once, and a
/// line longer than `maxLineBytes` is counted and dropped as it streams past instead of being held.
struct LineSplitter<Chunks: AsyncSequence>: AsyncSequence where Chunks.Element == ByteBuffer {
    typealias Element = InputLine

    let chunks: Chunks
    let maxLineBytes: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: Chunks.AsyncIterator
        let maxLineBytes: Int
        var buffer: [UInt8] = []
        /// Where the current line starts in `buffer`, and where the search for its end resumes.
        var lineStart = 0
        var searchFrom = 0
        /// Bytes of the current line already dropped because it is too long.
        var dropped = 0
        var ended = false

        mutating func next() async throws -> InputLine? {
            while true {
                if let newline = buffer[searchFrom...].firstIndex(of: 0x0A) {
                    defer {
                        lineStart = newline + 1
                        searchFrom = lineStart
                    }
                    // A line that arrived whole in one chunk is held to the limit as one that streamed past.
                    if dropped > 0 || newline - lineStart > maxLineBytes {
                        defer { dropped = 0 }
                        return .tooLong(bytes: dropped + newline - lineStart)
                    }
                    var end = newline
                    if end > lineStart, buffer[end - 1] == 0x0D { end -= 1 }
                    return .text(String(decoding: buffer[lineStart..<end], as: UTF8.self))
                }
                searchFrom = buffer.count
                if buffer.count - lineStart > maxLineBytes {
                    dropped += buffer.count - lineStart
                    buffer.removeAll(keepingCapacity: false)
                    (lineStart, searchFrom) = (0, 0)
                } else if lineStart > 0, lineStart >= buffer.count / 2 {
                    // Keep the buffer from growing with lines already handed out.
                    buffer.removeSubrange(..<lineStart)
                    searchFrom -= lineStart
                    lineStart = 0
                }
                if ended { return finalLine() }
                guard let chunk = try await chunks.next() else {
                    ended = true
                    continue
                }
                buffer.append(contentsOf: chunk.readableBytesView)
            }
        }

        /// What is left after the last newline: a line of its own unless it is only blanks.
        private mutating func finalLine() -> InputLine? {
            defer {
                dropped = 0
                buffer = []
                (lineStart, searchFrom) = (0, 0)
            }
            let rest = buffer[lineStart...]
            if dropped > 0 || rest.count > maxLineBytes { return .tooLong(bytes: dropped + rest.count) }
            guard rest.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) else { return nil }
            return .text(String(decoding: rest, as: UTF8.self))
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: chunks.makeAsyncIterator(), maxLineBytes: maxLineBytes)
    }
}

/// Standard input (or any readable descriptor) as an async sequence of byte chunks. Pipes, terminals and sockets
/// are read by SwiftNIO's event loop (backpressure and cancellation come with its async channel); a regular file or
/// another device, which an event loop cannot watch and whose reads never block for long, is read on NIO's thread
/// pool.
enum ByteInput {
    static let chunkSize = 1 << 20

    static func withChunks<Result: Sendable>(
        fileDescriptor: Int32,
        _ body: (ByteChunks) async throws -> Result
    ) async throws -> Result {
        var information = stat()
        guard fstat(fileDescriptor, &information) == 0 else { throw IOError(errnoCode: errno, reason: "fstat") }
        guard Self.eventLoopCanWatch(fileDescriptor, mode: information.st_mode) else {
            return try await body(ByteChunks(FileChunks(fileDescriptor: fileDescriptor)))
        }
        // NIO closes the descriptor it owns: give it a copy so that the process's stdin stays open.
        let copy = dup(fileDescriptor)
        guard copy >= 0 else { throw IOError(errnoCode: errno, reason: "dup") }
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .takingOwnershipOfDescriptor(input: copy) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            close(copy)
            throw error
        }
        return try await channel.executeThenClose { inbound, _ in try await body(ByteChunks(inbound)) }
    }

    /// Pipes, sockets and terminals; not regular files, nor character devices such as `/dev/null` (stdin under
    /// systemd's `StandardInput=null`, `docker run` without `-i`, cron), which epoll refuses and NIO's pipe
    /// bootstrap then traps on.
    static func eventLoopCanWatch(_ fileDescriptor: Int32, mode: mode_t) -> Bool {
        switch mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: true
        case S_IFCHR: isatty(fileDescriptor) == 1
        default: false
        }
    }

    /// Either kind of input, for the line splitter.
    struct ByteChunks: AsyncSequence {
        typealias Element = ByteBuffer
        let makeIterator: () -> any AsyncIteratorProtocol<ByteBuffer, any Error>

        init<Base: AsyncSequence>(_ base: Base) where Base.Element == ByteBuffer, Base.Failure == any Error {
            makeIterator = { base.makeAsyncIterator() }
        }

        struct AsyncIterator: AsyncIteratorProtocol {
            var base: any AsyncIteratorProtocol<ByteBuffer, any Error>

            mutating func next() async throws -> ByteBuffer? { try await base.next() }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: makeIterator()) }
    }

    /// A regular file read in chunks, each on the thread pool; cancellation is checked before each read.
    struct FileChunks: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let fileDescriptor: Int32

        struct AsyncIterator: AsyncIteratorProtocol {
            let fileDescriptor: Int32
            var ended = false

            mutating func next() async throws -> ByteBuffer? {
                guard !ended else { return nil }
                let descriptor = fileDescriptor
                let chunk = try await NIOThreadPool.singleton.runIfActive { () throws -> ByteBuffer in
                    var buffer = ByteBufferAllocator().buffer(capacity: ByteInput.chunkSize)
                    while true {
                        var result = 0
                        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: ByteInput.chunkSize) { pointer in
                            result = read(descriptor, pointer.baseAddress, pointer.count)
                            return Swift.max(result, 0)
                        }
                        if result >= 0 { return buffer }
                        guard errno == EINTR else { throw IOError(errnoCode: errno, reason: "read") }
                    }
                }
                if chunk.readableBytes == 0 {
                    ended = true
                    return nil
                }
                return chunk
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(fileDescriptor: fileDescriptor) }
    }
}
