import CImageCodecs
import VerifyModel

/// Image formats recognised from their leading bytes.
public enum ImageFormat: String, Sendable {
    case jpeg
    case png
    case webp

    /// Sniffs the format from the bytes; the file name is never trusted.
    public init?(sniffing bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(12))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) {
            self = .webp
        } else {
            return nil
        }
    }
}

/// Why an image could not be decoded. Every case is a `documentCaptureError` (CONTRACT §3).
public struct ImageDecodingError: CodedError, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case empty, unknownFormat, corrupt, tooLarge, outOfMemory, tooCostly
    }

    public var reason: Reason
    public var message: String

    public var failureCode: FailureCode { .document(.documentCaptureError) }
    public var description: String { message }
}

/// Decodes JPEG, PNG and WebP bytes straight to 8-bit grayscale through libjpeg, libpng and libwebp.
public struct ImageDecoder: Sendable {
    /// Each limit of 0 or less is no limit.
    public struct Configuration: Sendable {
        /// Images declaring more pixels than this are refused before any allocation (decompression bombs).
        public var maxPixels: Int = 100_000_000
        /// Progressive JPEGs with more scans are refused: each scan is another pass over the whole image, and
        /// cameras write about 10.
        public var maxScans: Int = 100
        /// CPU time one decode may use; a 100-megapixel PNG takes about a second. Counted in whole milliseconds,
        /// rounded up, up to 49 days (what the decoders count): a longer budget is that.
        public var cpuBudget: Duration = .seconds(5)

        public init(maxPixels: Int = 100_000_000, maxScans: Int = 100, cpuBudget: Duration = .seconds(5)) {
            self.maxPixels = maxPixels
            self.maxScans = maxScans
            self.cpuBudget = cpuBudget
        }

        var limits: vp_decode_limits {
            // In floating point: a budget of centuries overflows whole milliseconds, and one under a millisecond is
            // no zero (no limit).
            let components = cpuBudget.components
            let milliseconds = (Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15).rounded(.up)
            return vp_decode_limits(
                max_pixels: UInt64(max(maxPixels, 0)), max_scans: UInt32(clamping: max(maxScans, 0)),
                cpu_budget_ms: UInt32(min(max(milliseconds, 0), Double(UInt32.max))))
        }
    }

    public var configuration: Configuration

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Decodes `bytes`. With `targetPixels`, a JPEG is decoded at the smallest DCT scale (1/2, 1/4, 1/8), a WebP at the
    /// smallest size, that keeps at least that many pixels; PNGs are always decoded at full size.
    public func decode(_ bytes: [UInt8], targetPixels: Int? = nil) throws(ImageDecodingError) -> GrayImage {
        guard !bytes.isEmpty else {
            throw ImageDecodingError(reason: .empty, message: "the file is empty")
        }
        guard let format = ImageFormat(sniffing: bytes) else {
            throw ImageDecodingError(reason: .unknownFormat, message: "not a JPEG, PNG or WebP image")
        }
        var image = vp_gray_image()
        var message = [CChar](repeating: 0, count: 256)
        let limits = configuration.limits
        let status = bytes.withUnsafeBufferPointer { data in
            message.withUnsafeMutableBufferPointer { text in
                switch format {
                case .jpeg:
                    vp_jpeg_decode_gray(
                        data.baseAddress, data.count, UInt64(max(targetPixels ?? 0, 0)),
                        limits, &image, text.baseAddress, text.count)
                case .png:
                    vp_png_decode_gray(
                        data.baseAddress, data.count, limits, &image,
                        text.baseAddress, text.count)
                case .webp:
                    vp_webp_decode_gray(
                        data.baseAddress, data.count, UInt64(max(targetPixels ?? 0, 0)),
                        limits, &image, text.baseAddress, text.count)
                }
            }
        }
        guard status == VP_DECODE_OK, let base = image.pixels else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let reason: ImageDecodingError.Reason =
                switch status {
                case VP_DECODE_TOO_LARGE: .tooLarge
                case VP_DECODE_OUT_OF_MEMORY: .outOfMemory
                case VP_DECODE_TOO_COSTLY: .tooCostly
                default: .corrupt
                }
            let refused = reason == .tooLarge || reason == .tooCostly
            throw ImageDecodingError(reason: reason, message: "\(format.rawValue.uppercased()) \(refused ? "refused" : "undecodable"): \(text)")
        }
        defer { vp_gray_image_free(&image) }
        let width = Int(image.width), height = Int(image.height)
        let pixels = [UInt8](UnsafeBufferPointer(start: base, count: width * height))
        return GrayImage(
            width: width, height: height, packed: pixels,
            sourceWidth: Int(image.source_width), sourceHeight: Int(image.source_height))
    }
}
