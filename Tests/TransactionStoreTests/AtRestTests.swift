import Foundation
import GRDB
import PostgresTestSupport
import Testing
import VerifyModel

@testable import TransactionStore

typealias SampleState = StoreTests.SampleState

/// The bytes and rows of a store as someone holding its file, its WAL or a dump of its database sees them.
struct RawStore {
    let location: StoreLocation

    /// SQLite: the file and its WAL; PostgreSQL: what pg_dump writes.
    func bytes() async throws -> Data {
        switch location {
        case .sqlite(let path):
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { data += wal }
            return data
        case .postgres:
            return try await TestPostgres.dump(location.description)
        }
    }

    func contains(_ text: String) async throws -> Bool { try await bytes().range(of: Data(text.utf8)) != nil }

    func text(_ sql: String) async throws -> String? {
        switch location {
        case .sqlite(let path): try await DatabaseQueue(path: path).read { db in try String.fetchOne(db, sql: sql) }
        case .postgres: try await TestPostgres.text(location.description, sql)
        }
    }

    func execute(_ sql: String) async throws {
        switch location {
        case .sqlite(let path): try await DatabaseQueue(path: path).write { db in try db.execute(sql: sql) }
        case .postgres: try await TestPostgres.execute(location.description, [sql])
        }
    }

    /// Column names differ between the two stores' schemas.
    func column(_ sqlite: String, _ postgres: String) -> String {
        if case .sqlite = location { sqlite } else { postgres }
    }
}

/// Identity values no other test writes, so finding one in the bytes can only mean this store holds it.
func identity(_ n: Int) -> (name: String, birth: String, number: String, code: String, signals: String) {
    ("KOWALCZYK\(n)QXZ", "1961-0\(n % 9 + 1)-1\(n % 10)", "X4R7Q\(n)ZZ", "vcode-\(n)-QXZ", "signals-\(n)-QXZ")
}

/// A transaction with one government id, its Protect payload and state; COMPLETED when `complete`.
func fill(_ store: TransactionStore, _ n: Int, createdAt: Date = t0, lifetime: TimeInterval = 1800, complete: Bool = true) async throws {
    let values = identity(n)
    let id = "txn-\(n)"
    _ = try await store.openTransaction(
        NewTransaction(
            id: id, verificationCode: values.code, envId: "env", policy: [.governmentId: .required],
            createdAt: createdAt, expiresAt: createdAt.addingTimeInterval(lifetime), signals: values.signals))
    _ = try await store.updateProtectState(of: id, as: SampleState.self) { _ in SampleState(text: "behaviour-\(n)-QXZ", at: createdAt) }
    guard complete else { return }
    let fields = DocumentFields([.lastName: values.name, .dateOfBirth: values.birth, .documentNumber: values.number])
    _ = try await store.collect(
        DocumentRecord(
            id: "doc-\(n)", transactionId: id, type: .governmentId, fields: fields, source: "front-\(n).jpg",
            contentHash: "sha256:\(n)", createdAt: createdAt), at: createdAt)
    _ = try await store.finishSubmission(documentId: "doc-\(n)", type: .governmentId, of: id, accepted: true, error: nil, at: createdAt)
}

func values(_ n: Int) -> [String] {
    let values = identity(n)
    return [values.name, values.birth, values.number, values.code, values.signals, "behaviour-\(n)-QXZ"]
}

@Suite("Identity data at rest: sealing, keys, retention")
struct AtRestTests {
    @Test(
        "an encrypted store's bytes (file and WAL, or pg_dump) hold no identity value; the same writes in clear do",
        arguments: [StoreKind.sqlite, .postgres])
    func sealedBytes(_ kind: StoreKind) async throws {
        for sealed in [false, true] {
            let location = try await kind.freshLocation()
            try await location.withStore(create: true, encryption: sealed ? .required(testKey) : .ifEncrypted(nil)) { store in
                for n in 1...3 { try await fill(store, n) }
                // What was written reads back whole.
                let document = try #require(try await store.document(id: "doc-2"))
                #expect(document.fields[.lastName] == identity(2).name)
                #expect(try await store.transaction(id: "txn-2")?.verificationCode == identity(2).code)
                #expect(try await store.transaction(id: "txn-2")?.signals == identity(2).signals)
                #expect(try await store.protectState(of: "txn-2", as: SampleState.self)?.text == "behaviour-2-QXZ")
                #expect(try await store.report(id: "txn-2")?.data == (sealed ? .sealed : .present))
            }
            let raw = RawStore(location: location)
            for n in 1...3 {
                for value in values(n) {
                    #expect(try await raw.contains(value) == !sealed, "\(value) in the \(sealed ? "encrypted" : "clear") \(kind) store")
                }
            }
            // Ids, statuses and content hashes stay readable.
            let bytes = try await raw.bytes()
            #expect(["txn-2", "COMPLETED", "sha256:2"].allSatisfy { bytes.range(of: Data($0.utf8)) != nil })
        }
    }

