import Foundation
import Testing
import VerifyModel

@testable import TransactionStore

/// The review loop's rules as the store decides them (CONTRACT §12), on every backend, in clear and sealed.
@Suite("Reviews in the store")
struct ReviewStoreTests {
    static func failure(_ transaction: String?, _ type: DocumentType = .governmentId, code: String? = "417203", inputs: String? = "{}")
        -> FailureReport
    {
        FailureReport(
            transactionId: transaction, verificationCode: code, type: type, kind: .capture, code: .document(.documentCaptureError),
            message: "front image: undecodable", field: nil, source: "folder/\(transaction ?? "loose")", inputs: inputs)
    }

    @Test(
        "attached only with the transaction's code; failing again reopens with one more attempt; processing closes it", arguments: StoreKind.allCases)
    func attachment(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            let limits = ReviewLimits()
            let attached = try await store.recordFailure(Self.failure("t1", inputs: #"{"type":"GOVERNMENT_ID","images":{}}"#), limits: limits, at: t0)
            #expect(attached.kind == .capture && attached.transactionId == "t1" && attached.inputs == .kept && attached.attempt == 1)
            #expect(try await store.reviewInputs(of: attached) == #"{"type":"GOVERNMENT_ID","images":{}}"#)
            // Another verification code, or an unknown transaction: nobody plants a document by knowing an id.
            let forged = try await store.recordFailure(Self.failure("t1", code: "999999"), limits: limits, at: t0)
            let unknown = try await store.recordFailure(Self.failure("nope"), limits: limits, at: t0)
            for entry in [forged, unknown] {
                #expect(entry.kind == .unattached && entry.transactionId == nil && entry.inputs == .none)
                #expect(try await store.reviewInputs(of: entry) == nil)
            }
            let again = try await store.recordFailure(Self.failure("t1"), limits: limits, at: t0.addingTimeInterval(1))
            #expect(again.id == attached.id && again.attempt == 2 && again.state == .open)
            // An optional document under review is not skipped at the end of its input.
            _ = try await store.recordFailure(Self.failure("t1", .selfie), limits: limits, at: t0)
            let (ended, _) = try #require(try await store.endInput(of: "t1", reason: "end", at: t0.addingTimeInterval(2)))
            #expect(ended.state.documents[.selfie] == .optional)
            // A document processed closes its type's open review in the same write.
            _ = try await store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(3))
            _ = try await store.finishSubmission(
                documentId: "d1", type: .governmentId, of: "t1", accepted: true, error: nil, at: t0.addingTimeInterval(4))
            #expect(try await store.review(transactionId: "t1", type: .governmentId)?.state == .resolved)
            #expect(try await store.review(transactionId: "t1", type: .selfie)?.state == .open)
            let counts = try await store.reviewCounts()
            #expect(counts.open["documentCaptureError"] == 3 && counts.failed["documentCaptureError"] == 5, "\(counts)")
        }
    }

    @Test("one claim wins among many at once; a closed review is told as such", arguments: [StoreKind.sqlite, .postgres])
    func claims(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            let entry = try await store.recordFailure(Self.failure("t1"), limits: ReviewLimits(), at: t0)
            let outcomes = try await withThrowingTaskGroup(of: ReviewClaim.self) { group in
                for index in 0..<8 {
                    group.addTask { try await store.claimReview(entry, for: .reject, operator: "op\(index)", owner: "owner-\(index)", at: Date()) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let taken = outcomes.compactMap { if case .taken(let entry) = $0 { entry } else { nil } }
            #expect(taken.count == 1, "\(outcomes)")
            let owner = "owner-" + (taken.first?.resolvedBy?.dropFirst(2) ?? "")
            #expect(
                try await store.resolveReview(
                    entry, action: .reject, owner: String(owner), operator: "op", resolution: "unreadable", note: "n", at: Date()))
            guard case .closed(let closed) = try await store.claimReview(entry, for: .replay, operator: "late", owner: "late", at: Date()) else {
                Issue.record("a rejected review is closed")
                return
            }
            #expect(closed.state == .rejected && closed.resolution == "unreadable")
        }
    }

    @Test("inputs over the document cap or the store cap are not kept; by age they go whatever the retention", arguments: StoreKind.allCases)
    func limits(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            for id in ["t1", "t2", "t3"] { _ = try await store.openTransaction(newTransaction(id)) }
            var limits = ReviewLimits()
            limits.maxInputBytes = 100
            limits.maxStoreBytes = 150
            let big = try await store.recordFailure(Self.failure("t1", inputs: String(repeating: "x", count: 101)), limits: limits, at: t0)
            #expect(big.inputs == .tooLarge)
            let first = try await store.recordFailure(Self.failure("t2", inputs: String(repeating: "y", count: 100)), limits: limits, at: t0)
            let second = try await store.recordFailure(Self.failure("t3", inputs: String(repeating: "z", count: 100)), limits: limits, at: t0)
            #expect(first.inputs == .kept && second.inputs == .storeFull)
            let outcome = try await store.purge(Retention(), reviewInputsMaxAge: 60, at: t0.addingTimeInterval(61), dryRun: false)
            #expect(outcome.reviewInputs == 1 && outcome.transactions.isEmpty)
            #expect(try await store.review(transactionId: "t2", type: .governmentId)?.inputs == .expired)
        }
    }

    @Test("a key rotation seals the kept inputs again: they open under the new key", arguments: [StoreKind.sqliteSealed, .postgresSealed])
    func rotation(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            let entry = try await store.recordFailure(Self.failure("t1", inputs: #"{"kept":"inputs"}"#), limits: ReviewLimits(), at: t0)
            _ = try await store.rotateKey(to: otherKey, at: t0)
            #expect(try await store.reviewInputs(of: entry) == #"{"kept":"inputs"}"#)
        }
    }
}
