import ArgumentParser
import BarcodeScanning
import Foundation
import ImageDecoding
import VerifyModel
import Synchronization

extension VerifyPipeline {
    struct Scan: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode the barcodes in images or folders, one result per image, in input order.",
            discussion: """
            Folders are walked recursively and their .jpg, .jpeg and .png files scanned; a file named on the \
            command line is scanned whatever its name. The format is always sniffed from the bytes. \
            Exits 1 when any image could not be decoded.
            """
        )

        @Argument(help: "Image files or folders.")
        var paths: [String]

        @Flag(help: "One JSON object per image (NDJSON) instead of text.")
        var json = false

        @Option(help: "Images scanned in parallel (default: the number of cores).")
        var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

        @Option(help: "Symbologies to look for, comma-separated (QR_CODE, PDF417, CODE_128, CODE_39, EAN_13, DATA_MATRIX).")
        var symbologies: String = "QR_CODE,PDF417"

        @Option(help: "Refuse images declaring more pixels than this (decompression bombs).")
        var maxPixels: Int = 100_000_000

        func validate() throws {
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
            guard maxPixels >= 1 else { throw ValidationError("--max-pixels must be at least 1") }
            _ = try parsedSymbologies()
        }

        func run() throws {
            let sources = ScanSources.expand(paths)
            var configuration = BarcodeScanner.Configuration(symbologies: try parsedSymbologies())
            configuration.decoder.maxPixels = maxPixels
            let report = ScanReport(json: json)
            let failures = ParallelScan(sources: sources, configuration: configuration, jobs: jobs).run { result in
                report.write(result)
            }
            if failures > 0 { throw ExitCode(1) }
        }

        private func parsedSymbologies() throws -> Set<BarcodeFormat> {
            let names = symbologies.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
            var formats: Set<BarcodeFormat> = []
            for name in names {
                guard let format = BarcodeFormat(rawValue: name) else {
                    throw ValidationError("unknown symbology '\(name)' (known: \(BarcodeFormat.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                formats.insert(format)
            }
            guard !formats.isEmpty else { throw ValidationError("--symbologies names none") }
            return formats
        }
    }
}

/// The result for one image (SPEC §6): its barcodes, or why it could not be read.
struct ScanResult: Encodable {
    struct Failure: Encodable {
        var code: String
        var message: String
    }

    var source: String
    var barcodes: [Barcode]?
    var error: Failure?
}

/// Expands folders into their image files, sorted, keeping the order the user gave.
enum ScanSources {
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png"]

    static func expand(_ paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return [path]
            }
            let root = URL(fileURLWithPath: path)
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey],
                                                              options: [.skipsHiddenFiles]) else { return [] }
            var files: [String] = []
            for case let url as URL in walker where imageExtensions.contains(url.pathExtension.lowercased()) {
                let isFile = (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) ?? false
                if isFile { files.append(path.hasSuffix("/") ? path + relativePath(url, to: root) : path + "/" + relativePath(url, to: root)) }
            }
            return files.sorted()
        }
    }

    private static func relativePath(_ url: URL, to root: URL) -> String {
        let full = url.standardizedFileURL.path, base = root.standardizedFileURL.path
        return full.hasPrefix(base + "/") ? String(full.dropFirst(base.count + 1)) : url.lastPathComponent
    }
}

/// Scans `sources` on `jobs` threads, each with its own scanner (ZBar scanners are not thread-safe), and hands
/// results to `emit` in input order as soon as each is next in line.
struct ParallelScan {
    var sources: [String]
    var configuration: BarcodeScanner.Configuration
    var jobs: Int

    private struct Progress {
        var nextToClaim = 0
        var nextToEmit = 0
        var ready: [Int: ScanResult] = [:]
        var failures = 0
    }

    /// Returns how many images failed.
    func run(emit: @escaping @Sendable (ScanResult) -> Void) -> Int {
        let progress = Mutex(Progress())
        let sources = sources, configuration = configuration
        DispatchQueue.concurrentPerform(iterations: min(jobs, max(sources.count, 1))) { _ in
            let scanner = BarcodeScanner(configuration: configuration)
            while true {
                let index: Int? = progress.withLock { state in
                    guard state.nextToClaim < sources.count else { return nil }
                    defer { state.nextToClaim += 1 }
                    return state.nextToClaim
                }
                guard let index else { return }
                let result = Self.scan(sources[index], with: scanner)
                progress.withLock { state in
                    state.ready[index] = result
                    if result.error != nil { state.failures += 1 }
                    while let next = state.ready.removeValue(forKey: state.nextToEmit) {
                        emit(next)
                        state.nextToEmit += 1
                    }
                }
            }
        }
        return progress.withLock { $0.failures }
    }

    static func scan(_ path: String, with scanner: BarcodeScanner) -> ScanResult {
        do {
            return ScanResult(source: path, barcodes: try scanner.scan(try ImageFile.read(path)))
        } catch let error as ImageDecodingError {
            return failure(path, error.message)
        } catch {
            return failure(path, "\(error)")
        }
    }

    private static func failure(_ path: String, _ message: String) -> ScanResult {
        ScanResult(source: path, error: .init(code: DocumentSubmissionErrorCode.documentCaptureError.rawValue, message: message))
    }
}

/// Writes results as NDJSON or as text lines.
struct ScanReport: Sendable {
    var json: Bool

    func write(_ result: ScanResult) {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let line = (try? encoder.encode(result)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            print(line)
        } else if let error = result.error {
            print("\(result.source): error \(error.code): \(error.message)")
        } else if let barcodes = result.barcodes, !barcodes.isEmpty {
            for barcode in barcodes {
                print("\(result.source): \(barcode.format.rawValue) \(barcode.text.debugDescription)")
            }
        } else {
            print("\(result.source): no barcode found")
        }
    }
}
