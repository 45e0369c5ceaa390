import Foundation
import VerifyModel

/// Reads image files, refusing any larger than an ID photo could plausibly be before reading a byte.
public enum ImageFile {
    public static let maxBytes = 256 << 20

    public struct ReadError: CodedError, CustomStringConvertible {
        public var description: String
        public var failureCode: FailureCode { .document(.documentCaptureError) }
        public var message: String { description }
    }

    public static func read(_ path: String) throws(ReadError) -> [UInt8] {
        let url = URL(fileURLWithPath: path)
        do {
            let size = try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
            guard size <= maxBytes else {
                throw ReadError(description: "file is \(size) bytes, more than the limit of \(maxBytes)")
            }
            return [UInt8](try Data(contentsOf: url))
        } catch let error as ReadError {
            throw error
        } catch {
            throw ReadError(description: "cannot read the file: \((error as NSError).localizedDescription)")
        }
    }
}

extension ImageFile {
    /// The file name extensions of the images a folder is searched for (the format itself is sniffed from the bytes).
    public static let extensions: Set<String> = ["jpg", "jpeg", "png"]

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
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey],
                                                              options: [.skipsHiddenFiles]) else { return [] }
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
