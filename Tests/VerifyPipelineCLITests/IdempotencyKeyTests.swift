import Crypto
import Foundation
import GRDB
import LoopbackServer
import PostgresTestSupport
import SeededRandom
import Testing
import VerifyModel

@testable import TransactionStore

/// The Idempotency-Key of a document's submission as CONTRACT §7 states it, written out here: the SHA-256 of the
/// transaction, the type and the revision, and nothing else.
func idempotencyKey(_ transactionId: String, _ type: String, revision: Int = 1) -> String {
    "vp1-" + SHA256.hash(data: Data("verify-pipeline submission v1\n\(transactionId)\n\(type)\n\(revision)".utf8)).hexString
}

/// Every value of every table of a store, as text: what someone holding its file (or a dump) can read row by row.
func storeCells(_ store: String) async throws -> [String] {
    switch try StoreLocation(parsing: store) {
    case .sqlite(let path):
        return try await DatabaseQueue(path: path).read { db in
            var cells: [String] = []
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                    for value in row.databaseValues { if let text = String.fromDatabaseValue(value) { cells.append(text) } }
                }
            }
            return cells
        }
    case .postgres:
        let tables =
            try await TestPostgres.text(
                store, "SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = 'public'") ?? ""
        var cells: [String] = []
        for table in tables.split(separator: ",") {
            if let rows = try await TestPostgres.text(store, "SELECT string_agg(row_to_json(t)::text, E'\\n') FROM \"\(table)\" t") {
                cells.append(rows)
            }
        }
        return cells
    }
}

/// The hexadecimal runs of 32 digits or more in `cells`, each also by its first 32 digits (an id's length): what a
/// guess's digest, HMAC or id could be compared with.
func hexRuns(_ cells: [String]) -> Set<String> {
    var runs: Set<String> = []
    for cell in cells {
        var run = ""
        for character in cell + " " {
            if character.isHexDigit, character.isASCII, !character.isUppercase {
                run.append(character)
                continue
            }
            if run.count >= 32 {
                runs.insert(run)
                runs.insert(String(run.prefix(32)))
            }
            run = ""
        }
    }
    return runs
}

@Suite("Idempotency-Keys, random ids and fingerprints: one key per document everywhere, nothing that verifies a guess", .serialized)
struct IdempotencyKeyTests {
    static let policy = "policy:\n  documents: {EMAIL: REQUIRED, PHONE: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}\n"
    /// The candidate space someone holding a store would try: 1000 phone numbers, the real ones among them.
    static let candidates = (0..<1000).map { "+1 555 \(1000 + $0)" }

    /// Ten transactions, an email and a phone each (twenty documents); phones drawn from `candidates`.
    static func batch(_ folder: URL, prefix: String, random: inout some RandomNumberGenerator) throws -> (URL, [String: String]) {
        let batch = folder.appendingPathComponent("batch-\(prefix)")
        var phones: [String: String] = [:]
        for n in 0..<10 {
            let id = "\(prefix)-\(n)"
            let transaction = batch.appendingPathComponent(id)
            try FileManager.default.createDirectory(at: transaction, withIntermediateDirectories: true)
            let url = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=\(id)&code=C\(n)"
            try Data(url.utf8).write(to: transaction.appendingPathComponent("qr.txt"))
            let phone = candidates.randomElement(using: &random)!
            phones[id] = phone
            try Data(#"{"email": "\#(id)@example.com", "phone": "\#(phone)"}"#.utf8).write(to: transaction.appendingPathComponent("fields.json"))
        }
        return (batch, phones)
    }

    /// Every form of a phone document with `phone` that earlier versions or this one could have kept or shown: the
    /// plain digest, the plain and keyed ids, the fingerprint under `secret` (hex parts).
    static func forms(transactionId: String, phone: String, secret: DocumentIdentity?) -> [String] {
        let digest = ContentDigest.of(type: .phone, images: [:], fields: DocumentFields([.phone: phone]))
        let plainId = SHA256.hash(data: Data("\(transactionId)\n\(digest)".utf8)).hexString
        var forms = [digest, String(plainId.prefix(32))]
        if let secret {
            forms.append(String(secret.fingerprint(contentDigest: digest).dropFirst("hmac-sha256:".count)))
            let keyedId = Data(HMAC<SHA256>.authenticationCode(for: Data("id\n\(transactionId)\n\(digest)".utf8), using: secret.key))
            forms.append(String(keyedId.hexString.prefix(32)))
        }
        return forms
    }

    /// The candidates whose forms are in `runs`, by transaction (a fingerprint is of the content alone: the same
    /// phone in two transactions has one).
    static func matches(_ runs: Set<String>, _ transactions: [String], secret: DocumentIdentity?) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for transaction in transactions {
            for phone in candidates where forms(transactionId: transaction, phone: phone, secret: secret).contains(where: runs.contains) {
                found[transaction, default: []].append(phone)
            }
        }
        return found
    }

