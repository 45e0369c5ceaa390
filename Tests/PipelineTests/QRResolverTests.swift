import Testing
import VerifyModel

@testable import Pipeline

@Suite("QR resolver")
struct QRResolverTests {
    static func qr(_ id: String) throws -> VerificationQR {
        try VerificationQR(parsing: "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=\(id)&code=C")
    }

    @Test("the first asker reads; askers meanwhile wait for its answer; later askers get it without reading")
    func sharesOneAnswer() async throws {
        let resolver = QRResolver()
        #expect(await resolver.claim("folder") == nil, "the first asker must read the QR")
        async let waiting = resolver.claim("folder")
        try await Task.sleep(for: .milliseconds(50))
        await resolver.fulfill("folder", with: .success(try Self.qr("t1")))
        #expect(try (await waiting)?.get().transactionId == "t1")
        #expect(try (await resolver.claim("folder"))?.get().transactionId == "t1")
    }

    @Test("only the most recent answers are kept; a folder asked after its answer was dropped is read again")
    func boundedMemory() async throws {
        let resolver = QRResolver(keep: 3)
        for index in 0..<10 {
            #expect(await resolver.claim("folder-\(index)") == nil)
            await resolver.fulfill("folder-\(index)", with: .success(try Self.qr("t\(index)")))
        }
        #expect(await resolver.answersHeld == 3)
        #expect(try (await resolver.claim("folder-9"))?.get().transactionId == "t9")
        #expect(await resolver.claim("folder-0") == nil, "dropped: the caller reads the QR again")
    }
}
