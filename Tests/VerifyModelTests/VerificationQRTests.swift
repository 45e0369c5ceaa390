import Foundation
import Testing

@testable import VerifyModel

@Suite("Verification QR strings (CONTRACT §2)")
struct VerificationQRTests {
    @Test("the webapp form")
    func webappForm() throws {
        let qr = try VerificationQR(
            parsing:
                "https://apps.pingone.com/3072206d-c6ce-4b15-8ad2-f87e972c7cc3/verify/verify-webapp/v2/index.html?txnid=5b3a0f5e-8a4c&url=https%3A%2F%2Fapi.pingone.com%2Fv1%2FidValidations%2FwebVerifications&code=417203"
        )
        #expect(qr.transactionId == "5b3a0f5e-8a4c")
        #expect(qr.verificationCode == "417203")
        #expect(qr.apiBase?.absoluteString == "https://api.pingone.com/v1/idValidations/webVerifications")
        #expect(qr.envId == "3072206d-c6ce-4b15-8ad2-f87e972c7cc3")
        #expect(qr.source == nil)
    }

    @Test("the API form, with envId and source, surrounded by whitespace")
    func apiForm() throws {
        let qr = try VerificationQR(
            parsing: "  https://api.pingone.com/v1/idValidations/webVerifications?envId=abc-123&txnid=t1&code=999&source=kiosk\n")
        #expect(qr == VerificationQR(transactionId: "t1", verificationCode: "999", envId: "abc-123", source: "kiosk"))
    }

    @Test(
        "every QRError code",
        arguments: [
            ("", QRError.invalidQR),
            ("hello, world", .invalidQR),
            ("ftp://api.pingone.com/x?txnid=1&code=2", .invalidQR),
            ("https://example.com/search?q=passport", .invalidQR),
            ("https://api.pingone.com/v1/x?txnid=1&code=2&url=not%20a%20url", .unableToParse),
            ("https://api.pingone.com/v1/x?txnid=1&code=2&url=https%3A%2F%2F", .unableToParse),
            ("https://api.pingone.com/v1/idValidations/webVerifications", .missingQueryItems),
            ("https://api.pingone.com/v1/idValidations/webVerifications?", .missingQueryItems),
            ("https://api.pingone.com/v1/idValidations/webVerifications?txnid=abc", .missingVerificationCode),
            ("https://api.pingone.com/v1/idValidations/webVerifications?txnid=abc&code=", .missingVerificationCode),
            ("https://api.pingone.com/v1/idValidations/webVerifications?code=123456", .missingTransactionId),
            // Identifiers that would reach URLs, logs and terminals: 1 to 128 of A-Z a-z 0-9 . _ : -
            ("https://api.pingone.com/v1/x?txnid=%1B%5B2J&code=1", .unsafeIdentifier),
            ("https://api.pingone.com/v1/x?txnid=..%2F..%2Fadmin&code=1", .unsafeIdentifier),
            ("https://api.pingone.com/v1/x?txnid=..&code=1", .unsafeIdentifier),
            ("https://api.pingone.com/v1/x?txnid=a%2Fb&code=1", .unsafeIdentifier),
            ("https://api.pingone.com/v1/x?txnid=t1&code=12%0A34", .unsafeIdentifier),
            ("https://api.pingone.com/v1/x?txnid=\(String(repeating: "a", count: 129))&code=1", .unsafeIdentifier),
            ("https://api.pingone.com/v1/x?txnid=t%C3%A9&code=1", .unsafeIdentifier),
            // Two readings of one QR: this tool would take one transaction, the verification service perhaps the other.
            ("https://api.pingone.com/v1/x?txnid=victim&code=1&txnid=attacker", .ambiguousIdentifier),
            ("https://api.pingone.com/v1/x?txnid=t1&code=111&code=222", .ambiguousIdentifier),
            ("https://api.pingone.com/v1/x?txnid=t1&code=&code=222", .ambiguousIdentifier)
        ])
    func errors(_ text: String, _ expected: QRError) {
        let error = #expect(throws: QRError.self) { try VerificationQR(parsing: text) }
        #expect(error == expected)
    }

    @Test("every QRError code is produced by some input above; an unsafe identifier is an invalidQR")
    func allCodesCovered() {
        #expect(
            Set(QRError.allCases.map(\.code)) == [
                "invalidQR", "unableToParse", "missingQueryItems", "missingVerificationCode",
                "missingTransactionId"
            ])
        #expect(FailureCode.qr(.unsafeIdentifier).rawValue == "invalidQR")
        #expect(FailureCode.qr(.ambiguousIdentifier).rawValue == "invalidQR")
        #expect(QRError.ambiguousIdentifier.description == "the verification URL gives 'txnid' or 'code' more than once, with different values")
        #expect(QRError.unsafeIdentifier.description == "the verification URL's 'txnid' or 'code' is not 1 to 128 of A-Z a-z 0-9 . _ : -")
    }

    @Test("the longest and the odd but safe identifiers are accepted")
    func safeIdentifiers() throws {
        let id = "Ab0._:-" + String(repeating: "z", count: 121)
        let qr = try VerificationQR(parsing: "https://api.pingone.com/v1/x?txnid=\(id)&code=a.b")
        #expect(qr.transactionId == id && qr.verificationCode == "a.b")
        // The same value twice says one thing.
        let repeated = try VerificationQR(parsing: "https://api.pingone.com/v1/x?txnid=t1&code=9&txnid=t1")
        #expect(repeated.transactionId == "t1" && repeated.verificationCode == "9")
    }
}
