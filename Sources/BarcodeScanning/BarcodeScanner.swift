import ImageDecoding

/// Decodes an image and reads its barcodes with a short ladder of passes, cheapest first, stopping as soon as
/// what the caller expects has been found. Not thread-safe (it owns a ZBar scanner): one per worker.
package final class BarcodeScanner {
    package struct Configuration: Sendable {
        /// Only these are looked for: enabling every symbology produces false reads on lines of text.
        package var symbologies: Set<BarcodeFormat> = [.qrCode, .pdf417]
        /// Large JPEGs are first decoded at a reduced DCT scale keeping at least this many pixels.
        package var firstPassPixels: Int = 700_000
        package var decoder: ImageDecoder.Configuration = .init()

        package init(
            symbologies: Set<BarcodeFormat> = [.qrCode, .pdf417], firstPassPixels: Int = 700_000,
            decoder: ImageDecoder.Configuration = .init()
        ) {
            self.symbologies = symbologies
            self.firstPassPixels = firstPassPixels
            self.decoder = decoder
        }
    }

    /// When the ladder may stop.
    package enum Expectation: Sendable {
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

    package let configuration: Configuration
    private let decoder: ImageDecoder
    private let zbar: ZBarReader
    private let zbarFormats: Set<BarcodeFormat>

    package init(configuration: Configuration = .init()) {
        self.configuration = configuration
        decoder = ImageDecoder(configuration: configuration.decoder)
        zbarFormats = configuration.symbologies.filter(\.isReadableByZBar)
        zbar = ZBarReader(formats: zbarFormats)
    }

    /// Decodes `bytes` and returns the barcodes found, in the order found, without duplicates. `firstPass` is
    /// the reduced decode (`firstPassPixels`) when the caller already made it.
    ///
    /// The order of the passes was chosen by measurement (`scripts/bench-scan`): on 0.1 MP images zxing-cpp 3.1 at its
    /// own defaults costs 1.2 ms and read 150 of 150 small codes, ZBar's quickest pass 2.3 ms and 76 of them.
    package func scan(
        _ bytes: [UInt8], firstPass: GrayImage? = nil,
        expecting expectation: Expectation = .anyCode
    ) throws(ImageDecodingError) -> [Barcode] {
        // An MRZ is text, not a symbol: MRZReading reads it, called by whoever asked for it.
        guard !configuration.symbologies.subtracting([.mrz]).isEmpty else { return [] }
        return try scanBarcodes(bytes, firstPass: firstPass, expecting: expectation)
    }

    private func scanBarcodes(
        _ bytes: [UInt8], firstPass: GrayImage?,
        expecting expectation: Expectation
    ) throws(ImageDecodingError) -> [Barcode] {
        var found: [Barcode] = []
        func take(_ barcodes: [Barcode]) -> Bool {
            for barcode in barcodes where !found.contains(barcode) { found.append(barcode) }
            return expectation.isSatisfied(by: found)
        }
        let first: GrayImage
        if let firstPass {
            first = firstPass
        } else {
            first = try decoder.decode(bytes, targetPixels: configuration.firstPassPixels)
        }

        // Rung 1: zxing-cpp as thoroughly as its defaults (rotations, the negative, smaller copies), on the cheap
        // decode; every symbol it reports at once, nested ones included. QR codes are read again by ZBar.
        let symbols = readZXing(first)
        for symbol in symbols {
            guard let barcode = symbol.barcode else { continue }
            _ = take(barcode.format == .qrCode && zbarFormats.contains(.qrCode) ? throughZBar(barcode, at: symbol.bounds, in: first) : [barcode])
        }
        if expectation.isSatisfied(by: found) { return found }
        // A picture seen at full size in which zxing-cpp located no symbol at all: the later passes read nothing
        // more in the benchmark corpus, and skipping them is what makes images without a code cheap.
        guard first.isScaledDown || symbols.contains(where: { $0.barcode == nil }) else { return found }
        // Rung 2: full resolution, ZBar on every line, then on the negative.
        let full = first.isScaledDown ? try decoder.decode(bytes) : first
        if !zbarFormats.isEmpty {
            if take(zbar.read(full)) { return found }
            if take(zbar.read(full.inverted())) { return found }
        }
        // Rung 3: zxing-cpp at full resolution, for fine modules the reduced decode lost.
        if first.isScaledDown { _ = take(readZXing(full).compactMap(\.barcode)) }
        return found
    }

    /// The product reads verification QR codes with ZBar: each QR that zxing-cpp decoded is read again by ZBar on a
    /// crop around it. What ZBar reads there in ASCII (verification URLs) is reported first, then zxing-cpp's reading,
    /// which is a duplicate when both agree and stands alone where ZBar cannot read the crop or for text in other
    /// charsets (whose charset ZBar does not report).
    private func throughZBar(
        _ barcode: Barcode, at bounds: (minX: Int, minY: Int, maxX: Int, maxY: Int),
        in image: GrayImage
    ) -> [Barcode] {
        let margin = max(8, (bounds.maxX - bounds.minX) / 4)
        let crop = image.cropped(
            minX: bounds.minX - margin, minY: bounds.minY - margin,
            maxX: bounds.maxX + margin, maxY: bounds.maxY + margin)
        let zbarReads = zbar.read(crop).filter { $0.format == .qrCode && $0.text.utf8.allSatisfy { $0 < 0x80 } }
        return zbarReads + [barcode]
    }

    /// zxing-cpp only fails on internal errors; a failed pass is no reason to lose the image's other reads.
    private func readZXing(_ image: GrayImage) -> [ZXingReader.Symbol] {
        (try? ZXingReader.read(image, formats: configuration.symbologies.subtracting([.mrz]), effort: .thorough)) ?? []
    }
}
