import Foundation
import GRDB
import Logging

/// The SQLite store's file: created for its owner only, kept that way, opened by processes that race to set it up.
enum StoreFile {
    /// Creates the file with mode 0600 unless it exists: SQLite gives the -wal and -shm files the same mode. Another
    /// process may create it first (EEXIST): both then open the same store. A symlink to a file not there yet (a store
    /// kept on another volume) has that file created, 0600 too: O_EXCL would refuse the link itself. Returns whether
    /// it existed.
    static func create(_ path: String, allowed: Bool) throws -> Bool {
        if FileManager.default.fileExists(atPath: path) { return true }
        guard allowed else { throw StoreError.cannotOpen("no store at \(path)") }
        var link = stat()
        let dangling = lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
        let descriptor = Foundation.open(path, O_CREAT | O_WRONLY | O_CLOEXEC | (dangling ? 0 : O_EXCL), 0o600)
        guard descriptor >= 0 || errno == EEXIST else { throw StoreError.cannotOpen("cannot create \(path): \(String(cString: strerror(errno)))") }
        if descriptor >= 0 { close(descriptor) }
        return false
    }

    /// Identity data: the store and its -wal and -shm files are for their owner only. Through a symlink, SQLite keeps
    /// them beside the file the link names.
    static func tightenPermissions(_ path: String, logger: Logger) {
        let store =
            realpath(path, nil).map { resolved in
                defer { free(resolved) }
                return String(cString: resolved)
            } ?? path
        for file in [store, store + "-wal", store + "-shm"] {
            var status = stat()
            guard stat(file, &status) == 0, status.st_mode & 0o077 != 0 else { continue }
            let before = String(status.st_mode & 0o777, radix: 8)
            if chmod(file, 0o600) == 0 {
                logger.warning(
                    "the store file was readable beyond its owner; its mode is now 0600",
                    metadata: ["store.file": "\(file)", "store.mode.before": "\(before)"])
            } else {
                logger.warning(
                    "the store file is readable beyond its owner and its mode cannot be changed",
                    metadata: ["store.file": "\(file)", "store.mode": "\(before)", "error": "\(String(cString: strerror(errno)))"])
            }
        }
    }

    /// Runs `open` again, up to five times, when SQLite answers "database is locked" at once: processes that open a
    /// new store together race to set it up (WAL mode, migrations, its key), and a read that must become a write gets
    /// SQLITE_BUSY without waiting for the busy timeout. Every step of the open is idempotent.
    static func retryingWhenBusy<T>(_ open: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try open()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 5 {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.02 * Double(attempt))
            }
        }
    }

    /// SQLite's message without the SQL text, which could quote document data; any other error by its type only
    /// (a row decoding error's description prints the row, verification code included).
    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "SQLite error \(error.resultCode)" }
        return "\(type(of: error))"
    }
}
