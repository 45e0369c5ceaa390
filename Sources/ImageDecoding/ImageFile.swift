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

    /// What `expand` lists: a path to read, or an image or a folder whose name is not UTF-8, by its path with that
    /// name escaped (`FolderListing`): nothing can open it, and it is reported rather than left out.
    public enum Listed: Sendable, Equatable {
        case file(String)
        case undecodable(String, isFolder: Bool)

        public var path: String {
            switch self {
            case .file(let path), .undecodable(let path, _): path
            }
        }
    }

    /// Expands folders into their image files (recursively, hidden files left out, sorted), keeping the order the
    /// caller gave; a path that is not a folder is kept as it is, whatever its name.
    public static func expand(_ paths: [String]) -> [Listed] {
        paths.flatMap { path -> [Listed] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return [.file(path)]
            }
            let root = URL(fileURLWithPath: path)
            guard
                let walker = FileManager.default.enumerator(
                    at: root, includingPropertiesForKeys: [.isRegularFileKey, .isDirectoryKey],
                    options: [.skipsHiddenFiles])
            else { return [] }
            let base = root.standardizedFileURL.path, prefix = path.hasSuffix("/") ? path : path + "/"
            func shown(_ url: URL) -> String {
                let full = url.standardizedFileURL.path
                return prefix + (full.hasPrefix(base + "/") ? String(full.dropFirst(base.count + 1)) : url.lastPathComponent)
            }
            var found: [Listed] = []
            // The folders walked, by how they are shown (the root as the caller wrote it), for the names FileManager
            // cannot give.
            var folders: [(path: String, shown: String)] = [(path, path.hasSuffix("/") ? String(path.dropLast()) : path)]
            for case let url as URL in walker {
                // A file whose kind cannot be read is left out, like any other non-file entry.
                guard let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .isDirectoryKey]) else { continue }
                if values.isDirectory == true {
                    folders.append((url.path, shown(url)))
                } else if values.isRegularFile == true, hasImageExtension(url) {
                    found.append(.file(shown(url)))
                }
            }
            for folder in folders {
                for entry in FolderListing(path: folder.path)?.undecodable ?? [] where !entry.escapedName.hasPrefix(".") {
                    guard entry.kind == .folder || entry.hasImageExtension else { continue }
                    found.append(.undecodable(folder.shown + "/" + entry.escapedName, isFolder: entry.kind == .folder))
                }
            }
            return found.sorted { $0.path < $1.path }
        }
    }
}
