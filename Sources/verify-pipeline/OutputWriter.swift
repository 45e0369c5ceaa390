import Application
import ArgumentParser
import DocumentOutcomes
import Foundation
import Pipeline
import TransactionViews
import VerifyModel

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one line per document, each as soon as it is done (no buffering across lines), to stdout or to
/// `--output`: NDJSON, or a readable line (`ResultText`) for a person at a terminal (`--format`). Over a progress bar
/// on the same terminal, the bar is cleared before each line and drawn again after it. A reader that goes away (a
/// closed pipe: `run … | head`) ends the writing quietly (`readerGone`). A file is written under a temporary name in its folder and renamed into place by `finish()`, so a
/// reader never sees half a file under the final name; an existing path that is not a regular file (a FIFO, a
/// symlink, a device, a folder) is refused, not replaced. A write that fails (a full disk) stops the writing (and the
/// caller stops the run) and is reported by `finish()`, never by a signal.
actor OutputWriter {
    private let descriptor: Int32
    /// The file's final path and the temporary one written meanwhile; nil for stdout.
    private let file: (final: String, temporary: String)?
    private var writeError: String?
    private var finished = false
    private let encoder = ResultLine.encoder
    private let format: ResultFormat
    private let progress: ProgressBar?
    /// The pipe's reader closed it: nothing more is written, and the command ends quietly.
    private(set) var readerGone = false

    /// `nil` or `-`: standard output.
    init(path: String?, format: ResultFormat = .ndjson, progress: ProgressBar? = nil) throws {
        self.format = format
        self.progress = progress
        guard let path, path != "-" else {
            descriptor = STDOUT_FILENO
            file = nil
            return
        }
        var existing = stat()
        if lstat(path, &existing) == 0, (existing.st_mode & S_IFMT) != S_IFREG {
            throw CommandFailure("\(path) exists and is not a regular file; it is left as it is")
        }
        let url = URL(fileURLWithPath: path)
        var template = Array(url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).XXXXXX").path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }  // 0600, created anew
        guard descriptor >= 0 else { throw CommandFailure("cannot create a file beside \(path): \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        file = (path, String(cString: template))
    }

    /// false once a write has failed: nothing more is written, and `finish()` reports it.
    @discardableResult
    func write(_ outcome: DocumentOutcome) -> Bool {
        guard writeError == nil, !readerGone else { return false }
        var data =
            switch format {
            case .ndjson: ResultLine(outcome).json(encoder)
            case .text: Data(ResultText(outcome).line.utf8)
            }
        data.append(0x0A)
        progress?.clear()
        var written = 0
        while written < data.count {
            let result = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if result < 0, errno == EINTR { continue }
            if result < 0, errno == EPIPE, file == nil {
                readerGone = true
                return false
            }
            guard result > 0 else {
                writeError = String(cString: strerror(errno))
                return false
            }
            written += result
        }
        return true
    }

    /// For a run that ends before `finish()`: the temporary file is removed, the final path left as it was.
    func discard() {
        guard let file, !finished else { return }
        finished = true
        close(descriptor)
        unlink(file.temporary)
    }

    /// Flushes the file to disk and moves it into place; throws when a write failed (the partial file is
    /// removed) or the file cannot be moved.
    func finish() throws {
        guard !finished else { return }
        finished = true
        guard let file else {
            if let writeError { throw CommandFailure("cannot write the results to stdout: \(writeError)") }
            return
        }
        if writeError == nil, fsync(descriptor) != 0 { writeError = String(cString: strerror(errno)) }
        close(descriptor)
        if let writeError {
            unlink(file.temporary)
            throw CommandFailure("cannot write the results to \(file.final): \(writeError)")
        }
        guard rename(file.temporary, file.final) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(file.temporary)
            throw CommandFailure("cannot write the results to \(file.final): \(reason)")
        }
    }
}

/// How results are printed: `ndjson` (CONTRACT §6), or `text`, a line a person reads (the default on a terminal).
enum ResultFormat: String, CaseIterable, ExpressibleByArgument {
    case text, ndjson

    /// Text where the results go to a terminal, NDJSON to a pipe or a file.
    static func resolved(_ asked: ResultFormat?, output: String?) -> ResultFormat {
        if let asked { return asked }
        return (output == nil || output == "-") && isatty(STDOUT_FILENO) == 1 ? .text : .ndjson
    }
}