    @Test("a sealed value copied to another row or column, or with any one byte flipped, does not open", arguments: [StoreKind.sqlite, .postgres])
    func tampering(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        let raw = RawStore(location: location)
        try await location.withStore(create: true, encryption: .required(testKey)) { store in
            for n in 1...2 { try await fill(store, n) }
        }
        let code = raw.column("verificationCode", "verification_code")
        let transactionId = raw.column("transactionId", "transaction_id")
        try await location.withStore(create: false, encryption: .ifEncrypted(testKey)) { store in
            // Another row's fields.
            let fields1 = try #require(try await raw.text("SELECT fields FROM documents WHERE id = 'doc-1'"))
            let fields2 = try #require(try await raw.text("SELECT fields FROM documents WHERE id = 'doc-2'"))
            try await raw.execute("UPDATE documents SET fields = '\(fields1)' WHERE id = 'doc-2'")
            await #expect(throws: StoreError.tampered("documents.fields of doc-2")) { _ = try await store.document(id: "doc-2") }
            try await raw.execute("UPDATE documents SET fields = '\(fields2)' WHERE id = 'doc-2'")
            #expect(try await store.document(id: "doc-2")?.fields[.lastName] == identity(2).name)
            // Another transaction's code, and a value from another column of the same row.
            let code1 = try #require(try await raw.text("SELECT \(code) FROM transactions WHERE id = 'txn-1'"))
            let code2 = try #require(try await raw.text("SELECT \(code) FROM transactions WHERE id = 'txn-2'"))
            let signals2 = try #require(try await raw.text("SELECT signals FROM transactions WHERE id = 'txn-2'"))
            try await raw.execute("UPDATE transactions SET \(code) = '\(code1)' WHERE id = 'txn-2'")
            await #expect(throws: StoreError.tampered("transactions.verificationCode of txn-2")) { _ = try await store.transaction(id: "txn-2") }
            try await raw.execute("UPDATE transactions SET \(code) = '\(signals2)' WHERE id = 'txn-2'")
            await #expect(throws: StoreError.tampered("transactions.verificationCode of txn-2")) { _ = try await store.transaction(id: "txn-2") }
            try await raw.execute("UPDATE transactions SET \(code) = '\(code2)' WHERE id = 'txn-2'")
            // A value in clear where a sealed one belongs.
            try await raw.execute("UPDATE transactions SET signals = 'signals-2-QXZ' WHERE id = 'txn-2'")
            await #expect(throws: StoreError.tampered("transactions.signals of txn-2")) { _ = try await store.transaction(id: "txn-2") }
            try await raw.execute("UPDATE transactions SET signals = '\(signals2)' WHERE id = 'txn-2'")
            // Protect's state from another transaction.
            let state1 = try #require(
                try await raw.text(
                    "SELECT state\(raw.column("", "::text")) FROM \(raw.column("protectStates", "protect_states")) WHERE \(transactionId) = 'txn-1'"))
            try await raw.execute("UPDATE \(raw.column("protectStates", "protect_states")) SET state = '\(state1)' WHERE \(transactionId) = 'txn-2'")
            await #expect(throws: StoreError.tampered("protectStates.state of txn-2")) {
                _ = try await store.protectState(of: "txn-2", as: SampleState.self)
            }

