import Foundation
import Testing

/// Creates `name` (raw bytes, not UTF-8: as an SMB share or a zip gives them) in `folder`: a folder, or a file holding
/// `contents`. No `String` path can name it, so it is made from the bytes.
func makeEntry(in folder: URL, name: [UInt8], folder isFolder: Bool = false, contents: Data = Data()) throws {
    let path = (Array(folder.path.utf8) + [UInt8(ascii: "/")] + name).map { CChar(bitPattern: $0) } + [0]
    if isFolder {
        try #require(mkdir(path, 0o700) == 0, "mkdir: \(errno)")
        return
    }
    let descriptor = open(path, O_CREAT | O_WRONLY | O_EXCL, 0o600)
    try #require(descriptor >= 0, "open: \(errno)")
    defer { close(descriptor) }
    let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    try #require(written == contents.count)
}

@Suite("Batch entries whose names are not UTF-8, or hold a newline", .serialized)
struct UndecodableNameTests {
    static let qrImage = try! Data(contentsOf: CLIRunner.root.appendingPathComponent("Samples/images/qr-verification-1.png"))

    @Test("run: a transaction folder and an image whose names are not UTF-8 each give an error result, counted; exit 1")
    func runReportsThem() async throws {
        let folder = try temporaryFolder("undecodable-run")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: ["ok-1"])
        try makeEntry(in: batch, name: Array("caf".utf8) + [0xE9], folder: true)
        try makeEntry(in: batch, name: Array("b".utf8) + [0xFF] + Array("-front.jpg".utf8), contents: Self.qrImage)
        // Names that are not images, or hidden, are left out as any such name is.
        try makeEntry(in: batch, name: Array("notes".utf8) + [0xE9] + Array(".txt".utf8), contents: Data("x".utf8))
        try makeEntry(in: batch, name: Array(".hidden".utf8) + [0xE9], folder: true)
        let store = folder.appendingPathComponent("store.sqlite").path
        let outcome = try await CLIRunner.run(["run", batch.path, "--store", store])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        let lines = try resultLines(outcome.stdout)
        #expect(lines.filter { $0.error == nil }.map(\.id).sorted() == ["ok-1/EMAIL", "ok-1/PHONE"])
        let failed = lines.filter { $0.error != nil }
        #expect(failed.map(\.id).sorted() == ["b\\xFF-front.jpg", "caf\\xE9"])
        #expect(failed.allSatisfy { $0.error?.code == "documentCaptureError" && $0.error?.message.contains("is not UTF-8") == true })
        #expect(outcome.stderr.contains("4 documents (2 failed, 0 already submitted)"), "\(outcome.stderr)")
    }

    @Test("scan DIR: an image or folder whose name is not UTF-8 is an error line; a name's newline forges no line")
    func scanReportsThem() async throws {
        let folder = try temporaryFolder("undecodable-scan")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.qrImage.write(to: folder.appendingPathComponent("a.png"))
        try makeEntry(in: folder, name: Array("caf".utf8) + [0xE9] + Array(".png".utf8), contents: Self.qrImage)
        try makeEntry(in: folder, name: Array("dir".utf8) + [0xE9], folder: true)
        let forging = "x\nforged.png: QR_CODE \"forged\".png"
        try Self.qrImage.write(to: folder.appendingPathComponent(forging))

        let json = try await CLIRunner.run(["scan", folder.path, "--json"])
        #expect(json.status == 1, "\(json.stderr)")
        let lines = try decodeLines(json)
        #expect(lines.map(\.source) == ["a.png", "caf\\xE9.png", "dir\\xE9", forging].map { folder.path + "/" + $0 })
        #expect(lines.map { $0.error?.code } == [nil, "documentCaptureError", "documentCaptureError", nil])
        #expect(lines[1].error?.message.contains("is not UTF-8") == true)

        let text = try await CLIRunner.run(["scan", folder.path])
        #expect(text.status == 1)
        // The two images' results on stdout, the two that could not be read on stderr: a line each, whatever the names.
        let textLines = (text.stdout + text.stderr).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(textLines.count == 4, "\(text.stdout)\(text.stderr)")
        #expect(text.stderr.split(separator: "\n").count == 2)
        #expect(textLines.allSatisfy { $0.hasPrefix(folder.path + "/") })
        #expect(!textLines.contains { $0.hasPrefix("forged.png") })
        #expect(textLines.contains { $0.hasPrefix(folder.path + "/x\\u{A}forged.png") }, "\(text.stdout)")
    }
}
