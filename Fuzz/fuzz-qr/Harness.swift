import FuzzHarness
import VerifyModel

/// The verification QR parser: any bytes, as text.
func fuzz(_ bytes: [UInt8]) {
    if let qr = try? VerificationQR(parsing: String(decoding: bytes, as: UTF8.self)) {
        // Whatever is accepted keeps the promise the rest of the pipeline relies on.
        precondition(VerificationQR.isSafeIdentifier(qr.transactionId) && VerificationQR.isSafeIdentifier(qr.verificationCode))
    }
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
