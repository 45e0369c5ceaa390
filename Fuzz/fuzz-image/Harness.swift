import FuzzHarness
import ImageDecoding

/// The JPEG/PNG decoding shim (libjpeg and libpng through CImageCodecs' setjmp error handling), at full size
/// and at a DCT-scaled first pass, under limits small enough for the fuzzer's memory.
let decoder = ImageDecoder(configuration: .init(maxPixels: 4_000_000, maxScans: 100, cpuBudget: .seconds(2)))

func fuzz(_ bytes: [UInt8]) {
    _ = try? decoder.decode(bytes)
    _ = try? decoder.decode(bytes, targetPixels: 10_000)
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
