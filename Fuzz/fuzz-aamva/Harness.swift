import FuzzHarness
import VerifyModel

/// The AAMVA DL/ID reader: any bytes, as text, through the header checks (damaged-header recovery included), the
/// parse (separator recovery and truncation included), the mapping onto document fields, and the magnetic-stripe
/// reader.
func fuzz(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    _ = AAMVARecord.hasHeader(text)
    _ = AAMVARecord.isMagneticStripe(text)
    _ = try? AAMVARecord(parsing: text).reading()
    _ = try? AAMVAReading(parsing: text)
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
