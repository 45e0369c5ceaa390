import BlockingWaits
import Foundation
import Synchronization

/// A child process whose output is read line by line as it comes, with timeouts, while the test writes to it.
final class InteractiveProcess: Sendable {
    let process: Process
    private let input: FileHandle
    private let lines = Mutex<[String]>([])
    private let arrived = DispatchSemaphore(value: 0)
    private let errors = Mutex(Data())
    /// Signalled once by each reader thread at the end of its pipe: after the exit, what the process wrote is all in.
    private let drained = DispatchSemaphore(value: 0)
    private let readersDone = Mutex(false)
    /// Signalled by `nextLine` when it takes the last line read; a paced reader reads on only then.
    private let demand = DispatchSemaphore(value: 0)
    private let pacing: Mutex<Bool>

    /// - Parameter paced: read the process's output only as the test asks for lines, through a pipe of one
    ///   page, so the process can be at most about two pages of output ahead of what the test has taken (a
    ///   kill after line N then lands while the process still has work to do).
    init(
        executable: URL = CLIRunner.executable, _ arguments: [String], environment: [String: String] = [:],
        paced: Bool = false
    ) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = CLIRunner.root
        process.environment = CLIRunner.environment.merging(environment) { $1 }
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        input = stdin.fileHandleForWriting
        pacing = Mutex(paced)
        if paced {
            let pipeSize: Int32 = 4096, setPipeSize: Int32 = 1031  // F_SETPIPE_SZ
            _ = fcntl(stdout.fileHandleForWriting.fileDescriptor, setPipeSize, pipeSize)
        }
        try process.run()
        let output = stdout.fileHandleForReading
        Thread { [self] in
            defer { drained.signal() }
            var buffer = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    self.lines.withLock { $0.append(line) }
                    self.arrived.signal()
                }
                while self.pacing.withLock({ $0 }), self.lines.withLock({ !$0.isEmpty }) { self.demand.wait() }
            }
        }.start()
        let errorHandle = stderr.fileHandleForReading
        Thread { [self] in
            defer { drained.signal() }
            while true {
                let chunk = errorHandle.availableData
                if chunk.isEmpty { break }
                self.errors.withLock { $0.append(chunk) }
            }
        }.start()
    }

    func write(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    func closeInput() {
        try? input.close()
    }

    /// The next line the process printed, waiting at most `timeout` seconds for it (off the cooperative
    /// pool).
    func nextLine(timeout: Double = 20) async -> String? {
        await offCooperativePool { [self] in
            guard arrived.wait(timeout: .now() + timeout) == .success else { return nil }
            let (line, taken) = lines.withLock { ($0.removeFirst(), $0.isEmpty) }
            if taken { demand.signal() }
            return line
        }
    }

    /// The output lines read and not yet taken by `nextLine`.
    var unreadLines: [String] { lines.withLock { $0 } }

    var stderr: String { errors.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits for the process to end, at most `timeout` seconds (on a Dispatch thread, see `offCooperativePool`).
    func waitForExit(timeout: Double = 60) async -> Bool {
        await offCooperativePool { [self] in waitForExitBlocking(timeout: timeout) }
    }

    private func waitForExitBlocking(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else { return false }
        // What is left in the pipe is read at once now.
        pacing.withLock { $0 = false }
        demand.signal()
        // The pipes end when the process (and any child holding them) is gone; their last bytes may still be in flight.
        if !readersDone.withLock({ $0 }),
            drained.wait(timeout: .now() + 5) == .success, drained.wait(timeout: .now() + 5) == .success
        {
            readersDone.withLock { $0 = true }
        }
        return true
    }
}