    static func secret(of store: String, key: String = CLIRunner.testStoreKey) async throws -> DocumentIdentity {
        let encryption = StoreEncryption.ifEncrypted(
            try KeyEncryptionKey.from(variable: "KEY", environment: ["KEY": key]))
        return try await StoreLocation(parsing: store).withStore(create: false, readOnly: true, encryption: encryption) { store in
            try store.documentIdentity()
        }
    }

    @Test(
        "the same 20 documents into two fresh stores: the same Idempotency-Key each; after a purge no key, id or fingerprint verifies a guessed phone; after a rotation the retired key and an earlier copy open nothing written after it",
        arguments: SampleStore.allCases)
    func sameKeysNothingToGuess(_ kind: SampleStore) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let folder = try temporaryFolder("idempotency-keys")
        defer { try? FileManager.default.removeItem(at: folder) }
        var (seed, random) = try TestSeed.make()
        let replay = TestSeed.replay(seed)
        print("[idempotency keys, \(kind)] \(replay)")
        let (batch, phones) = try Self.batch(folder, prefix: "keys", random: &random)
        let submitter = "submitter: {kind: http, endpoint: \"\(server.baseURL)/v1\", timeoutSeconds: 5}\n"
        let pipeline = try pipelineFile(folder, Self.policy + submitter)
        let retention = try pipelineFile(folder, Self.policy + submitter + "retention: {mode: count, keep: 0}\n")
        let first = try await kind.fresh(folder, "first"), second = try await kind.fresh(folder, "second")

        var ids: [String: Set<String>] = [:]
        for store in [first, second] {
            let run = try await CLIRunner.run(["run", batch.path, "--store", store, "--pipeline", pipeline, "--omit-images"])
            #expect(run.status == 0, "\(run.stderr); \(replay)")
            let lines = try resultLines(run.stdout)
            #expect(lines.count == 20 && lines.allSatisfy { $0.error == nil }, "\(replay)")
            ids[store] = Set(lines.compactMap(\.documentId))
            for line in lines where line.documentType == "PHONE" {
                #expect(line.document?["phone"] == phones[line.transactionId ?? ""], "the phone is kept as written")
            }
        }
        // One key per document, the same from both stores: the second store's run is answered 409, accepted once.
        let expected = Set(phones.keys.flatMap { [idempotencyKey($0, "EMAIL"), idempotencyKey($0, "PHONE")] })
        #expect(server.keys == expected, "\(replay)")
        #expect(expected.allSatisfy { server.requests(forKey: $0) == 2 && server.acceptedCount(forKey: $0) == 1 }, "\(replay)")
        #expect(ids[first]?.count == 20 && ids[first]?.isDisjoint(with: ids[second] ?? []) == true, "document ids are random per store")

        // Before a purge the store recognises its documents: its fingerprints verify the real phones, and no other
        // candidate (the control: the search below finds what is there).
        let transactions = phones.keys.sorted()
        let firstSecret = try await Self.secret(of: first)
        let before = Self.matches(hexRuns(try await storeCells(first)), transactions, secret: firstSecret)
        #expect(Set(before.values.joined()) == Set(phones.values), "\(replay)")

        let purge = try await CLIRunner.run(["store", "purge", "--pipeline", retention, "--store", first])
        #expect(purge.status == 0, "\(purge.stderr)")
        // Whoever holds the file (or a dump), the store key and the environment: the store's secret, every cell, the
        // keys the API saw. No candidate's form is anywhere.
        let purgedSecret = try await Self.secret(of: first)
        var runs = hexRuns(try await storeCells(first))
        runs.formUnion(hexRuns(Array(server.keys)))
        #expect(Self.matches(runs, transactions, secret: purgedSecret).isEmpty, "\(replay)")
        #expect(Self.matches(runs, transactions, secret: firstSecret).isEmpty, "\(replay)")
        let bytes = try await storeBytes(first)
        for (transaction, phone) in phones {
            for form in Self.forms(transactionId: transaction, phone: phone, secret: purgedSecret) + [phone] {
                #expect(bytes.range(of: Data(form.utf8)) == nil, "a form of a purged phone is in the store's bytes; \(replay)")
            }
        }

