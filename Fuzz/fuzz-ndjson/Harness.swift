import FuzzHarness

@testable import Pipeline

/// One NDJSON stream line: any bytes, as the line splitter hands them over.
func fuzz(_ bytes: [UInt8]) {
    _ = StreamLine.parse(String(decoding: bytes, as: UTF8.self), number: 1)
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
