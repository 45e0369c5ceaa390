import DequeModule
import VerifyModel

/// Shares one answer per folder to "which transaction is this?": the first document of a folder to ask reads
/// the QR image; the others wait for its answer instead of scanning the same image again.
///
/// A folder's documents travel together, so only the most recent answers are kept: a worker runs for days,
/// and an answer per folder ever seen would grow without end. A folder asked again after its answer was
/// dropped is read again, which gives the same answer.
actor QRResolver {
    typealias Answer = Result<VerificationQR, DocumentFailure>

    private enum Entry {
        case pending([CheckedContinuation<Answer, Never>])
        case done(Answer)
    }

    private let keep: Int
    private var entries: [String: Entry] = [:]
    private var answered: Deque<String> = []

    init(keep: Int = 1024) {
        self.keep = keep
    }

    /// The known answer, or nil when the caller is the first to ask and must `fulfill` the group.
    func claim(_ group: String) async -> Answer? {
        switch entries[group] {
        case nil:
            entries[group] = .pending([])
            return nil
        case .done(let answer):
            return answer
        case .pending(var waiters):
            return await withCheckedContinuation { continuation in
                waiters.append(continuation)
                entries[group] = .pending(waiters)
            }
        }
    }

    func fulfill(_ group: String, with answer: Answer) {
        if case .pending(let waiters) = entries[group] {
            waiters.forEach { $0.resume(returning: answer) }
        }
        entries[group] = .done(answer)
        answered.append(group)
        while answered.count > keep, let oldest = answered.popFirst() {
            if case .done = entries[oldest] { entries[oldest] = nil }
        }
    }

    /// Answers held, for tests.
    var answersHeld: Int {
        entries.values.filter { if case .done = $0 { true } else { false } }.count
    }
}
