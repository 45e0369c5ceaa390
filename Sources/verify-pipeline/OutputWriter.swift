import Foundation
import Pipeline
import TransactionViews
import VerifyModel

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one NDJSON line per document, each as soon as it is done (no buffering across lines), to stdout or to
/// `--output`. A file is written under a temporary name in its folder and renamed into place by `finish()`, so a
/// reader never sees half a file under the final name; an existing path that is not a regular file (a FIFO, a
/// symlink, a device, a folder) is refused, not replaced. A write that fails (a full disk) stops the writing (and the
/// caller stops the run) and is reported by `finish()`, never by a signal.
actor OutputWriter {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let descriptor: Int32
    /// The file's final path and the temporary one written meanwhile; nil for stdout.
    private let file: (final: String, temporary: String)?
    private var writeError: String?
    private var finished = false
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// `nil` or `-`: standard output.
    init(path: String?) throws(Failure) {
        guard let path, path != "-" else {
            descriptor = STDOUT_FILENO
            file = nil
            return
        }
        var existing = stat()
        if lstat(path, &existing) == 0, (existing.st_mode & S_IFMT) != S_IFREG {
            throw Failure(description: "\(path) exists and is not a regular file; it is left as it is")
        }
        let url = URL(fileURLWithPath: path)
        var template = Array(url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).XXXXXX").path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }  // 0600, created anew
        guard descriptor >= 0 else { throw Failure(description: "cannot create a file beside \(path): \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        file = (path, String(cString: template))
    }

    /// false once a write has failed: nothing more is written, and `finish()` reports it.
    @discardableResult
    func write(_ outcome: DocumentOutcome) -> Bool {
        guard writeError == nil else { return false }
        // A result line that cannot be encoded still gets a line, so the reader keeps one line per input.
        var data =
            (try? encoder.encode(ResultLine(outcome: outcome)))
            ?? Data(#"{"error":{"code":"submissionError","message":"result could not be encoded"}}"#.utf8)
        // A folder's name or a field may hold a terminal control JSON leaves raw (C1, bidi marks); those start with
        // one of these bytes, which base64 images never hold.
        if data.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) {
            data = Data(String(decoding: data, as: UTF8.self).escapingTerminalControlsInJSON.utf8)
        }
        data.append(0x0A)
        var written = 0
        while written < data.count {
            let result = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if result < 0, errno == EINTR { continue }
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
    func finish() throws(Failure) {
        guard !finished else { return }
        finished = true
        guard let file else {
            if let writeError { throw Failure(description: "cannot write the results to stdout: \(writeError)") }
            return
        }
        if writeError == nil, fsync(descriptor) != 0 { writeError = String(cString: strerror(errno)) }
        close(descriptor)
        if let writeError {
            unlink(file.temporary)
            throw Failure(description: "cannot write the results to \(file.final): \(writeError)")
        }
        guard rename(file.temporary, file.final) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(file.temporary)
            throw Failure(description: "cannot write the results to \(file.final): \(reason)")
        }
    }
}

/// A result line (CONTRACT §6): the DocumentSubmissionResponse plus `id`, or `{"id", "error": {"code", "message"}}`.
struct ResultLine: Encodable {
    let outcome: DocumentOutcome

    enum Key: String, CodingKey {
        case id, documentId, source, error, transactionId, documentType, alreadySubmitted, skipped, warnings
    }

    struct Failure: Encodable {
        var code: String
        var message: String
    }

    func encode(to encoder: any Encoder) throws {
        if let response = outcome.response { try response.encode(to: encoder) }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(outcome.inputId ?? outcome.source, forKey: .id)
        try container.encode(outcome.source, forKey: .source)
        try container.encodeIfPresent(outcome.documentId, forKey: .documentId)
        if outcome.response == nil {
            try container.encodeIfPresent(outcome.transactionId, forKey: .transactionId)
            try container.encodeIfPresent(outcome.documentType?.rawValue, forKey: .documentType)
        }
        if let failure = outcome.failure {
            try container.encode(Failure(code: failure.code.rawValue, message: failure.message), forKey: .error)
        }
        if outcome.alreadySubmitted { try container.encode(true, forKey: .alreadySubmitted) }
        if outcome.skipped { try container.encode(true, forKey: .skipped) }
        if !outcome.warnings.isEmpty { try container.encode(outcome.warnings, forKey: .warnings) }
    }
}