        // The second store, copied (or its key and secret rows read, as a backup holds them), then rotated.
        let secondSecret = try await Self.secret(of: second)
        let (wrapped, sealedSecret) = try await Self.earlierCopy(second, folder)
        let newKey = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString()
        let rotate = try await CLIRunner.run(
            ["store", "rotate-key", "--new-key-env", "NEW_STORE_KEY", "--store", second], environment: ["NEW_STORE_KEY": newKey])
        #expect(rotate.status == 0, "\(rotate.stderr)")
        let (later, laterPhones) = try Self.batch(folder, prefix: "later", random: &random)
        let run = try await CLIRunner.run(
            ["run", later.path, "--store", second, "--pipeline", pipeline, "--omit-images"], environment: ["VERIFY_PIPELINE_STORE_KEY": newKey])
        #expect(run.status == 0, "\(run.stderr)")
        let laterIds = Set(try resultLines(run.stdout).compactMap(\.documentId))
        #expect(laterIds.count == 20)

        // The retired key unwraps the copy's data key, which opens the copy's secret.
        let retired = try #require(try KeyEncryptionKey.from(variable: "KEY", environment: ["KEY": CLIRunner.testStoreKey]))
        let oldDataKey = try #require(retired.unwrap(wrapped), "the retired key opens the earlier copy")
        let oldSealing = StoreSealing.sealed(oldDataKey)
        let oldSecret = try DocumentIdentity(stored: try oldSealing.open(sealedSecret, .documentIdentity, row: "1"))
        #expect(oldSecret.key == secondSecret.key)
        let newSecret = try await Self.secret(of: second, key: newKey)
        #expect(newSecret.key != oldSecret.key, "the rotation made a new document secret")
        // No sealed value of a document written after the rotation opens with the retired key.
        for (id, fields, digest) in try await Self.documentValues(second) where laterIds.contains(id) {
            #expect(throws: StoreError.self) { try oldSealing.open(fields, .documentFields, row: id) }
            let sealedDigest = try #require(digest, "a document written now keeps its digest, sealed")
            #expect(throws: StoreError.self) { try oldSealing.open(sealedDigest, .contentDigest, row: id) }
        }
        // The retired secret verifies no phone of the store as it is now, the earlier documents' included (their
        // fingerprints were made again); the new one does (the control).
        let laterTransactions = laterPhones.keys.sorted()
        let now = hexRuns(try await storeCells(second))
        #expect(Self.matches(now, laterTransactions + transactions, secret: oldSecret).isEmpty, "\(replay)")
        let verified = Self.matches(now, laterTransactions + transactions, secret: newSecret)
        #expect(Set(verified.values.joined()) == Set(laterPhones.values).union(phones.values), "\(replay)")
        // And a re-run of the first batch on the rotated store finds its documents: nothing is sent again.
        let again = try await CLIRunner.run(
            ["run", batch.path, "--store", second, "--pipeline", pipeline, "--omit-images"], environment: ["VERIFY_PIPELINE_STORE_KEY": newKey])
        #expect(try resultLines(again.stdout).allSatisfy { $0.alreadySubmitted == true }, "\(again.stderr)")
        #expect(expected.allSatisfy { server.requests(forKey: $0) == 2 }, "\(replay)")
    }

    /// What a copy of the store taken now holds for opening it: its wrapped data key and its sealed document secret
    /// (SQLite: read from a copy of the file).
    static func earlierCopy(_ store: String, _ folder: URL) async throws -> (wrapped: String, secret: String) {
        switch try StoreLocation(parsing: store) {
        case .sqlite(let path):
            let copy = folder.appendingPathComponent("copy.sqlite").path
            try await DatabaseQueue(path: path).writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            return try await DatabaseQueue(path: copy).read { db in
                (
                    try String.fetchOne(db, sql: "SELECT wrappedKey FROM storeKeys") ?? "",
                    try String.fetchOne(db, sql: "SELECT secret FROM documentIdentity") ?? ""
                )
            }
        case .postgres:
            return (
                try await TestPostgres.text(store, "SELECT wrapped_key FROM store_keys") ?? "",
                try await TestPostgres.text(store, "SELECT secret FROM document_identity") ?? ""
            )
        }
    }

    /// Each document's id, sealed fields and sealed digest as stored.
    static func documentValues(_ store: String) async throws -> [(String, String, String?)] {
        switch try StoreLocation(parsing: store) {
        case .sqlite(let path):
            return try await DatabaseQueue(path: path).read { db in
                try Row.fetchAll(db, sql: "SELECT id, fields, contentDigest FROM documents").map { ($0[0], $0[1], $0[2]) }
            }
        case .postgres:
            let rows =
                try await TestPostgres.text(
                    store, "SELECT string_agg(id || ' ' || fields || ' ' || coalesce(content_digest, ''), E'\\n') FROM documents") ?? ""
            return rows.split(separator: "\n").map { line in
                let parts = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                return (parts[0], parts[1], parts.count > 2 && !parts[2].isEmpty ? parts[2] : nil)
            }
        }
    }
}
