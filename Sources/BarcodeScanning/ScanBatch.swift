import ImageDecoding
import Synchronization
import VerifyModel

extension BarcodeFormat {
    /// Symbology names as users write them (`QR_CODE,pdf417`), each known; at least one.
    package static func parseList(_ names: [String]) throws(ParseError) -> Set<BarcodeFormat> {
        var formats: Set<BarcodeFormat> = []
        for name in names.map({ $0.trimmingCharacters(in: .whitespaces).uppercased() }) where !name.isEmpty {
            guard let format = BarcodeFormat(rawValue: name) else {
                throw ParseError(description: "unknown symbology '\(name)' (known: \(allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            formats.insert(format)
        }
        guard !formats.isEmpty else { throw ParseError(description: "names no symbology") }
        return formats
    }

    package struct ParseError: Error, CustomStringConvertible {
        package var description: String
    }
}

/// The result for one image: its barcodes, or why it could not be read.
package struct ScanResult: Sendable {
    package var source: String
    package var outcome: Result<[Barcode], ScanFailure>
    /// Codes found but not read with confidence (an MRZ band whose reading was refused): for review, not an error.
    package var unreadable: [UnreadableCode] = []
}

/// A code on the image that could not be read with confidence: its format, the field at fault and why (never a
/// value read): for an MRZ, the code of the rule that refused it (`reason`, CLI.md) and the pass of the reading ladder
/// whose refusal it is.
package struct UnreadableCode: Sendable, Codable, Hashable {
    package var format: BarcodeFormat
    package var field: String
    package var message: String
    package var reason: String?
    package var pass: String?

    package init(format: BarcodeFormat, field: String, message: String, reason: String? = nil, pass: String? = nil) {
        self.format = format
        self.field = field
        self.message = message
        self.reason = reason
        self.pass = pass
    }
}

/// Why one image could not be scanned: always a `documentCaptureError`.
package struct ScanFailure: CodedError, Equatable {
    package var message: String
    package var failureCode: FailureCode { .document(.documentCaptureError) }
}

/// Scans many image files on `jobs` workers, each with its own scanner (ZBar's are not thread-safe), and hands
/// the results to `emit` in input order, each as soon as it is next in line.
package struct ScanBatch: Sendable {
    /// Reads an image's bytes for what the barcode scanner does not (the `scan` command's MRZ reading): its codes
    /// follow the barcodes found, and what it found but could not read goes to `ScanResult.unreadable`.
    package typealias Reader = @Sendable ([UInt8]) throws(ImageDecodingError) -> (codes: [Barcode], unreadable: [UnreadableCode])

    package var configuration: BarcodeScanner.Configuration
    package var jobs: Int
    package var alsoRead: Reader?

    package init(configuration: BarcodeScanner.Configuration, jobs: Int, alsoRead: Reader? = nil) {
        self.configuration = configuration
        self.jobs = max(jobs, 1)
        self.alsoRead = alsoRead
    }

    /// Returns how many images failed: an entry whose name is not UTF-8 is one.
    package func run(_ sources: [ImageFile.Listed], emit: (ScanResult) -> Void) async -> Int {
        let (results, sink) = AsyncStream.makeStream(of: (index: Int, result: ScanResult).self)
        async let scanned: Void = scanAll(sources, into: sink)
        var ready: [Int: ScanResult] = [:]
        var nextToEmit = 0, failures = 0
        for await (index, result) in results {
            ready[index] = result
            while let result = ready.removeValue(forKey: nextToEmit) {
                if case .failure = result.outcome { failures += 1 }
                emit(result)
                nextToEmit += 1
            }
        }
        await scanned
        return failures
    }

    /// Each worker owns a scanner for its whole life and takes the next image from a shared counter.
    private func scanAll(_ sources: [ImageFile.Listed], into sink: AsyncStream<(index: Int, result: ScanResult)>.Continuation) async {
        let counter = IndexCounter(count: sources.count), configuration = configuration, alsoRead = alsoRead
        await withTaskGroup(of: Void.self) { workers in
            for _ in 0..<min(jobs, max(sources.count, 1)) {
                workers.addTask {
                    let scanner = BarcodeScanner(configuration: configuration)
                    while !Task.isCancelled, let index = counter.take() {
                        sink.yield((index, Self.scan(sources[index], with: scanner, alsoRead: alsoRead)))
                    }
                }
            }
        }
        sink.finish()
    }

    static func scan(_ source: ImageFile.Listed, with scanner: BarcodeScanner, alsoRead: Reader?) -> ScanResult {
        let path: String
        switch source {
        case .file(let file):
            path = file
        case .undecodable(let shown, let isFolder):
            let what = isFolder ? "the folder's name is not UTF-8, so its images cannot be read" : "the name is not UTF-8, so the file cannot be read"
            return ScanResult(source: shown, outcome: .failure(ScanFailure(message: "\(what): rename it")))
        }
        let bytes: [UInt8]
        do {
            // The operator named these paths: symlinks among them are followed, to what they name.
            bytes = try ImageFile.read(FileConfinement.resolve(path) ?? path)
        } catch {
            return ScanResult(source: path, outcome: .failure(ScanFailure(message: error.message)))
        }
        do {
            var barcodes = try scanner.scan(bytes)
            var unreadable: [UnreadableCode] = []
            if let alsoRead {
                let other = try alsoRead(bytes)
                barcodes += other.codes
                unreadable = other.unreadable
            }
            return ScanResult(source: path, outcome: .success(barcodes), unreadable: unreadable)
        } catch {
            return ScanResult(source: path, outcome: .failure(ScanFailure(message: error.message)))
        }
    }
}

/// Hands out 0..<count once each, to any number of workers.
final class IndexCounter: Sendable {
    private let state: Mutex<Int>
    let count: Int

    init(count: Int) {
        self.count = count
        state = Mutex(0)
    }

    func take() -> Int? {
        state.withLock { next in
            guard next < count else { return nil }
            defer { next += 1 }
            return next
        }
    }
}
