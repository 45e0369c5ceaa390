import DocumentOutcomes
import Foundation
import Pipeline
import Synchronization

/// A one-line progress bar on stderr, redrawn at most ten times a second, and erased before a result line is written
/// to the same terminal (`clear`).
final class ProgressBar: Sendable {
    private struct State {
        var started = Date()
        var lastDraw = Date.distantPast
        var drawn = false
    }

    private let state = Mutex(State())

    func update(_ progress: RunProgress) {
        state.withLock { state in
            let now = Date()
            guard now.timeIntervalSince(state.lastDraw) >= 0.1 || progress.done == progress.total else { return }
            state.lastDraw = now
            state.drawn = true
            let rate = Double(progress.done) / max(now.timeIntervalSince(state.started), 0.001)
            var line = "\r\u{1B}[K"
            if let total = progress.total, total > 0 {
                let width = 30, filled = min(width, progress.done * width / total)
                line += "[" + String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled) + "] "
                line += "\(progress.done)/\(total)"
            } else {
                line += "\(progress.done)"
            }
            line += " documents, \(progress.failed) failed, \(String(format: "%.1f", rate))/s  "
            CommandOutput.standardError(line)
        }
    }

    /// Erases the bar, so that a line can be written where it was; the next update draws it again at once.
    func clear() {
        state.withLock { state in
            guard state.drawn else { return }
            state.drawn = false
            state.lastDraw = .distantPast
            CommandOutput.standardError("\r\u{1B}[K")
        }
    }

    func finish() {
        state.withLock { state in
            if state.drawn { CommandOutput.standardError("\n") }
        }
    }
}
