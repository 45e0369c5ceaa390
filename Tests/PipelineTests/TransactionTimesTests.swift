import Foundation
import Testing
import VerifyModel

@testable import Pipeline

/// An input's `createdAt` and `expiresAt` are its sender's word: bounded before they open a transaction.
@Suite("Input timestamps are bounded")
struct TransactionTimesTests {
    static let now = Date(timeIntervalSince1970: 1_795_651_200)
    static let qr = try! VerificationQR(parsing: "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=tt-1&code=7")

    func open(createdAt: Date?, expiresAt: Date?, lifetime: TimeInterval = 1_800) -> Result<(Date, Date), DocumentFailure> {
        var job = DocumentJob(sequence: 0, source: "test", type: .email, identity: .qr(Self.qr))
        (job.createdAt, job.expiresAt) = (createdAt, expiresAt)
        var configuration = PipelineConfiguration()
        configuration.transactionLifetime = lifetime
        do throws(DocumentFailure) {
            let transaction = try job.newTransaction(Self.qr, configuration: configuration, now: Self.now)
            return .success((transaction.createdAt, transaction.expiresAt))
        } catch {
            return .failure(error)
        }
    }

    @Test("without timestamps: now and the policy's lifetime; with ones inside the bounds: as given")
    func accepted() throws {
        #expect(try open(createdAt: nil, expiresAt: nil).get() == (Self.now, Self.now.addingTimeInterval(1_800)))
        let earlier = Self.now.addingTimeInterval(-86_400)
        #expect(try open(createdAt: earlier, expiresAt: earlier.addingTimeInterval(600)).get() == (earlier, earlier.addingTimeInterval(600)))
        // Another machine's clock a little ahead: up to 300 s.
        let ahead = Self.now.addingTimeInterval(299)
        #expect(try open(createdAt: ahead, expiresAt: nil).get() == (ahead, ahead.addingTimeInterval(1_800)))
    }

    @Test("a createdAt in year 2999, or an expiresAt beyond the lifetime or not after the creation, is refused",
          arguments: [
            (Date(timeIntervalSince1970: 32_503_680_000), nil, "createdAt is more than 300 s ahead of this machine's clock"),
            (Date(timeIntervalSince1970: 1_795_651_501), nil, "createdAt is more than 300 s ahead of this machine's clock"),
            (nil, Date(timeIntervalSince1970: 32_503_680_000), "expiresAt must fall after createdAt and within the policy's transactionLifetime of it"),
            (nil, Date(timeIntervalSince1970: 1_795_651_200 + 1_801), "expiresAt must fall after createdAt and within the policy's transactionLifetime of it"),
            (nil, Date(timeIntervalSince1970: 1_795_651_200), "expiresAt must fall after createdAt and within the policy's transactionLifetime of it"),
          ] as [(Date?, Date?, String)])
    func refused(createdAt: Date?, expiresAt: Date?, message: String) {
        guard case .failure(let failure) = open(createdAt: createdAt, expiresAt: expiresAt) else {
            Issue.record("accepted")
            return
        }
        #expect(failure.code == .document(.initiateDocumentTransactionError) && failure.message == message)
    }

    @Test("timestamps no store can hold (year 0 or 10000) are not timestamps at all")
    func unholdable() {
        #expect(Timestamp.date("10000-01-01T00:00:00Z") == nil)
        #expect(Timestamp.date("0001-01-01T00:00:00Z") == nil)
        #expect(Timestamp.date("1969-12-31T23:59:59Z") == nil)
        #expect(Timestamp.date("9999-12-31T23:59:59.999Z") == Date(timeIntervalSince1970: 253_402_300_799.999))
    }
}