            // Every single byte of a sealed value, flipped in turn (XOR 1 keeps it printable and quote-free).
            let bytes = Array(fields2.utf8)
            var opened = 0
            for index in bytes.indices {
                var flipped = bytes
                flipped[index] ^= 1
                try await raw.execute("UPDATE documents SET fields = '\(String(decoding: flipped, as: UTF8.self))' WHERE id = 'doc-2'")
                if (try? await store.document(id: "doc-2")) != nil { opened += 1 }
            }
            #expect(bytes.count > 100)
            #expect(opened == 0, "\(opened) of \(bytes.count) single-byte changes still opened")
            try await raw.execute("UPDATE documents SET fields = '\(fields2)' WHERE id = 'doc-2'")
            #expect(try await store.document(id: "doc-2")?.fields[.documentNumber] == identity(2).number)
        }
    }

    @Test("an encrypted store opens only with its key; a store in clear holding data is not silently mixed", arguments: [StoreKind.sqlite, .postgres])
    func keys(_ kind: StoreKind) async throws {
        let sealed = try await kind.freshLocation()
        try await sealed.withStore(create: true, encryption: .required(testKey)) { store in try await fill(store, 1) }
        let counts = try await RawStore(location: sealed).text("SELECT count(*) FROM transitions")
        for (encryption, message) in [
            (StoreEncryption.ifEncrypted(nil), "is encrypted: set VERIFY_PIPELINE_STORE_KEY"),
            (.required(otherKey), "the key in TEST_STORE_KEY does not open"),
            (.ifEncrypted(otherKey), "the key in TEST_STORE_KEY does not open")
        ] {
            let error = await #expect(throws: StoreError.self) {
                try await sealed.withStore(create: true, encryption: encryption) { store in try await fill(store, 2) }
            }
            #expect(error?.description.contains(message) == true, "\(String(describing: error))")
            #expect(error?.description.contains("\n") == false)
        }
        // Nothing was written by the refused opens.
        #expect(try await RawStore(location: sealed).text("SELECT count(*) FROM transitions") == counts)

        let clear = try await kind.freshLocation()
        try await clear.withStore(create: true) { store in try await fill(store, 3) }
        let error = await #expect(throws: StoreError.self) {
            try await clear.withStore(create: true, encryption: .required(testKey)) { _ in }
        }
        #expect(error?.description.contains("holds identity data in clear: encrypt it first with `verify-pipeline store encrypt`") == true)
    }

    @Test("store encrypt seals a store written in clear, in place; its clear bytes leave the file", arguments: [StoreKind.sqlite, .postgres])
    func encryptInPlace(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        try await location.withStore(create: true) { store in for n in 1...3 { try await fill(store, n) } }
        #expect(try await RawStore(location: location).contains(identity(2).name))
        try await location.withStore(create: false, encryption: .ifEncrypted(testKey)) { store throws in
            #expect(!store.isEncrypted)
            #expect(try await store.encrypt(with: testKey, at: t0) == 13)  // 3 codes, 3 payloads, 3 documents, 3 Protect states, the document secret
            await #expect(throws: StoreError.self) { _ = try await store.encrypt(with: testKey, at: t0) }
            #expect(try await store.document(id: "doc-2")?.fields[.lastName] == identity(2).name)
        }
        for n in 1...3 { for value in values(n) { #expect(try await !RawStore(location: location).contains(value), "\(value)") } }
        try await location.withStore(create: false, encryption: .required(testKey)) { store in
            #expect(try await store.transaction(id: "txn-3")?.verificationCode == identity(3).code)
            #expect(try await store.protectState(of: "txn-1", as: SampleState.self)?.text == "behaviour-1-QXZ")
            try await fill(store, 4)
        }
        #expect(try await !RawStore(location: location).contains(identity(4).name))
    }

    @Test(
        "rotate-key replaces the data key: the data stays, the rotating process goes on, the old key and wrapping open nothing",
        arguments: [StoreKind.sqlite, .postgres])
    func rotation(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        let raw = RawStore(location: location)
        let wrappedKey = raw.column("wrappedKey", "wrapped_key"), keys = raw.column("storeKeys", "store_keys")
        try await location.withStore(create: true, encryption: .required(testKey)) { store in
            try await fill(store, 1)
            let before = try #require(try await raw.text("SELECT \(wrappedKey) FROM \(keys)"))
            let sealedBefore = try #require(try await raw.text("SELECT fields FROM documents"))
            // On PostgreSQL the pages reach the table's file at a checkpoint: the old wrapping is there before the rotation.
            if case .postgres = location { try await TestPostgres.execute(location.description, ["CHECKPOINT"]) }
            // 1 code, 1 payload, 1 document, 1 Protect state, the document secret.
            #expect(try await store.rotateKey(to: otherKey, at: t0) == 5)
            // The rotating process holds the new data key: it writes and reads on.
            try await fill(store, 2)
            #expect(try await store.document(id: "doc-1")?.fields[.lastName] == identity(1).name)
            #expect(try await raw.text("SELECT \(wrappedKey) FROM \(keys)") != before)
            #expect(try await raw.text("SELECT fields FROM documents WHERE id = 'doc-1'") != sealedBefore, "sealed again under the new data key")
            if case .sqlite = location {
                #expect(try await !raw.contains(before), "the old wrapping is gone from the file and WAL")
                #expect(try await !raw.contains(sealedBefore), "the value under the old data key is gone from the file and WAL")
            }
            if case .postgres = location {
                // VACUUM drops a dead row version only when no transaction that could still see it runs anywhere on
                // the server: with the other suites' transactions gone, a rotation's rewrite removes the old wrapping.
                let horizon = "SELECT count(*)::text FROM pg_stat_activity WHERE backend_xmin IS NOT NULL AND pid <> pg_backend_pid()"
                for _ in 0..<600 where try await raw.text(horizon) != "0" { try await Task.sleep(for: .milliseconds(100)) }
                #expect(try await store.rotateKey(to: testKey, at: t0) == 9)
                #expect(try await store.rotateKey(to: otherKey, at: t0) == 9)
                try await TestPostgres.execute(location.description, ["CHECKPOINT"])
                // The tables' own files, as someone with the data directory reads them (the test server's role may).
                for (table, value) in [("store_keys", before), ("documents", sealedBefore)] {
                    let inHeap = try await raw.text(
                        """
                        SELECT position(convert_to('\(value)', 'UTF8') in pg_read_binary_file(pg_relation_filepath('\(table)')))::text
                        """)
                    #expect(inHeap == "0", "the old value is gone from \(table)' heap file")
                }
            }
        }
        await #expect(throws: StoreError.self) { try await location.withStore(create: false, encryption: .ifEncrypted(testKey)) { _ in } }
        try await location.withStore(create: false, encryption: .ifEncrypted(otherKey)) { store throws in
            #expect(try await store.document(id: "doc-2")?.fields[.documentNumber] == identity(2).number)
            #expect(try await store.transaction(id: "txn-1")?.verificationCode == identity(1).code)
        }
    }

    @Test(
        "after rotate-key, the old key with the old wrapping (as a backup holds them) opens no value of the store",
        arguments: [StoreKind.sqlite, .postgres])
    func retiredKeyWithItsWrapping(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        let raw = RawStore(location: location)
        let wrappedKey = raw.column("wrappedKey", "wrapped_key"), keys = raw.column("storeKeys", "store_keys")
        let retired = try await location.withStore(create: true, encryption: .required(testKey)) { store in
            try await fill(store, 1)
            let wrapping = try #require(try await raw.text("SELECT \(wrappedKey) FROM \(keys)"))
            _ = try await store.rotateKey(to: otherKey, at: t0)
            return wrapping
        }
        try await raw.execute("UPDATE \(keys) SET \(wrappedKey) = '\(retired)'")
        // The old wrapping unwraps the old data key; the first value the store opens, its document secret, is
        // sealed under the new one.
        await #expect(throws: StoreError.tampered("documentIdentity.secret of 1")) {
            try await location.withStore(create: false, encryption: .ifEncrypted(testKey)) { _ in }
        }
    }

    @Test(
        "an encrypted store an earlier version wrote is renamed on opening: fields sealed again to the new id, submission and history follow",
        arguments: [StoreKind.sqlite, .postgres])
    func renameOnOpen(_ kind: StoreKind) async throws {
        let location = try await kind.freshLocation()
        let raw = RawStore(location: location)
        // Documents as an earlier version named them: 32 hex digits of a plain SHA-256, and a `sha256:` content hash.
        let earlier = (1...2).map { n in "doc-" + String(repeating: "\(n)a", count: 16) }
        try await location.withStore(create: true, encryption: .required(testKey)) { store in
            for n in 1...2 {
                try await fill(store, n, complete: false)
                let fields = DocumentFields([.lastName: identity(n).name, .documentNumber: identity(n).number])
                _ = try await store.collect(
                    DocumentRecord(
                        id: earlier[n - 1], transactionId: "txn-\(n)", type: .governmentId, fields: fields,
                        source: "front.jpg", contentHash: "sha256:" + String(repeating: "\(n)b", count: 32),
                        createdAt: t0), at: t0)
                _ = try await store.finishSubmission(
                    documentId: earlier[n - 1], type: .governmentId, of: "txn-\(n)", accepted: true,
                    error: nil, at: t0)
            }
        }
        try await raw.execute("DELETE FROM \(raw.column("documentIdentity", "document_identity"))")
        try await location.withStore(create: false, encryption: .ifEncrypted(testKey)) { store throws in
            for n in 1...2 {
                #expect(try await store.document(id: earlier[n - 1]) == nil)
                let report = try #require(try await store.report(id: "txn-\(n)"))
                let document = try #require(report.documents.first)
                #expect(report.documents.count == 1 && document.id.hasPrefix("doc-") && document.id.count == 36 && document.id != earlier[n - 1])
                #expect(document.submission?.attempts == 1 && document.submission?.outcome == .accepted)
                #expect(report.history.map(\.reason).contains("document \(document.id) collected"))
                #expect(report.history.map(\.reason).contains("submission of \(document.id) accepted"))
                #expect(!report.history.contains { $0.reason.contains(earlier[n - 1]) })
                let record = try #require(try await store.document(id: document.id))
                #expect(record.fields[.lastName] == identity(n).name && record.contentHash.hasPrefix("hmac-sha256:"))
            }
        }
        #expect(try await raw.text("SELECT CAST(count(*) AS TEXT) FROM documents WHERE id LIKE 'doc-1a1a%' OR id LIKE 'doc-2a2a%'") == "0")
    }

    @Test("a SQLite process that opened the store before a rotation writes nothing after it: it is told to start again")
    func writerAfterRotation() async throws {
        let location = try await StoreKind.sqlite.freshLocation()
        try await location.withStore(create: true, encryption: .required(testKey)) { first in
            try await fill(first, 1)
            try await location.withStore(create: false, encryption: .ifEncrypted(testKey)) { rotating in
                _ = try await rotating.rotateKey(to: otherKey, at: t0)
            }
            let refused = StoreError.keyChangedElsewhere(wasEncrypted: true)
            await #expect(throws: refused) { try await fill(first, 2) }
            await #expect(throws: refused) { _ = try await first.document(id: "doc-1") }
        }
        try await location.withStore(create: false, encryption: .ifEncrypted(otherKey)) { store throws in
            #expect(try await store.document(id: "doc-1")?.fields[.lastName] == identity(1).name)
            #expect(try await store.transaction(id: "txn-2") == nil)
        }
    }

    /// Transactions 1–4 COMPLETED, created 10, 8, 6 and 4 days before `now`; 5 still open (STARTED-to-be, collected
    /// but not submitted) and old; 6 expired without a document; 7 COMPLETED and new.
    static func retentionStore(_ store: TransactionStore, now: Date) async throws {
        for (n, daysAgo) in [(1, 10.0), (2, 8), (3, 6), (4, 4), (7, 0.5)] {
            try await fill(store, n, createdAt: now.addingTimeInterval(-daysAgo * 86_400))
        }
        let old = now.addingTimeInterval(-20 * 86_400)
        try await fill(store, 5, createdAt: old, lifetime: 100 * 86_400, complete: false)
        let fields = DocumentFields([.lastName: identity(5).name])
        _ = try await store.collect(
            DocumentRecord(
                id: "doc-5", transactionId: "txn-5", type: .governmentId, fields: fields, source: "f",
                contentHash: "sha256:5", createdAt: old), at: old)
        try await fill(store, 6, createdAt: old, complete: false)
    }

    @Test(
        "retention age and count purge finished transactions' data and keep statuses and history; a dry run changes nothing",
        arguments: StoreKind.allCases)
    func retention(_ kind: StoreKind) async throws {
        let now = t0.addingTimeInterval(400 * 86_400)
        try await kind.withFreshStore { store, location in
            try await Self.retentionStore(store, now: now)
            let raw = RawStore(location: location)
            let ids = (1...7).map { "txn-\($0)" }
            var before: [TransactionReport] = []
            for id in ids { before.append(try #require(try await store.report(id: id))) }
            let bytesBefore = try await raw.text("SELECT count(*) FROM transitions")

            let age = Retention(mode: .age, maxAge: 5 * 86_400)
            let dry = try await store.purge(age, at: now, dryRun: true)
            #expect(dry.transactions == ["txn-6", "txn-1", "txn-2", "txn-3"])
            #expect(dry.documents == 3)
            for (id, report) in zip(ids, before) { #expect(try await store.report(id: id) == report) }
            #expect(try await raw.text("SELECT count(*) FROM transitions") == bytesBefore)

            #expect(try await store.purge(age, at: now, dryRun: false) == dry)
            for n in [1, 2, 3, 6] {
                let report = try #require(try await store.report(id: "txn-\(n)"))
                let earlier = before[n - 1]
                #expect(report.data == .purged)
                #expect(report.transaction.purgedAt == now)
                #expect(report.transaction.state == earlier.transaction.state)
                #expect(report.history.dropLast() == earlier.history[...])
                let purge = try #require(report.history.last)
                #expect(purge.reason == "identity data purged (retention age 5d)" && purge.at == now && purge.documentType == nil)
                #expect(report.documents.allSatisfy { $0.keys.isEmpty } && report.documents.map(\.id) == earlier.documents.map(\.id))
                #expect(try await store.protectState(of: "txn-\(n)", as: SampleState.self) == nil)
                // A document arriving after the purge (an undecodable image naming it) does not bring the state back.
                let revived = try await store.updateProtectState(of: "txn-\(n)", as: SampleState.self) { _ in SampleState(text: "late", at: nil) }
                #expect(revived == nil)
                #expect(try await store.protectState(of: "txn-\(n)", as: SampleState.self) == nil)
                #expect(try await store.transaction(id: "txn-\(n)")?.signals == nil)
                await #expect(throws: StoreError.purged("txn-\(n)")) {
                    _ = try await store.openTransaction(
                        NewTransaction(
                            id: "txn-\(n)", verificationCode: identity(n).code, policy: [.governmentId: .required],
                            createdAt: now, expiresAt: now.addingTimeInterval(60)))
                }
            }
            for n in [4, 5, 7] {
                #expect(try await store.report(id: "txn-\(n)")?.data == (kind.isSealed ? .sealed : .present))
                #expect(try await store.report(id: "txn-\(n)")?.documents.first?.keys.isEmpty == false)
            }
            if !kind.isSealed {
                for n in [1, 2, 3, 6] { for value in values(n) { #expect(try await !raw.contains(value), "\(value) purged, still in the bytes") } }
                for n in [4, 5, 7] { #expect(try await raw.contains(identity(n).name)) }
            }
            // Purged already: not again.
            #expect(try await store.purge(age, at: now, dryRun: false).transactions.isEmpty)

            // Keep the newest two transactions' data (7 and 6 by creation order ... of all seven: 7, 4).
            let count = Retention(mode: .count, keep: 2)
            #expect(try await store.purge(count, at: now, dryRun: true).transactions == [])
            let keepOne = Retention(mode: .count, keep: 1)
            #expect(try await store.purge(keepOne, at: now, dryRun: false).transactions == ["txn-4"])
            #expect(try await store.report(id: "txn-4")?.history.last?.reason == "identity data purged (retention count 1)")
            #expect(try await store.report(id: "txn-7")?.data != .purged)
            // The open transaction is never purged, however old.
            #expect(try await store.report(id: "txn-5")?.data != .purged)
            if !kind.isSealed { #expect(try await !raw.contains(identity(4).name)) }
        }
    }
}
