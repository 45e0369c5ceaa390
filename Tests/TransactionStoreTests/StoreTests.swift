import Foundation
import GRDB
import Synchronization
import Testing
import VerifyModel

@testable import TransactionStore

let t0 = Date(timeIntervalSince1970: 1_795_305_600)

/// A fresh store in its own temporary folder.
struct TemporaryStore {
    let folder: URL
    let path: String
    let store: TransactionStore

    init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("verify-pipeline.sqlite").path
        store = try await TransactionStore.sqlite(path: path)
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

func newTransaction(
    _ id: String, policy: [DocumentType: DocumentRequirement] = [.governmentId: .required, .selfie: .optional],
    lifetime: TimeInterval = 1800
) -> NewTransaction {
    NewTransaction(
        id: id, verificationCode: "417203", envId: "env", policy: policy, createdAt: t0,
        expiresAt: t0.addingTimeInterval(lifetime), signals: "signals-\(id)")
}

func document(_ id: String, _ transaction: String, _ type: DocumentType) -> DocumentRecord {
    DocumentRecord(
        id: id, transactionId: transaction, type: type, fields: DocumentFields([.firstName: "ANNA", .documentNumber: "L898902C3"]),
        source: "Samples/\(id).png", contentHash: "sha256:\(id)", createdAt: t0)
}

@Suite("Transaction store (SQLite and PostgreSQL)")
struct StoreTests {
    @Test("every transition is persisted with its log row, in order", arguments: StoreKind.allCases)
    func transitionsArePersistedWithHistory(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, location in
            _ = try await store.openTransaction(newTransaction("t1"))
            _ = try await store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(1))
            _ = try await store.apply(.process, to: .governmentId, of: "t1", reason: "submission accepted", at: t0.addingTimeInterval(2))
            _ = try await store.apply(.skip, to: .selfie, of: "t1", reason: "end of batch", at: t0.addingTimeInterval(3))

