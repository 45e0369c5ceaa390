import DocumentOutcomes
import Foundation
import SeededRandom
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

    @Test(
        "a createdAt in year 2999, or an expiresAt beyond the lifetime or not after the creation, is refused",
        arguments: [
            (Date(timeIntervalSince1970: 32_503_680_000), nil, "createdAt is more than 300 s ahead of this machine's clock"),
            (Date(timeIntervalSince1970: 1_795_651_501), nil, "createdAt is more than 300 s ahead of this machine's clock"),
            (
                nil, Date(timeIntervalSince1970: 32_503_680_000),
                "expiresAt must fall after createdAt and within the policy's transactionLifetime of it"
            ),
            (
                nil, Date(timeIntervalSince1970: 1_795_651_200 + 1_801),
                "expiresAt must fall after createdAt and within the policy's transactionLifetime of it"
            ),
            (nil, Date(timeIntervalSince1970: 1_795_651_200), "expiresAt must fall after createdAt and within the policy's transactionLifetime of it")
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

    /// Any 64-bit count of seconds or microseconds, and timestamps of any year: a bounded time or nil, never a trap.
    @Test("random 64-bit times and timestamps of any year: bounded or refused, never a trap")
    func anyTime() {
        let seed = UInt64(ProcessInfo.processInfo.environment["TIMES_SEED"] ?? "") ?? 0x7133
        var random = SeededGenerator(seed: seed)
        for _ in 0..<20_000 {
            let value = Int64(bitPattern: random.next())
            for date in [Date(timeIntervalSince1970: Double(value)), Date(timeIntervalSince1970: Double(value) / 1_000_000)] {
                if let time = BoundedTime(date) {
                    #expect(BoundedTime.microsecondRange.contains(time.microseconds), "seed \(seed): \(value)")
                }
            }
            #expect((BoundedTime(microseconds: value) != nil) == BoundedTime.microsecondRange.contains(value), "seed \(seed): \(value)")
        }
        for _ in 0..<2_000 {
            let year = Int.random(in: 0...99_999, using: &random), month = Int.random(in: 1...12, using: &random)
            let day = Int.random(in: 1...28, using: &random), fraction = Int.random(in: 0...999, using: &random)
            let text = String(format: "%04d-%02d-%02dT12:00:00.%03dZ", year, month, day, fraction)
            guard let date = Timestamp.date(text) else {
                #expect(year < 1970 || year > 9999, "seed \(seed): \(text) refused")
                continue
            }
            #expect((1970...9999).contains(year), "seed \(seed): \(text) accepted")
            // As an input's createdAt: accepted or refused with its message, never a trap.
            switch open(createdAt: date, expiresAt: nil) {
            case .success(let (created, _)): #expect(created <= Self.now.addingTimeInterval(300))
            case .failure(let failure): #expect(failure.code == .document(.initiateDocumentTransactionError))
            }
        }
    }
}
