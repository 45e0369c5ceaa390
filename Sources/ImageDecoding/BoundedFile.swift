import Foundation
import VerifyModel

#if canImport(Glibc)
    import Glibc
#endif

/// Reads input files without trusting them: a regular file only (not a FIFO, a device or a folder), opened
/// without following a symlink in its last component, refused before a byte is read when it declares more than
/// `limit` bytes, and never read past `limit` bytes should it grow meanwhile (a sparse 1 GiB file costs nothing).
public enum BoundedFile {
    public struct ReadError: CodedError, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            case unreadable
            case notRegularFile
            case tooLarge(limit: Int)
            /// A resolved path that opened as another file: a folder on the way was swapped for a symlink meanwhile.
            case pathChanged
        }

        public var reason: Reason
        public var description: String {
            switch reason {
            case .unreadable: "cannot read the file"
            case .notRegularFile: "not a regular file"
            case .tooLarge(let limit): "the file is larger than the limit of \(limit) bytes"
            case .pathChanged: "the path changed while the file was opened"
            }
        }

        public var failureCode: FailureCode { .document(.documentCaptureError) }
        public var message: String { description }
    }

    /// `resolved`: `path` was resolved by `realpath` (and checked against a confinement), so the file opened must be
    /// the one at that very path. O_NOFOLLOW guards only the last component; a folder on the way swapped for a
    /// symlink between the check and the open is caught here, by the path the kernel gives the open descriptor.
    public static func read(_ path: String, limit: Int, resolved: Bool = false) throws(ReadError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused as not a regular file right after.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw ReadError(reason: errno == ELOOP ? .notRegularFile : .unreadable) }
        defer { close(descriptor) }
        if resolved, let opened = openedPath(descriptor), opened != path { throw ReadError(reason: .pathChanged) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ReadError(reason: .unreadable) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw ReadError(reason: .notRegularFile) }
        guard status.st_size <= limit else { throw ReadError(reason: .tooLarge(limit: limit)) }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= limit else { throw ReadError(reason: .tooLarge(limit: limit)) }
                // count is at most limit here, and at least 1: limit - count + 1 cannot overflow, even for Int.max.
                bytes.append(contentsOf: repeatElement(0, count: min(max(count, 4096), limit - count + 1)))
            }
            let read = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { throw ReadError(reason: .unreadable) }
            if read == 0 { break }
            count += read
            guard count <= limit else { throw ReadError(reason: .tooLarge(limit: limit)) }
        }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// The path of the file an open descriptor refers to, from /proc; nil where /proc is not mounted.
    static func openedPath(_ descriptor: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A UTF-8 text file of at most `limit` bytes.
    public static func readText(_ path: String, limit: Int, resolved: Bool = false) throws(ReadError) -> String {
        let bytes = try read(path, limit: limit, resolved: resolved)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ReadError(reason: .unreadable) }
        return text
    }
}

/// Directories files may be read from. A path is resolved (symlinks included) before it is checked, and the
/// resolved path is what gets opened, so a symlink cannot lead out.
public struct FileConfinement: Sendable, Equatable {
    /// The allowed directories, resolved; empty: nothing is allowed.
    public let roots: [String]

    /// Directories that do not exist are left out: nothing can be read from them anyway.
    public init(directories: [String]) {
        roots = directories.compactMap(Self.resolve)
    }

    /// The resolved path when it lies inside an allowed directory, else nil.
    public func resolve(_ path: String) -> String? {
        guard let resolved = Self.resolve(path) else { return nil }
        return roots.contains { resolved == $0 || resolved.hasPrefix($0 == "/" ? "/" : $0 + "/") } ? resolved : nil
    }

    /// `realpath(3)`: absolute, with every symlink, `.` and `..` resolved; nil when the path does not exist.
    public static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