            // Read back through a new store instance: what is stored, not what is cached.
            try await location.withStore(create: false, encryption: kind.encryption) { reopened in
                let report = try #require(try await reopened.report(id: "t1"))
                #expect(report.transaction.state.documents == [.governmentId: .processed, .selfie: .skipped])
                #expect(report.transaction.state.submissionStatus == .completed)
                #expect(report.transaction.updatedAt == t0.addingTimeInterval(3))
                #expect(report.transaction.signals == "signals-t1")
                let steps = report.history.map {
                    "\($0.documentType?.rawValue ?? "transaction") \($0.from)->\($0.to) @\(Int($0.at.timeIntervalSince(t0))) \($0.reason)"
                }
                #expect(
                    steps == [
                        "GOVERNMENT_ID REQUIRED->COLLECTED @1 document d1 collected",
                        "transaction NOT_STARTED->STARTED @1 document d1 collected",
                        "transaction STARTED->PROCESS @1 document d1 collected",
                        "GOVERNMENT_ID COLLECTED->PROCESSED @2 submission accepted",
                        "SELFIE OPTIONAL->SKIPPED @3 end of batch",
                        "transaction PROCESS->COMPLETED @3 end of batch"
                    ])
                #expect(report.history.map(\.sequence) == report.history.map(\.sequence).sorted())
                #expect(report.documents.map(\.id) == ["d1"])
                #expect(report.documents.first?.keys == [.documentNumber, .firstName])
            }
        }
    }

    @Test("a refused illegal transition leaves no trace", arguments: StoreKind.allCases)
    func illegalTransitionLeavesNoTrace(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            let before = try await store.report(id: "t1")
            await #expect(throws: StoreError.transition(.illegalMove(.governmentId, .required, .process))) {
                _ = try await store.apply(.process, to: .governmentId, of: "t1", reason: "x", at: t0)
            }
            await #expect(throws: StoreError.transition(.illegalMove(.governmentId, .required, .skip))) {
                _ = try await store.apply(.skip, to: .governmentId, of: "t1", reason: "x", at: t0)
            }
            await #expect(throws: StoreError.transition(.documentTypeNotInPolicy(.email))) {
                _ = try await store.collect(document("e1", "t1", .email), at: t0)
            }
            #expect(try await store.report(id: "t1") == before)
            #expect(try await store.document(id: "e1") == nil)
            #expect(before?.history.isEmpty == true && before?.transaction.updatedAt == t0)
        }
    }

    @Test("re-recording a document changes nothing", arguments: StoreKind.allCases)
    func collectIsIdempotent(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            guard case .collected = try await store.collect(document("d1", "t1", .governmentId), at: t0) else {
                Issue.record("first collect should store the document")
                return
            }
            let after = try await store.report(id: "t1")
            let again = try await store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(5))
            guard case .alreadyRecorded(let transaction, let recorded) = again else {
                Issue.record("second collect should be a no-op, got \(again)")
                return
            }
            #expect(transaction.updatedAt == t0)
            #expect(recorded == RecordedDocument(id: "d1", transactionId: "t1", type: .governmentId, revision: 1))
            #expect(try await store.report(id: "t1") == after)
            // Opening the same transaction again returns it unchanged too.
            let reopened = try await store.openTransaction(newTransaction("t1", lifetime: 5))
            #expect(reopened.expiresAt == t0.addingTimeInterval(1800))
        }
    }

    @Test("past expiresAt new documents are refused with documentSubmissionTimeoutError", arguments: StoreKind.allCases)
    func expiredTransaction(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1", lifetime: 60))
            do {
                _ = try await store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(61))
                Issue.record("an expired transaction accepted a document")
            } catch {
                #expect((error as? StoreError)?.failureCode == .document(.documentSubmissionTimeoutError))
            }
            #expect(try await store.document(id: "d1") == nil)
            #expect(try await store.report(id: "t1")?.history.isEmpty == true)
        }
    }

    @Test("submissions count their attempts; finishing one moves the document in the same write", arguments: StoreKind.allCases)
    func submissions(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            _ = try await store.collect(document("d1", "t1", .governmentId), at: t0)
            _ = try await store.recordSubmission(documentId: "d1", outcome: .failed, error: "HTTP 503", at: t0)
            let (transaction, record, transitions) = try await store.finishSubmission(
                documentId: "d1", type: .governmentId, of: "t1", accepted: true, error: nil, at: t0)
            #expect(record.attempts == 2 && record.outcome == .accepted && record.error == nil)
            #expect(transaction.state.documents[.governmentId] == .processed)
            #expect(transaction.version == (try await store.transaction(id: "t1"))?.version)
            #expect(transitions.first?.to == "PROCESSED")
            await #expect(throws: StoreError.unknownDocument("nope")) {
                _ = try await store.recordSubmission(documentId: "nope", outcome: .accepted, error: nil, at: t0)
            }
        }
    }

    /// The submission rules (`SubmissionRules`), stated in Swift for SQLite and as upserts for PostgreSQL, case by
    /// case: each row is a step on one document and the answer both backends must give.
    @Test("the claim and attempt rules give the same answer on both backends, case by case", arguments: StoreKind.allCases)
    func submissionRuleCases(_ kind: StoreKind) async throws {
        enum Step {
            case claim(String, until: TimeInterval, at: TimeInterval, SubmissionClaim)
            case record(SubmissionOutcome, attempts: Int)
        }
        let steps: [Step] = [
            .claim("a", until: 60, at: 0, .claimed(attempts: 0)),  // no row yet: taken
            .claim("b", until: 90, at: 59, .held(until: t0.addingTimeInterval(60), attempts: 0)),  // another's, not expired
            .claim("a", until: 120, at: 59, .claimed(attempts: 0)),  // its owner renews it
            .record(.pending, attempts: 0),  // a PENDING record counts no attempt and keeps the claim
            .claim("b", until: 150, at: 119, .held(until: t0.addingTimeInterval(120), attempts: 0)),
            .claim("b", until: 180, at: 120, .claimed(attempts: 0)),  // expired at that very instant: taken over
            .record(.failed, attempts: 1),  // an attempt that ended counts, and ends the claim
            .claim("a", until: 240, at: 121, .claimed(attempts: 1)),
            .record(.accepted, attempts: 2),
            .claim("b", until: 300, at: 122, .accepted),  // accepted: nothing to send, whoever asks
            .claim("a", until: 300, at: 122, .accepted)
        ]
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            _ = try await store.collect(document("d1", "t1", .governmentId), at: t0)
            for (index, step) in steps.enumerated() {
                switch step {
                case .claim(let owner, let until, let at, let expected):
                    let answer = try await store.claimSubmission(
                        documentId: "d1", owner: owner, until: t0.addingTimeInterval(until), at: t0.addingTimeInterval(at))
                    #expect(answer == expected, "step \(index)")
                case .record(let outcome, let attempts):
                    let record = try await store.recordSubmission(documentId: "d1", outcome: outcome, error: nil, at: t0)
                    #expect(record.attempts == attempts && record.outcome == outcome, "step \(index)")
                }
            }
        }
    }

    @Test(
        "a submission claim: held against others until it expires, renewed by its owner, ended by the finish, given back on release",
        arguments: StoreKind.allCases)
    func submissionClaims(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, location in
            _ = try await store.openTransaction(newTransaction("t1"))
            _ = try await store.collect(document("d1", "t1", .governmentId), at: t0)
            _ = try await store.collect(document("d2", "t1", .selfie), at: t0)
            let lease = t0.addingTimeInterval(30)
            #expect(try await store.claimSubmission(documentId: "d1", owner: "a", until: lease, at: t0) == .claimed(attempts: 0))
            // Another process, on the same store.
            try await location.withStore(create: false, encryption: kind.encryption) { other in
                #expect(
                    try await other.claimSubmission(documentId: "d1", owner: "b", until: lease, at: t0.addingTimeInterval(29))
                        == .held(until: lease, attempts: 0))
                #expect(
                    try await other.claimSubmission(documentId: "d1", owner: "b", until: t0.addingTimeInterval(60), at: t0.addingTimeInterval(30))
                        == .claimed(attempts: 0), "an expired claim is taken over")
                #expect(
                    try await store.claimSubmission(documentId: "d1", owner: "a", until: lease, at: t0.addingTimeInterval(31))
                        == .held(until: t0.addingTimeInterval(60), attempts: 0))
                _ = try await other.finishSubmission(
                    documentId: "d1", type: .governmentId, of: "t1", accepted: true, error: nil,
                    at: t0.addingTimeInterval(32))
                #expect(try await store.claimSubmission(documentId: "d1", owner: "a", until: lease, at: t0.addingTimeInterval(33)) == .accepted)

                #expect(try await store.claimSubmission(documentId: "d2", owner: "a", until: lease, at: t0) == .claimed(attempts: 0))
                #expect(
                    try await store.claimSubmission(documentId: "d2", owner: "a", until: lease, at: t0.addingTimeInterval(1))
                        == .claimed(attempts: 0),
                    "its owner renews it")
                try await store.releaseSubmission(documentId: "d2", owner: "b")
                #expect(
                    try await other.claimSubmission(documentId: "d2", owner: "b", until: lease, at: t0) == .held(until: lease, attempts: 0),
                    "only the owner can release")
                try await store.releaseSubmission(documentId: "d2", owner: "a")
                #expect(try await other.submission(documentId: "d2") == nil, "a released claim on a submission never tried leaves no row")
                #expect(try await other.claimSubmission(documentId: "d2", owner: "b", until: lease, at: t0) == .claimed(attempts: 0))
                // A failed submission ends the claim too: the document may be claimed again, and the claim counts the
                // attempt, so that a claimant that waited knows the holder finished it.
                #expect(try await store.claimSubmission(documentId: "d2", owner: "a", until: lease, at: t0) == .held(until: lease, attempts: 0))
                _ = try await other.finishSubmission(documentId: "d2", type: .selfie, of: "t1", accepted: false, error: "HTTP 400", at: t0)
                #expect(try await store.claimSubmission(documentId: "d2", owner: "a", until: lease, at: t0) == .claimed(attempts: 1))
            }
            await #expect(throws: StoreError.unknownDocument("nope")) {
                _ = try await store.claimSubmission(documentId: "nope", owner: "a", until: lease, at: t0)
            }
        }
    }

    @Test("eight processes opening a new SQLite file at once all open it, and migrate it once")
    func concurrentFirstOpen() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("verify-pipeline.sqlite").path
        // Threads, not tasks: each open blocks while it migrates, as separate processes would.
        let failures = Mutex<[String]>([])
        let backends = Mutex<[SQLiteBackend]>([])
        let threads = (0..<8).map { _ in
            Thread {
                do {
                    let backend = try SQLiteBackend.file(path: path, create: true, readOnly: false)
                    backends.withLock { $0.append(backend) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { try await Task.sleep(for: .milliseconds(10)) }
        // Then each records or reads the store's key and document secret, all at once.
        let secrets = try await withThrowingTaskGroup(of: String.self) { group in
            for backend in backends.withLock({ $0 }) {
                group.addTask { try await TransactionStore(backend: backend, encryption: .ifEncrypted(nil)).documentIdentity().stored }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(secrets.count == 1, "every process names documents with the one secret recorded")
        #expect(failures.withLock { $0 } == [])
        let applied = try await DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        #expect(applied == SQLiteSchema.migrations.map(\.identifier))
    }

    @Test("a QR naming a known transaction with another verification code is refused, remembered or not", arguments: StoreKind.allCases)
    func verificationCodeMismatch(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, location in
            _ = try await store.openTransaction(newTransaction("t1"))
            var forged = newTransaction("t1")
            forged.verificationCode = "000000"
            let other = forged
            await #expect(throws: StoreError.verificationCodeMismatch("t1")) { _ = try await store.openTransaction(other) }
            // Another process, which has never seen t1, reads it from the store and refuses the same.
            try await location.withStore(create: false, encryption: kind.encryption) { fresh in
                await #expect(throws: StoreError.verificationCodeMismatch("t1")) { _ = try await fresh.openTransaction(other) }
                let reopened = try await fresh.openTransaction(newTransaction("t1"))
                #expect(reopened.verificationCode == "417203")
            }
            #expect(StoreError.verificationCodeMismatch("t1").failureCode == .document(.initiateDocumentTransactionError))
            #expect(
                !StoreError.verificationCodeMismatch("t1").message.contains("000000")
                    && !StoreError.verificationCodeMismatch("t1").message.contains("417203"))
        }
    }

    @Test("a submission's end moves only its own document, of its own type", arguments: StoreKind.allCases)
    func submissionOwnership(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            _ = try await store.collect(document("d1", "t1", .governmentId), at: t0)
            let current = try await store.collect(document("d2", "t1", .selfie), at: t0)
            guard case .collected(let before, _, _) = current else {
                Issue.record("d2 was not collected")
                return
            }
            // The model allows SELFIE COLLECTED -> PROCESSED on the state the store remembers: the write's own check
            // refuses d1, which is the GOVERNMENT_ID.
            await #expect(throws: StoreError.unknownDocument("d1")) {
                _ = try await store.finishSubmission(documentId: "d1", type: .selfie, of: "t1", accepted: true, error: nil, at: t0)
            }
            _ = try await store.openTransaction(newTransaction("t2"))
            await #expect(throws: StoreError.unknownDocument("d1")) {
                _ = try await store.finishSubmission(documentId: "d1", type: .governmentId, of: "t2", accepted: true, error: nil, at: t0)
            }
            let after = try #require(try await store.transaction(id: "t1"))
            #expect(after.state.documents == [.governmentId: .collected, .selfie: .collected] && after.version == before.version)
            #expect(try await store.submission(documentId: "d1") == nil)
        }
    }

    @Test("what a store remembers of a transaction another process moved on is decided again on a read", arguments: StoreKind.allCases)
    func staleMemory(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, location in
            _ = try await store.openTransaction(newTransaction("t1"))
            _ = try await store.openTransaction(newTransaction("t2"))
            try await location.withStore(create: false, encryption: kind.encryption) { other in
                _ = try await other.collect(document("d1", "t1", .governmentId), at: t0)
                _ = try await other.collect(document("d2", "t1", .selfie), at: t0)
                _ = try await other.collect(document("d3", "t2", .governmentId), at: t0)
            }
            // What is shown or sent may come from memory, without the other process's change; decisions never do.
            #expect(try await store.latestKnown(id: "t1")?.state.documents[.governmentId] == .required)
            #expect(try await store.transaction(id: "t1")?.state.documents[.governmentId] == .collected)
            // On the remembered t1 nothing is collected, and the model refuses the move: decided again on a read.
            let (processed, _, _) = try await store.finishSubmission(
                documentId: "d1", type: .governmentId, of: "t1", accepted: true,
                error: nil, at: t0)
            #expect(processed.state.documents == [.governmentId: .processed, .selfie: .collected])
            // On the remembered t2 the model allows the move; the version check refuses the write, which is decided
            // again on a read: the other process's GOVERNMENT_ID stays collected.
            let (t2, _) = try await store.apply(.collect, to: .selfie, of: "t2", reason: "test", at: t0)
            #expect(t2.state.documents == [.governmentId: .collected, .selfie: .collected] && t2.state.submissionStatus == .process)
            #expect(try await store.transaction(id: "t2") == t2)
            try await location.withStore(create: false, encryption: kind.encryption) { other in
                _ = try await other.finishSubmission(documentId: "d2", type: .selfie, of: "t1", accepted: true, error: nil, at: t0)
            }
            // The remembered t1 has nothing left to skip; that is confirmed on a read, which finds it COMPLETED.
            let ended = try #require(try await store.endInput(of: "t1", reason: "test", at: t0))
            #expect(ended.0.state.submissionStatus == .completed && ended.1.isEmpty)
            #expect(try await store.latestKnown(id: "t1")?.state.submissionStatus == .completed, "the read is remembered")
            #expect(try await store.latestKnown(id: "nope") == nil)
        }
    }

    /// Stands in for the Protect module's state: the store keeps any Codable value, dates included.
    struct SampleState: Codable, Sendable, Equatable {
        var text: String
        var at: Date?
    }

    @Test("signals are set once; Protect's state is kept per transaction and updated in turn", arguments: StoreKind.allCases)
    func signalsAndProtectState(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            // newTransaction sets signals already: a second value does not replace it.
            #expect(try await store.setSignals("other", of: "t1") == "signals-t1")
            #expect(try await store.protectState(of: "t1", as: SampleState.self) == nil)
            #expect(
                try await store.updateProtectState(of: "t1", as: SampleState.self) { _ in SampleState(text: "a", at: t0) }
                    == SampleState(text: "a", at: t0))
            // Concurrent updates read and write in turn: none is lost.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        _ = try await store.updateProtectState(of: "t1", as: SampleState.self) { current in
                            SampleState(text: (current?.text ?? "") + "b", at: current?.at)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(
                try await store.protectState(of: "t1", as: SampleState.self) == SampleState(text: "a" + String(repeating: "b", count: 20), at: t0))
            await #expect(throws: StoreError.unknownTransaction("nope")) {
                _ = try await store.updateProtectState(of: "nope", as: SampleState.self) { _ in SampleState(text: "x") }
            }
        }
    }

    @Test("the file is created readable by its owner only")
    func fileMode() async throws {
        let temp = try await TemporaryStore()
        let attributes = try FileManager.default.attributesOfItem(atPath: temp.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("a store created through a symlink to a file not there yet is its owner's only, -wal and -shm too, from the start")
    func fileModeThroughDanglingSymlink() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-link-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("data/verify-pipeline.sqlite").path
        try FileManager.default.createDirectory(atPath: folder.appendingPathComponent("data").path, withIntermediateDirectories: true)
        let link = folder.appendingPathComponent("verify-pipeline.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let store = try await TransactionStore.sqlite(path: link)
        _ = try await store.openTransaction(newTransaction("t1"))
        // The store is open and has written: its -wal and -shm exist beside the file the link names.
        for file in [target, target + "-wal", target + "-shm"] {
            var status = stat()
            try #require(stat(file, &status) == 0, "\(file) exists")
            #expect(status.st_mode & 0o777 == 0o600, "\(file): \(String(status.st_mode & 0o777, radix: 8))")
        }
        var linkStatus = stat()
        #expect(lstat(link, &linkStatus) == 0 && linkStatus.st_mode & S_IFMT == S_IFLNK, "the link is left a link")
    }

    @Test("listing filters by status and counts documents", arguments: StoreKind.allCases)
    func listing(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            _ = try await store.openTransaction(newTransaction("t1"))
            _ = try await store.openTransaction(newTransaction("t2"))
            _ = try await store.collect(document("d1", "t2", .governmentId), at: t0.addingTimeInterval(1))
            #expect(try await store.transactions(status: nil).map(\.id) == ["t2", "t1"])
            #expect(try await store.transactions(status: .process).map(\.id) == ["t2"])
            #expect(try await store.transactions(status: .notStarted).first?.documents == [.governmentId: .required, .selfie: .optional])
            #expect(try await store.count(of: ["t1", "t2", "unknown"], status: .process) == 1)
            #expect(try await store.count(of: ["t1", "t2"], status: .notStarted) == 1)
            #expect(try await store.count(of: [], status: .process) == 0)
        }
    }

    @Test("counting by status reads any number of ids", arguments: StoreKind.allCases)
    func countingManyIds(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            for index in 0..<1_200 where index % 3 == 0 { _ = try await store.openTransaction(newTransaction("t\(index)")) }
            #expect(try await store.count(of: (0..<1_200).map { "t\($0)" }, status: .notStarted) == 400)
        }
    }

    @Test("a store of a newer version is refused; a missing one is not created by readers", arguments: StoreKind.allCases)
    func newerAndMissing(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        await #expect(throws: StoreError.self) { try await location.withStore(create: false, encryption: kind.encryption) { _ in } }
        try await location.withStore(create: true, encryption: kind.encryption) { _ in }
        switch location {
        case .sqlite(let path):
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        case .postgres(let server):
            try await server.withClient(logger: .init(label: "test")) { client in
                try await client.query("INSERT INTO schema_migrations (identifier) VALUES ('v99-from-the-future')")
            }
        }
        await #expect(throws: StoreError.newerSchema(location.description.replacingOccurrences(of: "sqlite:", with: ""))) {
            try await location.withStore(create: true, encryption: kind.encryption) { _ in }
        }
    }

    @Test("a store written by a newer version is refused, and so is a file that is not a store")
    func openingErrors() async throws {
        let temp = try await TemporaryStore()
        let queue = try DatabaseQueue(path: temp.path)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')") }
        await #expect(throws: StoreError.newerSchema(temp.path)) { _ = try await TransactionStore.sqlite(path: temp.path) }

        let bogus = temp.folder.appendingPathComponent("not-a-store.sqlite").path
        try Data("this is not SQLite".utf8).write(to: URL(fileURLWithPath: bogus))
        await #expect { _ = try await TransactionStore.sqlite(path: bogus) } throws: { error in
            (error as? StoreError)?.code == .unreadable
        }
        await #expect(throws: StoreError.cannotOpen("no store at /no/such/store.sqlite")) {
            _ = try await TransactionStore.sqlite(path: "/no/such/store.sqlite", create: false)
        }
    }

    @Test("schema invariants reject bad rows even from outside the store's code")
    func schemaInvariants() async throws {
        let temp = try await TemporaryStore()
        _ = try await temp.store.openTransaction(newTransaction("t1"))
        let queue = try DatabaseQueue(path: temp.path)
        for sql in [
            "UPDATE transactions SET submissionStatus = 'DONE' WHERE id = 't1'",
            "UPDATE documentStatuses SET status = 'LOST' WHERE transactionId = 't1'",
            "INSERT INTO documents VALUES ('d9', 'nope', 'SELFIE', '{}', 's', 'h', '2026-01-01')",
            "INSERT INTO transitions (transactionId, documentType, fromStatus, toStatus, at, reason) VALUES ('t1', NULL, 'REQUIRED', 'COLLECTED', '2026-01-01', 'x')",
            "INSERT INTO submissions VALUES ('missing-document', 1, 'ACCEPTED', NULL, '2026-01-01')"
        ] {
            #expect(throws: DatabaseError.self, "\(sql)") { try queue.write { db in try db.execute(sql: sql) } }
        }
    }
}

