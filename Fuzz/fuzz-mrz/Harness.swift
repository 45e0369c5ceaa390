import Foundation
import FuzzHarness
import VerifyModel

/// The MRZ parser (TD1, TD2, TD3): any bytes, as text.
func fuzz(_ bytes: [UInt8]) {
    _ = try? MRZ(parsing: String(decoding: bytes, as: UTF8.self), referenceDate: Date(timeIntervalSince1970: 1_795_305_600))
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
