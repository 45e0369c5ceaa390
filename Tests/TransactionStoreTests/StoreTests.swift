import Foundation
import GRDB
import Testing
import VerifyModel

@testable import TransactionStore

let t0 = Date(timeIntervalSince1970: 1_795_305_600)

/// A fresh store in its own temporary folder.
struct TemporaryStore {
    let folder: URL
    let path: String
    let store: SQLiteTransactionStore

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("verify-pipeline.sqlite").path
        store = try SQLiteTransactionStore(path: path)
    }

    func rowCounts() throws -> [Int] {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            try ["transactions", "documentStatuses", "documents", "transitions", "submissions"].map {
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)")!
            }
        }
    }
}

func newTransaction(_ id: String, policy: [DocumentType: DocumentRequirement] = [.governmentId: .required, .selfie: .optional],
                    lifetime: TimeInterval = 1800) -> NewTransaction {
    NewTransaction(id: id, verificationCode: "417203", envId: "env", policy: policy, createdAt: t0,
                   expiresAt: t0.addingTimeInterval(lifetime), signals: "signals-\(id)")
}

func document(_ id: String, _ transaction: String, _ type: DocumentType) -> DocumentRecord {
    DocumentRecord(id: id, transactionId: transaction, type: type, fields: DocumentFields([.firstName: "ANNA", .documentNumber: "L898902C3"]),
                   source: "Samples/\(id).png", contentHash: "sha256:\(id)", createdAt: t0)
}

@Suite("SQLite transaction store")
struct StoreTests {
    @Test("every transition is persisted with its log row, in order")
    func transitionsArePersistedWithHistory() async throws {
        let temp = try TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1"))
        _ = try await temp.store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(1))
        _ = try await temp.store.apply(.process, to: .governmentId, of: "t1", reason: "submission accepted", at: t0.addingTimeInterval(2))
        _ = try await temp.store.apply(.skip, to: .selfie, of: "t1", reason: "end of batch", at: t0.addingTimeInterval(3))

