import ImageDecoding

/// Decodes an image and reads its barcodes with a short ladder of passes, cheapest first, stopping as soon as
/// what the caller expects has been found. Not thread-safe (it owns a ZBar scanner): one per worker.
public final class BarcodeScanner {
    public struct Configuration: Sendable {
        /// Only these are looked for: enabling every symbology produces false reads on lines of text.
        public var symbologies: Set<BarcodeFormat> = [.qrCode, .pdf417]
        /// Large JPEGs are first decoded at a reduced DCT scale keeping at least this many pixels.
        public var firstPassPixels: Int = 700_000
        public var decoder: ImageDecoder.Configuration = .init()

        public init(symbologies: Set<BarcodeFormat> = [.qrCode, .pdf417], firstPassPixels: Int = 700_000,
                    decoder: ImageDecoder.Configuration = .init()) {
            self.symbologies = symbologies
            self.firstPassPixels = firstPassPixels
            self.decoder = decoder
        }
    }

    /// When the ladder may stop.
    public enum Expectation: Sendable {
        /// At the first pass that finds anything.
        case anyCode
        /// When at least one code of each of these formats has been found.
        case formats(Set<BarcodeFormat>)

        func isSatisfied(by found: [Barcode]) -> Bool {
            switch self {
            case .anyCode: !found.isEmpty
            case .formats(let wanted): wanted.isSubset(of: Set(found.map(\.format)))
            }
        }
    }

    public let configuration: Configuration
    private let decoder: ImageDecoder
    private let zbar: ZBarReader
    private let zbarFormats: Set<BarcodeFormat>

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        decoder = ImageDecoder(configuration: configuration.decoder)
        zbarFormats = configuration.symbologies.filter(\.isReadableByZBar)
        zbar = ZBarReader(formats: zbarFormats)
    }

    /// Decodes `bytes` and returns the barcodes found, in the order found, without duplicates. `firstPass` is
    /// the reduced decode (`firstPassPixels`) when the caller already made it.
    public func scan(_ bytes: [UInt8], firstPass: GrayImage? = nil,
                     expecting expectation: Expectation = .anyCode) throws(ImageDecodingError) -> [Barcode] {
        var found: [Barcode] = []
        func take(_ barcodes: [Barcode]) -> Bool {
            for barcode in barcodes where !found.contains(barcode) { found.append(barcode) }
            return expectation.isSatisfied(by: found)
        }
        let symbologies = configuration.symbologies
        let zxingOnly = symbologies.subtracting(zbarFormats)
        // The formats still missing that only zxing-cpp reads.
        func zxingWanted() -> Set<BarcodeFormat> {
            switch expectation {
            case .anyCode: zxingOnly
            case .formats(let wanted): zxingOnly.intersection(wanted).subtracting(found.map(\.format))
            }
        }

        // Rung 1: the cheap decode, ZBar, and zxing-cpp for the formats only it reads.
        let first: GrayImage
        if let firstPass {
            first = firstPass
        } else {
            first = try decoder.decode(bytes, targetPixels: configuration.firstPassPixels)
        }
        _ = take(zbar.read(first, density: 2))
        let missing = zxingWanted()
        if !missing.isEmpty { _ = take(readZXing(first, formats: missing, tryHarder: false)) }
        if expectation.isSatisfied(by: found) { return found }
        // Rung 2: full resolution (when the first decode was scaled down), every scan line.
        let full = first.isScaledDown ? try decoder.decode(bytes) : first
        if take(zbar.read(full)) { return found }
        // Rung 3: light codes on dark backgrounds.
        let negative = full.inverted()
        if take(zbar.read(negative)) { return found }
        // Rung 4: zxing-cpp trying harder (rotations, denser sampling), on the picture and on its negative.
        if take(readZXing(full, formats: symbologies, tryHarder: true)) { return found }
        _ = take(readZXing(negative, formats: symbologies, tryHarder: true))
        return found
    }

    /// zxing-cpp only fails on internal errors; a failed fallback pass is no reason to lose the image's other reads.
    private func readZXing(_ image: GrayImage, formats: Set<BarcodeFormat>, tryHarder: Bool) -> [Barcode] {
        // zxing-cpp failing on one image means it found nothing there; ZBar and the next pass still try.
        (try? ZXingReader.read(image, formats: formats,
                               effort: .init(tryHarder: tryHarder, tryRotate: tryHarder, tryInvert: false))) ?? []
    }
}
