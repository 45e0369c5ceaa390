import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A folder's entries as readdir(3) gives them. FileManager leaves out a name that is not UTF-8 (`caf\xE9` from an
/// SMB share or a zip), so that a batch would lose its documents without a word: such a name is kept here, escaped,
/// for its caller to report. A name that is not UTF-8 has no path a `String` can hold: it cannot be opened.
public struct FolderListing: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case folder, file, other
    }

    /// An entry whose name is not UTF-8: the name with each byte that is not part of a UTF-8 character written
    /// `\xHH`, and what it is (symlinks followed).
    public struct Undecodable: Sendable, Equatable {
        public var escapedName: String
        public var kind: Kind
    }

    /// The names that are UTF-8, sorted.
    public var names: [String]
    /// The names that are not, sorted by their escaped form.
    public var undecodable: [Undecodable]

    /// Nil when the folder cannot be listed.
    public init?(path: String) {
        guard let folder = opendir(path) else { return nil }
        defer { closedir(folder) }
        var names: [String] = [], undecodable: [Undecodable] = []
        while let entry = readdir(folder) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard bytes != Array(".".utf8), bytes != Array("..".utf8) else { continue }
            if let name = String(validating: bytes, as: UTF8.self) {
                names.append(name)
            } else {
                undecodable.append(Undecodable(escapedName: Self.escaped(bytes), kind: Self.kind(of: bytes, in: dirfd(folder))))
            }
        }
        self.names = names.sorted()
        self.undecodable = undecodable.sorted { $0.escapedName < $1.escapedName }
    }

    /// The bytes as text: UTF-8 characters as they are, any other byte as `\xHH`.
    public static func escaped(_ bytes: [UInt8]) -> String {
        var text = "", parser = Unicode.UTF8.ForwardParser(), iterator = bytes.makeIterator(), position = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                text.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<(position + length)] {
                    text += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
                position += length
            case .emptyInput:
                return text
            }
        }
    }

    private static func kind(of name: [UInt8], in folder: Int32) -> Kind {
        var status = stat()
        let found = fstatat(folder, name.map { CChar(bitPattern: $0) } + [0], &status, 0)
        guard found == 0 else { return .other }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return .folder
        case S_IFREG: return .file
        default: return .other
        }
    }
}

extension FolderListing.Undecodable {
    /// Whether the name ends in one of `ImageFile.extensions` (which are ASCII, so the escaped name shows it).
    public var hasImageExtension: Bool {
        guard let dot = escapedName.lastIndex(of: "."), dot != escapedName.startIndex else { return false }
        return ImageFile.extensions.contains(escapedName[escapedName.index(after: dot)...].lowercased())
    }
}
