import Foundation
import Testing

@testable import ImageDecoding

@Suite("Folder listings keep the names that are not UTF-8")
struct FolderListingTests {
    @Test(
        "a name's bytes that are no UTF-8 character are written \\xHH, the rest as they are",
        arguments: [
            (Array("caf".utf8) + [0xE9], "caf\\xE9"),
            (Array("café".utf8) + [0xFF, 0x0A], "café\\xFF\n"),
            ([0xC3], "\\xC3"),  // a character cut short
            ([0xE2, 0x82, 0x41], "\\xE2\\x82A"),
            ([0x01, 0xF0, 0x9F, 0x98, 0x80], "\u{01}😀")
        ] as [([UInt8], String)])
    func escaped(bytes: [UInt8], text: String) {
        #expect(FolderListing.escaped(bytes) == text)
    }

    @Test("a folder's names: UTF-8 ones as they are, the others escaped with their kind")
    func listing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("listing-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data().write(to: folder.appendingPathComponent("b.png"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("a"), withIntermediateDirectories: false)
        func raw(_ name: [UInt8]) -> [CChar] { (Array(folder.path.utf8) + [UInt8(ascii: "/")] + name + [0]).map { CChar(bitPattern: $0) } }
        try #require(mkdir(raw(Array("dir".utf8) + [0xE9]), 0o700) == 0)
        let descriptor = open(raw(Array("caf".utf8) + [0xE9] + Array(".JPG".utf8)), O_CREAT | O_WRONLY, 0o600)
        try #require(descriptor >= 0)
        close(descriptor)

        let listing = try #require(FolderListing(path: folder.path))
        #expect(listing.names == ["a", "b.png"])
        #expect(
            listing.undecodable == [
                .init(escapedName: "caf\\xE9.JPG", kind: .file), .init(escapedName: "dir\\xE9", kind: .folder)
            ])
        #expect(listing.undecodable.map(\.hasImageExtension) == [true, false])
        #expect(FolderListing(path: folder.appendingPathComponent("missing").path) == nil)
    }
}
