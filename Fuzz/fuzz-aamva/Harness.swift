import FuzzHarness
import VerifyModel

/// The AAMVA DL/ID parser: any bytes, as text.
func fuzz(_ bytes: [UInt8]) {
    _ = try? AAMVARecord(parsing: String(decoding: bytes, as: UTF8.self))
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
