import Foundation

/// How a run went, for the closing summary line.
package struct RunSummary: Sendable, Equatable {
    package var documents = 0
    package var failed = 0
    package var alreadySubmitted = 0
    package var transactions = 0
    package var completed = 0
    package var elapsed: TimeInterval = 0
    /// Documents of the input that were taken in, or were still to read, but not reported: the run was stopped (a
    /// signal, a drain cut short by its grace) before they were done. Nothing of them is lost: a later run finishes them.
    package var unfinished = 0
    /// A worker's documents given back to the queue because the store failed them: redone, and reported, then.
    package var givenBack = 0

    package init() {}
}

/// Progress, for the bar: documents done so far, and how many there are when that is known.
package struct RunProgress: Sendable {
    package var done: Int
    package var failed: Int
    package var total: Int?

    package init(done: Int, failed: Int, total: Int?) {
        (self.done, self.failed, self.total) = (done, failed, total)
    }
}
