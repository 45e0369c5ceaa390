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
        #expect(try await resolver.claim("folder") == nil, "the first asker must read the QR")
        let waiting = Task { try await resolver.claim("folder") }
        await eventually { resolver.waiting(for: "folder") == 1 }
        resolver.fulfill("folder", with: .success(try Self.qr("t1")))
        #expect(try (await waiting.value)?.get().transactionId == "t1")
        #expect(try (await resolver.claim("folder"))?.get().transactionId == "t1")
    }

    @Test("a waiting asker whose task is cancelled stops waiting; the others still get the answer")
    func cancelledWaiter() async throws {
        let resolver = QRResolver()
        #expect(try await resolver.claim("folder") == nil)
        let cancelled = Task { try await resolver.claim("folder") }
        let patient = Task { try await resolver.claim("folder") }
        await eventually { resolver.waiting(for: "folder") == 2 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(resolver.waiting(for: "folder") == 1)
        resolver.fulfill("folder", with: .success(try Self.qr("t2")))
        #expect(try (await patient.value)?.get().transactionId == "t2")
    }

    @Test("only the most recent answers are kept; a folder asked after its answer was dropped is read again")
    func boundedMemory() async throws {
        let resolver = QRResolver(keep: 3)
        for index in 0..<10 {
            #expect(try await resolver.claim("folder-\(index)") == nil)
            resolver.fulfill("folder-\(index)", with: .success(try Self.qr("t\(index)")))
        }
        #expect(resolver.answersHeld == 3)
        #expect(try (await resolver.claim("folder-9"))?.get().transactionId == "t9")
        #expect(try await resolver.claim("folder-0") == nil, "dropped: the caller reads the QR again")
    }
}
