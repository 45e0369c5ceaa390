import Foundation

/// Reads image files, refusing any larger than an ID photo could plausibly be before reading a byte.
public enum ImageFile {
    public static let maxBytes = 256 << 20

    public struct ReadError: Error, CustomStringConvertible {
        public var description: String
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
