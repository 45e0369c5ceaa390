import FuzzHarness
import ImageDecoding
import MRZReading

/// The MRZ reader on whatever picture the bytes decode to: finding the band, fitting the grid, measuring the
/// capitals and scoring the cells must never trap, whatever the pixels.
let decoder = ImageDecoder(configuration: .init(maxPixels: 1_000_000, maxScans: 100, cpuBudget: .seconds(2)))

func fuzz(_ bytes: [UInt8]) {
    _ = try? MRZImageReader().read(bytes, decoder: decoder)
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
