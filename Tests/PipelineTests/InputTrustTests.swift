import BarcodeScanning
import DocumentOutcomes
import Foundation
import ImageDecoding
import Testing
import VerifyModel

@testable import Pipeline

/// A temporary folder with files, folders and symlinks in it, removed at the end of the test.
struct Scratch: ~Copyable {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(UUID())")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }  // a leftover temporary folder is harmless

    @discardableResult
    func write(_ path: String, _ bytes: [UInt8]) throws -> URL {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        return url
    }

    func write(_ path: String, _ text: String) throws { try write(path, Array(text.utf8)) }

    func link(_ path: String, to target: String) throws {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target)
    }

    func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}

@Suite("Untrusted inputs: paths, symlinks, sizes")
struct InputTrustTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Samples/batch").standardized
    static let qr = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=t-1&code=C1"
    static var selfie: [UInt8] { get throws { try [UInt8](Data(contentsOf: samples.appendingPathComponent("01-complete/selfie.jpg"))) } }

    static func decode(_ path: String, allowed: [String]) -> Result<DecodedDocument, DocumentFailure> {
        var job = DocumentJob(sequence: 1, source: "stdin:1", type: .selfie, identity: .known("t-1"))
        job.images[.selfie] = .named(path, key: "selfiePath")
        let stage = DecodeStage(
            scanner: BarcodeScanner.Configuration(symbologies: [.qrCode], decoder: .init()),
            allowedPaths: FileConfinement(directories: allowed), workers: 1)
        do {
            return .success(try stage(job))
        } catch let error as DocumentFailure {
            return .failure(error)
        } catch {
            return .failure(DocumentFailure(any: error))
        }
    }

    @Test("a stream path outside, missing, a directory, not an image, or a symlink out: one and the same answer")
    func streamPaths() throws {
        let scratch = try Scratch()
        try scratch.write("allowed/selfie.jpg", try Self.selfie)
        try scratch.write("allowed/notes.jpg", "not an image")
        try scratch.write("elsewhere/private.jpg", try Self.selfie)
        try scratch.link("allowed/escape.jpg", to: scratch.path("elsewhere/private.jpg"))
        try FileManager.default.createDirectory(atPath: scratch.path("allowed/folder.jpg"), withIntermediateDirectories: true)
        let allowed = [scratch.path("allowed")]
        let refused = [
            "/etc/shadow", "/etc/passwd", scratch.path("elsewhere/private.jpg"), scratch.path("allowed/missing.jpg"),
            scratch.path("allowed/folder.jpg"), scratch.path("allowed/notes.jpg"), scratch.path("allowed/escape.jpg"),
            scratch.path("allowed/../elsewhere/private.jpg"), scratch.path("allowed") + "/", "/dev/zero"
        ]
        for path in refused {
            guard case .failure(let failure) = Self.decode(path, allowed: allowed) else {
                Issue.record("\(path) was read")
                continue
            }
            #expect(failure.code == .document(.documentCaptureError), "\(path)")
            #expect(failure.message == "'selfiePath' does not name a readable image inside the allowed directories", "\(path)")
        }
        // Inside, through a relative path and through a symlink that stays inside: read.
        try scratch.link("allowed/inner.jpg", to: "selfie.jpg")
        for path in [scratch.path("allowed/selfie.jpg"), scratch.path("allowed/inner.jpg"), scratch.path("allowed/./selfie.jpg")] {
            guard case .success(let document) = Self.decode(path, allowed: allowed) else {
                Issue.record("\(path) was refused")
                continue
            }
            #expect(document.images[.selfie]?.bytes == (try Self.selfie))
        }
    }

    @Test("without an allowed directory a stream path says how to allow one, whatever the file")
    func noAllowedDirectory() throws {
        for path in ["/etc/shadow", Self.samples.appendingPathComponent("01-complete/selfie.jpg").path, "/nonexistent"] {
            guard case .failure(let failure) = Self.decode(path, allowed: []) else {
                Issue.record("\(path) was read")
                continue
            }
            #expect(
                failure.message
                    == "'selfiePath' names a file, and no directory is allowed: give --allow-path DIR or ingest.allowedPaths, or send the image inline"
            )
        }
    }

    static func summary(_ results: [Result<DocumentJob, IngestFailure>]) -> [String] {
        results.map { result in
            switch result {
            case .success(let job): "\(job.inputId ?? "") ok"
            case .failure(let failure): "\(failure.input.inputId ?? "") \(failure.failure.code.rawValue): \(failure.failure.message)"
            }
        }
    }

    @Test("a batch folder's symlinks that lead out fail their own documents; the rest goes on")
    func folderSymlinks() throws {
        let scratch = try Scratch()
        try scratch.write("outside/secret.jpg", "private")
        try scratch.write("outside/txn/qr.txt", Self.qr)
        try scratch.write("outside/mrz.txt", "P<UTO")
        try scratch.write("batch/a/qr.txt", Self.qr)
        try scratch.link("batch/a/front.jpg", to: scratch.path("outside/secret.jpg"))
        try scratch.write("batch/a/selfie.jpg", "inside")
        try scratch.write("batch/b/qr.txt", Self.qr)
        try scratch.link("batch/b/mrz.txt", to: scratch.path("outside/mrz.txt"))
        try scratch.write("batch/b/fields.json", #"{"email": "b@example.com"}"#)
        try scratch.link("batch/c", to: scratch.path("outside/txn"))
        try scratch.write("batch/d/qr.txt", Self.qr)
        try scratch.write("batch/d/selfie.jpg", "inside")
        try scratch.link("batch/d/front.jpg", to: "selfie.jpg")  // a symlink that stays inside is fine
        try scratch.link("batch/loose-front.jpg", to: scratch.path("outside/secret.jpg"))

        let results = try FolderIngest(root: URL(fileURLWithPath: scratch.path("batch"))).jobs()
        #expect(
            Self.summary(results) == [
                "a/GOVERNMENT_ID documentCaptureError: a/front.jpg resolves outside the batch folder",
                "a/SELFIE ok",
                "b/GOVERNMENT_ID documentCaptureError: b/mrz.txt resolves outside the batch folder",
                "b/EMAIL ok",
                "c documentCaptureError: c resolves outside the batch folder",
                "d/GOVERNMENT_ID ok",
                "d/SELFIE ok",
                "loose/GOVERNMENT_ID documentCaptureError: loose-front.jpg resolves outside the batch folder"
            ])
        // What the jobs read is the resolved file, inside the folder.
        let front = results.compactMap { try? $0.get() }.first { $0.inputId == "d/GOVERNMENT_ID" }?.images[.front]
        guard case .file(let path) = front else {
            Issue.record("d's front: \(String(describing: front))")
            return
        }
        #expect(path == FileConfinement.resolve(scratch.path("batch/d/selfie.jpg")))
    }

    @Test("a folder swapped for a symlink out after the batch was listed: the decode refuses the file it would now open")
    func folderSwappedAfterListing() throws {
        let scratch = try Scratch()
        try scratch.write("outside/a/selfie.jpg", try Self.selfie)
        try scratch.write("batch/a/qr.txt", Self.qr)
        try scratch.write("batch/a/selfie.jpg", try Self.selfie)
        let results = try FolderIngest(root: URL(fileURLWithPath: scratch.path("batch"))).jobs()
        guard let job = results.compactMap({ try? $0.get() }).first(where: { $0.inputId == "a/SELFIE" }),
            case .file(let listed) = job.images[.selfie]
        else {
            Issue.record("no selfie job: \(results)")
            return
        }
        let stage = DecodeStage(
            scanner: BarcodeScanner.Configuration(symbologies: [.qrCode], decoder: .init()),
            allowedPaths: FileConfinement(directories: []), workers: 1)
        #expect((try? stage(job)) != nil, "before the swap the listed file decodes")

        // The attacker moves the folder away and leaves a symlink to a folder outside in its place.
        try FileManager.default.moveItem(atPath: scratch.path("batch/a"), toPath: scratch.path("batch/a-moved"))
        try scratch.link("batch/a", to: scratch.path("outside/a"))
        #expect(FileManager.default.contents(atPath: listed) != nil, "the listed path now reaches the file outside")
        let error = #expect(throws: DocumentFailure.self) { try stage(job) }
        #expect(error?.code == .document(.documentCaptureError))
        #expect(error?.message == "selfie image selfie.jpg: the path changed while the file was opened")
        let direct = #expect(throws: BoundedFile.ReadError.self) { try BoundedFile.readText(listed, limit: 1 << 20, resolved: true) }
        #expect(direct?.reason == .pathChanged)
    }

    @Test("text files over 1 MiB are refused without being read: a sparse 1 GiB mrz.txt costs nothing")
    func largeTextFiles() throws {
        let scratch = try Scratch()
        try scratch.write("batch/a/qr.txt", Self.qr)
        try scratch.write("batch/a/selfie.jpg", "inside")
        let mrz = FileHandle(forWritingAtPath: try scratch.write("batch/a/mrz.txt", []).path)
        try mrz?.truncate(atOffset: 1 << 30)
        try mrz?.close()
        try scratch.write("batch/b/qr.txt", Self.qr + String(repeating: " ", count: 1 << 20))
        try scratch.write("batch/b/selfie.jpg", "inside")
        try scratch.write("batch/c/qr.txt", Self.qr)
        try scratch.write("batch/c/fields.json", #"{"email": ""# + String(repeating: "a", count: 1 << 20) + #""}"#)
        let results = try FolderIngest(root: URL(fileURLWithPath: scratch.path("batch"))).jobs()
        #expect(
            Self.summary(results) == [
                "a/GOVERNMENT_ID documentCaptureError: a/mrz.txt: the file is larger than the limit of 1048576 bytes",
                "a/SELFIE ok",
                "b/SELFIE documentCaptureError: b/qr.txt: the file is larger than the limit of 1048576 bytes",
                "c/fields.json documentCaptureError: c/fields.json: the file is larger than the limit of 1048576 bytes"
            ])
    }

    @Test("a FIFO where a text file should be is refused at once, not waited on")
    func fifo() throws {
        let scratch = try Scratch()
        try scratch.write("batch/a/selfie.jpg", "inside")
        try FileManager.default.createDirectory(atPath: scratch.path("batch/a"), withIntermediateDirectories: true)
        #expect(mkfifo(scratch.path("batch/a/qr.txt"), 0o600) == 0)
        let results = try FolderIngest(root: URL(fileURLWithPath: scratch.path("batch"))).jobs()
        #expect(Self.summary(results) == ["a/SELFIE initiateDocumentTransactionError: a/qr.txt: not a regular file"])
    }

    @Test("a stream line's text values over 1 MiB are refused", arguments: ["mrz", "qr", "email", "transactionId"])
    func largeStreamValues(_ key: String) {
        let big = String(repeating: "A", count: (1 << 20) + 1)
        var object: [String: String] = ["id": "x", "type": "EMAIL", "transactionId": "t-1", "email": "a@example.com"]
        object[key] = big
        let line = String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        guard case .failure(let failure) = StreamLine.parse(line, number: 1) else {
            Issue.record("accepted")
            return
        }
        #expect(failure.failure.code == .document(.documentCaptureError))
        #expect(failure.failure.message == "'\(key)' is \((1 << 20) + 1) bytes, more than the limit of 1048576")
    }

    @Test("an inline image over the image file limit is refused before it is decoded")
    func largeInlineImage() {
        let line = #"{"type":"SELFIE","transactionId":"t-1","selfie":"\#(String(repeating: "QUFB", count: 400))"}"#
        guard case .failure(let failure) = StreamLine.parse(line, number: 1, maxImageBytes: 1_000) else {
            Issue.record("accepted")
            return
        }
        #expect(failure.failure.code == .document(.documentCaptureError))
        #expect(failure.failure.message == "'selfie' holds more than the image limit of 1000 bytes")
        guard case .success = StreamLine.parse(line, number: 1, maxImageBytes: 1_200) else {
            Issue.record("refused at its size")
            return
        }
    }
}
