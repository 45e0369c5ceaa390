import Application
import Foundation
import Pipeline
import TransactionStore
import TransactionViews
import VerifyModel

/// How `review` prints: reasons, never values.
enum ReviewViews {
    /// One line per review, each column as wide as its widest cell; the reason last, whole.
    static func table(_ entries: [ReviewEntry], now: Date) -> String {
        guard !entries.isEmpty else { return "No reviews." }
        var table = TextTable(headers: ["ID", "TRANSACTION", "TYPE", "STATE", "CODE", "FIELD", "AGE", "EXPIRES", "REASON"])
        for entry in entries {
            table.append([
                String(entry.id), entry.transactionId ?? "-", entry.documentType?.rawValue ?? "-", entry.state.rawValue, entry.code,
                entry.field ?? "-", Age.text(now.timeIntervalSince(entry.failedAt)), entry.expiresAt.map(Timestamp.string) ?? "-", entry.message
            ])
        }
        return table.lines(width: nil).joined(separator: "\n")
    }

    /// The same object `GET /api/review` serves for the review.
    static func json(_ entry: ReviewEntry) -> String { StatusJSON.review(entry) }

    static func result(_ result: ReviewResult) -> String {
        let place = [result.entry.transactionId ?? "review \(result.entry.id)", result.entry.documentType?.rawValue].compactMap { $0 }
            .joined(separator: " ")
        if result.done { return "\(place): \(result.entry.state.rawValue)" }
        return "\(place): not done: \(result.reason ?? "refused")"
    }

}

/// Writes a review's kept inputs to a folder of its own, for a person: created here (0700) and never an existing path,
/// a symlink included; each file 0600, made exclusively.
enum ReviewExport {
    static func write(_ inputs: RetainedInputs, to folder: String) throws {
        guard mkdir(folder, 0o700) == 0 else {
            throw ReviewRefusal(
                "cannot create \(folder): \(errno == EEXIST ? "it exists (export makes a new folder)" : String(cString: strerror(errno)))")
        }
        for (role, bytes) in inputs.imageBytes.sorted(by: { $0.key < $1.key }) {
            try file(folder, "\(role.rawValue).\(Self.fileExtension(bytes))", bytes)
        }
        if let mrz = inputs.mrz { try file(folder, "mrz.txt", Array((mrz + "\n").utf8)) }
        if !inputs.captured.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try file(folder, "fields.json", Array(try encoder.encode(inputs.captured)))
        }
    }

    static func fileExtension(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0xFF, 0xD8]) { return "jpg" }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "png" }
        if bytes.count >= 12, bytes[8..<12].elementsEqual(Array("WEBP".utf8)) { return "webp" }
        return "bin"
    }

    private static func file(_ folder: String, _ name: String, _ bytes: [UInt8]) throws {
        let path = folder + "/" + name
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReviewRefusal("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var rest = bytes[...]
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw ReviewRefusal("cannot write \(path): \(String(cString: strerror(errno)))") }
            rest = rest.dropFirst(written)
        }
    }
}
