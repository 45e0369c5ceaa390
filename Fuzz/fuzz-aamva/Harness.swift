import FuzzHarness
import VerifyModel

/// The AAMVA DL/ID reader: any bytes, as text, through the header checks, the parse (separator recovery and
/// truncation included) and the mapping onto document fields.
func fuzz(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    _ = AAMVARecord.hasHeader(text)
    _ = AAMVARecord.isMagneticStripe(text)
    _ = try? AAMVARecord(parsing: text).reading()
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