        // Read back through a new store instance: what is on disk, not what is cached.
        let reopened = try SQLiteTransactionStore(path: temp.path, create: false)
        let report = try #require(try await reopened.report(id: "t1"))
        #expect(report.transaction.state.documents == [.governmentId: .processed, .selfie: .skipped])
        #expect(report.transaction.state.submissionStatus == .completed)
        #expect(report.transaction.updatedAt == t0.addingTimeInterval(3))
        #expect(report.transaction.signals == "signals-t1")
        let steps = report.history.map { "\($0.documentType?.rawValue ?? "transaction") \($0.from)->\($0.to) @\(Int($0.at.timeIntervalSince(t0))) \($0.reason)" }
        #expect(steps == [
            "GOVERNMENT_ID REQUIRED->COLLECTED @1 document d1 collected",
            "transaction NOT_STARTED->STARTED @1 document d1 collected",
            "transaction STARTED->PROCESS @1 document d1 collected",
            "GOVERNMENT_ID COLLECTED->PROCESSED @2 submission accepted",
            "SELFIE OPTIONAL->SKIPPED @3 end of batch",
            "transaction PROCESS->COMPLETED @3 end of batch",
        ])
        #expect(report.history.map(\.sequence) == report.history.map(\.sequence).sorted())
        #expect(report.documents.map(\.id) == ["d1"])
        #expect(report.documents.first?.keys == [.documentNumber, .firstName])
    }

    @Test("a refused illegal transition leaves no trace")
    func illegalTransitionLeavesNoTrace() async throws {
        let temp = try TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1"))
        let before = try temp.rowCounts()
        await #expect(throws: StoreError.transition(.illegalMove(.governmentId, .required, .process))) {
            _ = try await temp.store.apply(.process, to: .governmentId, of: "t1", reason: "x", at: t0)
        }
        await #expect(throws: StoreError.transition(.illegalMove(.governmentId, .required, .skip))) {
            _ = try await temp.store.apply(.skip, to: .governmentId, of: "t1", reason: "x", at: t0)
        }
        await #expect(throws: StoreError.transition(.documentTypeNotInPolicy(.email))) {
            _ = try await temp.store.collect(document("e1", "t1", .email), at: t0)
        }
        #expect(try temp.rowCounts() == before)
        let transaction = try #require(try await temp.store.transaction(id: "t1"))
        #expect(transaction.state.documents == [.governmentId: .required, .selfie: .optional])
        #expect(transaction.updatedAt == t0)
    }

    @Test("re-recording a document changes nothing")
    func collectIsIdempotent() async throws {
        let temp = try TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1"))
        guard case .collected = try await temp.store.collect(document("d1", "t1", .governmentId), at: t0) else {
            Issue.record("first collect should store the document")
            return
        }
        let after = try temp.rowCounts()
        let again = try await temp.store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(5))
        guard case .alreadyRecorded(let transaction) = again else {
            Issue.record("second collect should be a no-op, got \(again)")
            return
        }
        #expect(transaction.updatedAt == t0)
        #expect(try temp.rowCounts() == after)
        // Opening the same transaction again returns it unchanged too.
        let reopened = try await temp.store.openTransaction(newTransaction("t1", lifetime: 5))
        #expect(reopened.expiresAt == t0.addingTimeInterval(1800))
    }

    @Test("past expiresAt new documents are refused with documentSubmissionTimeoutError")
    func expiredTransaction() async throws {
        let temp = try TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1", lifetime: 60))
        let before = try temp.rowCounts()
        do {
            _ = try await temp.store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(61))
            Issue.record("an expired transaction accepted a document")
        } catch {
            #expect(error.documentError.code == .documentSubmissionTimeoutError)
        }
        #expect(try temp.rowCounts() == before)
    }

    @Test("submissions count their attempts")
    func submissions() async throws {
        let temp = try TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1"))
        _ = try await temp.store.collect(document("d1", "t1", .governmentId), at: t0)
        _ = try await temp.store.recordSubmission(documentId: "d1", outcome: .failed, error: "HTTP 503", at: t0)
        let record = try await temp.store.recordSubmission(documentId: "d1", outcome: .accepted, error: nil, at: t0)
        #expect(record.attempts == 2 && record.outcome == .accepted && record.error == nil)
        await #expect(throws: StoreError.unknownDocument("nope")) {
            _ = try await temp.store.recordSubmission(documentId: "nope", outcome: .accepted, error: nil, at: t0)
        }
    }

    @Test("the file is created readable by its owner only")
    func fileMode() throws {
        let temp = try TemporaryStore()
        let attributes = try FileManager.default.attributesOfItem(atPath: temp.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("listing filters by status and counts documents")
    func listing() async throws {
        let temp = try TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1"))
        _ = try await temp.store.openTransaction(newTransaction("t2"))
        _ = try await temp.store.collect(document("d1", "t2", .governmentId), at: t0.addingTimeInterval(1))
        #expect(try await temp.store.transactions(status: nil).map(\.id) == ["t2", "t1"])
        #expect(try await temp.store.transactions(status: .process).map(\.id) == ["t2"])
        #expect(try await temp.store.transactions(status: .notStarted).first?.documents == [.governmentId: .required, .selfie: .optional])
    }

    @Test("a store written by a newer version is refused, and so is a file that is not a store")
    func openingErrors() async throws {
        let temp = try TemporaryStore()
        let queue = try DatabaseQueue(path: temp.path)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        #expect(throws: StoreError.newerSchema(temp.path)) { _ = try SQLiteTransactionStore(path: temp.path) }

        let bogus = temp.folder.appendingPathComponent("not-a-store.sqlite").path
        try Data("this is not SQLite".utf8).write(to: URL(fileURLWithPath: bogus))
        #expect { _ = try SQLiteTransactionStore(path: bogus) } throws: { error in
            if case .cannotOpen = error as? StoreError { return true } else { return false }
        }
        #expect(throws: StoreError.cannotOpen("no store at /no/such/store.sqlite")) {
            _ = try SQLiteTransactionStore(path: "/no/such/store.sqlite", create: false)
        }
    }

    @Test("schema invariants reject bad rows even from outside the store's code")
    func schemaInvariants() async throws {
        let temp = try TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1"))
        let queue = try DatabaseQueue(path: temp.path)
        for sql in [
            "UPDATE transactions SET submissionStatus = 'DONE' WHERE id = 't1'",
            "UPDATE documentStatuses SET status = 'LOST' WHERE transactionId = 't1'",
            "INSERT INTO documents VALUES ('d9', 'nope', 'SELFIE', '{}', 's', 'h', '2026-01-01')",
            "INSERT INTO transitions (transactionId, documentType, fromStatus, toStatus, at, reason) VALUES ('t1', NULL, 'REQUIRED', 'COLLECTED', '2026-01-01', 'x')",
            "INSERT INTO submissions VALUES ('missing-document', 1, 'ACCEPTED', NULL, '2026-01-01')",
        ] {
            #expect(throws: DatabaseError.self, "\(sql)") { try queue.write { db in try db.execute(sql: sql) } }
        }
    }
}
