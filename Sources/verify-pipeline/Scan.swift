import ArgumentParser
import BarcodeScanning
import Foundation
import ImageDecoding
import MRZReading
import TransactionViews
import VerifyModel

extension VerifyPipeline {
    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode the barcodes in images or folders, one result per image, in input order.",
            discussion: """
                Reads JPEG, PNG and WebP images. Folders are walked recursively and their .jpg, .jpeg, .png and .webp \
                files scanned; a file named on the command line is scanned whatever its name. The format is always \
                sniffed from the bytes. --symbologies MRZ reads passport and ID card MRZs (TD1, TD2, TD3, MRV-A, \
                MRV-B) by OCR. Exits 1 when any image could not be decoded.
                """
        )

        @Argument(help: "Image files or folders.", completion: .file(extensions: ["jpg", "jpeg", "png", "webp"]))
        var paths: [String]

        @Flag(help: "One JSON object per image (NDJSON) instead of text.")
        var json = false

        @Flag(help: "Each symbol's text alone, exactly as decoded (control characters included), one a line: as zbarimg --raw.")
        var raw = false

        @Option(help: "Images scanned in parallel (default: the number of cores).")
        var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

        @Option(
            help: "Symbologies to look for, comma-separated (QR_CODE, PDF417, CODE_128, CODE_39, EAN_13, DATA_MATRIX, MRZ; default QR_CODE,PDF417).",
            transform: Symbologies.init(parsing:))
        var symbologies: Symbologies = Symbologies(formats: [.qrCode, .pdf417])

        @Option(help: "Refuse images declaring more pixels than this (decompression bombs).")
        var maxPixels: Int = 100_000_000

        @OptionGroup var log: LogOptions

        func validate() throws {
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
            guard !(json && raw) else { throw ValidationError("--json and --raw are two formats: give one") }
            guard maxPixels >= 1 else { throw ValidationError("--max-pixels must be at least 1") }
        }

        func run() async throws {
            var configuration = BarcodeScanner.Configuration(symbologies: symbologies.formats)
            configuration.decoder.maxPixels = maxPixels
            let report = ScanReport(format: json ? .json : raw ? .raw : .text)
            let batch = ScanBatch(
                configuration: configuration, jobs: jobs, alsoRead: symbologies.formats.contains(.mrz) ? Self.readMRZ(configuration.decoder) : nil)
            let failures = await batch.run(ImageFile.expand(paths)) { result in
                report.write(result)
            }
            if failures > 0 { throw ExitCode(1) }
        }

        /// `--symbologies MRZ`: the MRZ read from the image, with its report, or the field it could not read.
        static func readMRZ(_ limits: ImageDecoder.Configuration) -> ScanBatch.Reader {
            { (bytes: [UInt8]) throws(ImageDecodingError) -> (codes: [Barcode], unreadable: [UnreadableCode]) in
                switch try MRZImageReader().read(bytes, decoder: ImageDecoder(configuration: limits)) {
                case .read(let reading):
                    return ([code(reading)], [])
                case .misprinted(let reading, let refusal):
                    return ([code(reading, misprint: unreadable(refusal))], [])
                case .unreadable(let refusal):
                    return ([], [unreadable(refusal)])
                case .notFound:
                    return ([], [])
                }
            }
        }

        private static func code(_ reading: MRZReading, misprint: UnreadableCode? = nil) -> Barcode {
            var code = Barcode(format: .mrz, text: reading.mrz.lines.joined(separator: "\n"))
            code.mrz = MRZReport(
                format: reading.mrz.format, confidence: reading.confidence, repairs: reading.repairs,
                unknownStates: reading.unknownStates, pass: reading.pass.rawValue, misprint: misprint)
            return code
        }

        private static func unreadable(_ refusal: MRZRefusal) -> UnreadableCode {
            UnreadableCode(
                format: .mrz, field: refusal.field.rawValue, message: refusal.message, reason: refusal.reason.rawValue, pass: refusal.pass.rawValue)
        }
    }
}

/// `--symbologies QR_CODE,PDF417`, parsed as the pipeline file's `scan.symbologies` is.
struct Symbologies: CustomStringConvertible {
    var formats: Set<BarcodeFormat>

    init(formats: Set<BarcodeFormat>) {
        self.formats = formats
    }

    init(parsing argument: String) throws {
        do {
            formats = try BarcodeFormat.parseList(argument.split(separator: ",").map(String.init))
        } catch {
            throw ValidationError(error.description)
        }
    }

    var description: String { formats.map(\.rawValue).sorted().joined(separator: ",") }
}

/// Writes results (CONTRACT §6) as NDJSON, as text lines, or as the symbols' raw text. In text and raw, an image
/// that could not be scanned is reported on stderr, its results (what was found, or not) on stdout.
struct ScanReport: Sendable {
    enum Format: Sendable { case text, json, raw }

    var format: Format

    /// `{"source": PATH, "barcodes": [...]}` (with `"unreadable": [{"format", "field", "message"}]` when an MRZ was
    /// found but not read with confidence) or `{"source": PATH, "error": {"code", "message"}}`.
    struct Line: Encodable {
        struct Failure: Encodable {
            var code: String
            var message: String
        }

        var source: String
        var barcodes: [Barcode]?
        var unreadable: [UnreadableCode]?
        var error: Failure?
    }

    /// A text line starts with the image's path, its control characters escaped: a file name holding a newline
    /// cannot make a line of its own. A symbol's text is quoted, its controls escaped as a shell's `$'...'` writes
    /// them (`\n`, `\x1e`).
    func write(_ result: ScanResult) {
        let source = result.source.escapingControls
        switch (format, result.outcome) {
        case (.json, .success(let barcodes)):
            print(Self.encode(Line(source: result.source, barcodes: barcodes, unreadable: result.unreadable.isEmpty ? nil : result.unreadable)))
        case (.json, .failure(let failure)):
            print(Self.encode(Line(source: result.source, error: .init(code: failure.failureCode.rawValue, message: failure.message))))
        case (_, .failure(let failure)):
            CommandOutput.standardError("\(source): error \(failure.failureCode.rawValue): \(failure.message.escapingControls)\n")
        case (.raw, .success(let barcodes)):
            for barcode in barcodes { print(barcode.text) }
        case (.text, .success(let barcodes)) where barcodes.isEmpty && result.unreadable.isEmpty:
            print("\(source): no barcode found")
        case (.text, .success(let barcodes)):
            for barcode in barcodes {
                let misprint = barcode.mrz?.misprint.map { " misprinted (\($0.field)): \($0.message)" } ?? ""
                print("\(source): \(barcode.format.rawValue) \"\(barcode.text.escapingForShell)\"\(misprint)")
            }
            for code in result.unreadable {
                print("\(source): \(code.format.rawValue) unreadable (\(code.field)): \(code.message)")
            }
        }
    }

    private static func encode(_ line: Line) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A line of strings always encodes.
        return (try? encoder.encode(line)).map { String(decoding: $0, as: UTF8.self).escapingTerminalControlsInJSON } ?? "{}"
    }
}
