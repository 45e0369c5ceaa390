import BlockingWaits
import Foundation
import GRDB
import Testing
import VerifyModel

@testable import TransactionStore

@Suite("Store under concurrency and crashes")
struct ConcurrencyAndCrashTests {
    @Test("16 concurrent writers on one transaction end as a serial run does, with no lost update", arguments: StoreKind.allCases)
    func concurrentWriters(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in try await Self.concurrentWriters([store]) }
    }

    /// Each store has its own turns, as separate processes do: their writes meet only in the database, where a
    /// write decided on a version that another store moved on is refused and decided again.
    @Test("the same writers spread over four stores on one database (as four processes) end the same way", arguments: StoreKind.allCases)
    func concurrentStores(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        try await Self.withStores(4, at: location, kind: kind, opened: []) { stores in try await Self.concurrentWriters(stores) }
    }

    static func withStores(
        _ count: Int, at location: StoreLocation, kind: StoreKind, opened: [TransactionStore],
        _ body: @escaping @Sendable ([TransactionStore]) async throws -> Void
    ) async throws {
        guard opened.count < count else { return try await body(opened) }
        try await location.withStore(create: opened.isEmpty, encryption: kind.encryption) { store in
            try await withStores(count, at: location, kind: kind, opened: opened + [store], body)
        }
    }

    static func concurrentWriters(_ stores: [TransactionStore]) async throws {
        let store = stores[0]
        let types: [DocumentType] = [.governmentId, .selfie, .email, .phone, .voice]
        let policy = Dictionary(
            uniqueKeysWithValues: types.map { ($0, $0 == .governmentId || $0 == .selfie ? DocumentRequirement.required : .optional) })
        _ = try await store.openTransaction(newTransaction("t1", policy: policy))
        // Every writer tries to collect and then process every type: only one of each move can win.
        let results = try await withThrowingTaskGroup(of: (Int, Int, Int).self) { group in
            for writer in 0..<16 {
                let store = stores[writer % stores.count]
                group.addTask {
                    var collected = 0, processed = 0, refused = 0
                    for type in types.shuffled() {
                        do {
                            if case .collected = try await store.collect(document("w\(writer)-\(type.rawValue)", "t1", type), at: t0) {
                                collected += 1
                            }
                        } catch { refused += 1 }
                        do {
                            _ = try await store.apply(.process, to: type, of: "t1", reason: "w\(writer)", at: t0)
                            processed += 1
                        } catch { refused += 1 }
                    }
                    return (collected, processed, refused)
                }
            }
            return try await group.reduce(into: [(Int, Int, Int)]()) { $0.append($1) }
        }
        let collected = results.reduce(0) { $0 + $1.0 }
        let processed = results.reduce(0) { $0 + $1.1 }
        let refused = results.reduce(0) { $0 + $1.2 }
        #expect(collected == 5)
        #expect(processed == 5)
        #expect(refused == 16 * 10 - 10)
        let report = try #require(try await store.report(id: "t1"))
        #expect(report.transaction.state.documents.values.allSatisfy { $0 == .processed })
        #expect(report.transaction.state.submissionStatus == .completed)
        #expect(report.documents.count == 5)
        // The serial run's history: 5 collects, 5 processes, 3 transaction moves.
        #expect(report.history.filter { $0.documentType != nil }.count == 10)
        #expect(report.history.filter { $0.documentType == nil }.map(\.to) == ["STARTED", "PROCESS", "COMPLETED"])

        // Counters: 8 writers x 50 attempts on one submission row.
        _ = try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<50 { _ = try await store.recordSubmission(documentId: report.documents[0].id, outcome: .failed, error: nil, at: t0) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.submission(documentId: report.documents[0].id)?.attempts == 400)
    }

    @Test(
        "SIGKILL in the middle of a burst leaves a sound store holding only whole transitions",
        arguments: [(StoreKind.sqlite, 137), (.sqlite, 611), (.sqlite, 1499), (.postgres, 137), (.postgres, 611)])
    func killedMidBurst(_ kind: StoreKind, afterLines: Int) async throws {
        let location = try await kind.freshLocation()
        let helper = try #require(Self.helper, "the store-burst helper is built with the tests")
        let process = Process()
        process.executableURL = helper
        process.arguments = [location.description]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Let it commit a few hundred writes, then kill it without warning.
        let reader = output.fileHandleForReading
        let lines = await offCooperativePool {
            var lines = 0
            while lines < afterLines {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                lines += chunk.filter { $0 == UInt8(ascii: "\n") }.count
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return lines
        }
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
        #expect(lines >= afterLines)

        try await location.withStore(create: false, encryption: kind.encryption) { store in
            try await Self.checkWholeTransitions(store, afterLines: afterLines)
        }
    }

    static func checkWholeTransitions(_ store: TransactionStore, afterLines: Int) async throws {
        if let check = try await store.integrityCheck() { #expect(check == "ok") }
        let summaries = try await store.transactions(status: nil)
        #expect(summaries.count >= afterLines / 5)
        for summary in summaries {
            let report = try #require(try await store.report(id: summary.id))
            // Replaying the history from the policy's statuses must give the stored statuses exactly.
            var documents: [DocumentType: String] = [.governmentId: "REQUIRED", .selfie: "OPTIONAL", .email: "OPTIONAL"]
            var status = "NOT_STARTED"
            for step in report.history {
                if let type = step.documentType {
                    #expect(documents[type] == step.from)
                    documents[type] = step.to
                } else {
                    #expect(status == step.from)
                    status = step.to
                }
            }
            #expect(documents == report.transaction.state.documents.mapValues(\.rawValue))
            #expect(status == report.transaction.state.submissionStatus.rawValue)
            // A collected type has its document row, and a document row its collected type.
            let collectedTypes = Set(documents.filter { $0.value == "COLLECTED" || $0.value == "PROCESSED" }.keys)
            #expect(Set(report.documents.map(\.type)) == collectedTypes)
        }
    }

    static let helper: URL? = {
        var folder = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("store-burst")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }()
}
