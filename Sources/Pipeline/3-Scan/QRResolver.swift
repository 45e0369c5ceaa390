import BarcodeScanning
import DequeModule
import DocumentOutcomes
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
        var reads: [String: (barcodes: [Barcode], bytes: ImageBytes)] = [:]
        var readOrder: Deque<String> = []
    }

    private let keep: Int
    private let state = Mutex(State())

    init(keep: Int = 1024) {
        self.keep = keep
    }

    /// The known answer, or nil when the caller is the first to ask and must `fulfill` the group. A caller
    /// waiting for another's answer throws `CancellationError` when its task is cancelled.
    func claim(_ group: String) async throws -> Answer? {
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

    /// Which bytes a kept reading was made of: a document takes it only for the same bytes (a file replaced between
    /// the two reads is scanned again).
    struct ImageBytes: Equatable {
        var count: Int
        var hash: Int

        init(_ bytes: [UInt8]) {
            var hasher = Hasher()
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            (count, hash) = (bytes.count, hasher.finalize())
        }
    }

    /// Keeps what the answer's reading found in an image of the folder that is also a document's back (its PDF417
    /// among them), for that document: its own scan would make the same first pass over the same decode, so it takes
    /// these instead of scanning the image a second time. The most recent `keep` are kept, like the answers.
    func keep(_ barcodes: [Barcode], readFrom path: String, bytes: [UInt8], in group: String) {
        let read = (barcodes: barcodes, bytes: ImageBytes(bytes))
        state.withLock { state in
            let key = group + "\n" + path
            if state.reads.updateValue(read, forKey: key) == nil { state.readOrder.append(key) }
            while state.readOrder.count > keep, let oldest = state.readOrder.popFirst() { state.reads[oldest] = nil }
        }
    }

    /// What `keep` kept for the image at `path` in `group`, given once, and only for the same `bytes`.
    func takeBarcodes(readFrom path: String, bytes: [UInt8], in group: String) -> [Barcode]? {
        guard let read = state.withLock({ state in state.reads.removeValue(forKey: group + "\n" + path) }) else { return nil }
        return read.bytes == ImageBytes(bytes) ? read.barcodes : nil
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