@Suite("The dashboard's throughput, by minute (SQLite and PostgreSQL)")
struct ThroughputTests {
    @Test("documents collected a minute, oldest first, in whole UTC minutes", arguments: StoreKind.allCases)
    func collectedPerMinute(_ kind: StoreKind) async throws {
        try await kind.withFreshStore { store, _ in
            for id in ["t1", "t2", "t3"] { _ = try await store.openTransaction(newTransaction(id)) }
            // t0 is a whole minute: three documents in its minute, one two minutes later.
            _ = try await store.collect(document("d1", "t1", .governmentId), at: t0.addingTimeInterval(10))
            _ = try await store.collect(document("d2", "t2", .governmentId), at: t0.addingTimeInterval(20))
            _ = try await store.collect(document("d3", "t3", .governmentId), at: t0.addingTimeInterval(59.9))
            _ = try await store.collect(document("d4", "t1", .selfie), at: t0.addingTimeInterval(130))
            #expect(try await store.collectedPerMinute(minutes: 4, until: t0.addingTimeInterval(150)) == [0, 3, 0, 1])
            #expect(try await store.collectedPerMinute(minutes: 2, until: t0.addingTimeInterval(150)) == [0, 1])
            #expect(try await store.collectedPerMinute(minutes: 3, until: t0.addingTimeInterval(60)) == [0, 3, 0])
        }
    }
}
