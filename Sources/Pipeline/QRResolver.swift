import VerifyModel

/// Shares one answer per folder to "which transaction is this?": the first document of a folder to ask reads
/// the QR image; the others wait for its answer instead of scanning the same image again.
actor QRResolver {
    typealias Answer = Result<VerificationQR, DocumentFailure>

    private enum Entry {
        case pending([CheckedContinuation<Answer, Never>])
        case done(Answer)
    }

    private var entries: [String: Entry] = [:]

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
    }
}
