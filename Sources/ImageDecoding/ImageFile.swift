import Foundation
import VerifyModel

/// Reads image files, refusing any larger than an ID photo could plausibly be before reading a byte.
public enum ImageFile {
    public static let maxBytes = 256 << 20

    /// A regular file of at most `maxBytes` (`BoundedFile`); `resolved`: see `BoundedFile.read`.
    public static func read(_ path: String, resolved: Bool = false) throws(BoundedFile.ReadError) -> [UInt8] {
        try BoundedFile.read(path, limit: maxBytes, resolved: resolved)
    }
}

extension ImageFile {
    /// The file name extensions of the images a folder is searched for (the format itself is sniffed from the bytes).
    public static let extensions: Set<String> = ["jpg", "jpeg", "png", "webp"]

    public static func hasImageExtension(_ url: URL) -> Bool {
        extensions.contains(url.pathExtension.lowercased())
    }

    /// Expands folders into their image files (recursively, hidden files left out, sorted), keeping the order the
    /// caller gave; a path that is not a folder is kept as it is, whatever its name.
    public static func expand(_ paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return [path]
            }
            let root = URL(fileURLWithPath: path)
            guard
                let walker = FileManager.default.enumerator(
                    at: root, includingPropertiesForKeys: [.isRegularFileKey],
                    options: [.skipsHiddenFiles])
            else { return [] }
            let base = root.standardizedFileURL.path, prefix = path.hasSuffix("/") ? path : path + "/"
            var files: [String] = []
            for case let url as URL in walker where hasImageExtension(url) {
                // A file whose kind cannot be read is left out, like any other non-file entry.
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
                let full = url.standardizedFileURL.path
                files.append(prefix + (full.hasPrefix(base + "/") ? String(full.dropFirst(base.count + 1)) : url.lastPathComponent))
            }
            return files.sorted()
        }
    }
}
