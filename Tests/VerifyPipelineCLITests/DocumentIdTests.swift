import Crypto
import Foundation
import GRDB
import PostgresTestSupport
import Testing
import VerifyModel

@testable import TransactionStore

/// The id and content hash earlier versions gave a document: plain SHA-256 of the document's type, images and fields,
/// which anyone can recompute from guessed content (an email, a phone number). Written out here as it shipped, from
/// what a result line shows (these documents hold no images).
func unkeyedForms(transactionId: String, type: String, document: [String: String]) -> [String] {
    var hash = SHA256()
    hash.update(data: Data(type.utf8))
    for key in document.keys.sorted() {
        hash.update(data: Data("\(key)=\(document[key] ?? "")\n".utf8))
    }
    let digest = hash.finalize().map { String(format: "%02x", $0) }.joined()
    let id = SHA256.hash(data: Data("\(transactionId)\n\(digest)".utf8)).map { String(format: "%02x", $0) }.joined().prefix(32)
    return ["doc-" + id, String(id), "sha256:" + digest, digest]
}

@Suite("Document ids: random, recognised by a fingerprint keyed with the store's secret", .serialized)
struct DocumentIdTests {
    static let policy = "policy:\n  documents: {EMAIL: REQUIRED, PHONE: REQUIRED, GOVERNMENT_ID: DISABLED, SELFIE: DISABLED}\n"

    @Test(
        "the unkeyed id and content hash of a document are nowhere in the store, the results, status or the API; ids are stable on one store and differ between stores (random)",
        arguments: SampleStore.allCases)
    func keyed(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("document-ids")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<6).map { "ids-\($0)" })
        let pipeline = try pipelineFile(folder, Self.policy)
        let store = try await kind.fresh(folder, "a")
        let arguments = ["run", batch.path, "--pipeline", pipeline, "--omit-images"]

        let first = try await CLIRunner.run(arguments + ["--store", store])
        #expect(first.status == 0, "\(first.stderr)")
        let lines = try resultLines(first.stdout)
        #expect(lines.count == 12 && lines.allSatisfy { $0.error == nil && $0.documentId?.hasPrefix("doc-") == true })
        var unkeyed: [String] = []
        for line in lines {
            let document = try #require(line.document)
            #expect(document["email"]?.hasSuffix("@example.com") == true || document["phone"] != nil)
            unkeyed += unkeyedForms(transactionId: try #require(line.transactionId), type: try #require(line.documentType), document: document)
        }
        #expect(unkeyed.count == 48)

        var shown = first.stdout + first.stderr
        shown += try await InProcess.statuses(store, Set(lines.compactMap(\.transactionId))).joined()
        let serve = try await ServeProcess(["--store", store])
        for id in Set(lines.compactMap(\.transactionId)) {
            let answer = try await serve.get("/api/transactions/\(id)")
            #expect(answer.status == 200)
            shown += answer.body
            shown += try await serve.get("/transactions/\(id)").body
        }
        #expect(await serve.stop())
        for id in lines.compactMap(\.documentId) { #expect(shown.contains(id)) }
        let bytes = try await storeBytes(store)
        for form in unkeyed {
            #expect(!shown.contains(form), "an unkeyed form is shown")
            #expect(bytes.range(of: Data(form.utf8)) == nil, "an unkeyed form is in the store's bytes")
        }

        // The same input on the same store: the same ids, already submitted, each sent once.
        let again = try resultLines(try await CLIRunner.run(arguments + ["--store", store]).stdout)
        #expect(Set(again.compactMap(\.documentId)) == Set(lines.compactMap(\.documentId)))
        #expect(again.allSatisfy { $0.alreadySubmitted == true })
        // Another store names the same documents otherwise.
        let other = try await kind.fresh(folder, "b")
        let elsewhere = try resultLines(try await CLIRunner.run(arguments + ["--store", other]).stdout)
        #expect(elsewhere.count == 12)
        #expect(Set(elsewhere.compactMap(\.documentId)).isDisjoint(with: Set(lines.compactMap(\.documentId))))
    }

    @Test(
        "a store an earlier version wrote (unkeyed ids) is renamed when it opens: a re-run submits nothing twice and the old ids are gone",
        arguments: SampleStore.allCases)
    func earlierStore(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("document-ids-earlier")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<5).map { "old-\($0)" })
        // In clear, so that the earlier version's rows can be written here with SQL alone.
        let pipeline = try pipelineFile(folder, Self.policy + "store:\n  encryption: {enabled: false}\n")
        let store = try await kind.fresh(folder, "s")
        let arguments = ["run", batch.path, "--store", store, "--pipeline", pipeline, "--omit-images"]
        let first = try resultLines(try await CLIRunner.run(arguments).stdout)
        #expect(first.count == 10 && first.allSatisfy { $0.error == nil })

        // The rows as the earlier version left them: its ids and hashes, in the submissions and history too, and no
        // secret.
        var statements: [String] = []
        var earlierIds: [String] = []
        let postgres = kind == .postgres
        for line in first {
            let forms = unkeyedForms(
                transactionId: try #require(line.transactionId), type: try #require(line.documentType),
                document: try #require(line.document))
            let id = try #require(line.documentId)
            earlierIds.append(forms[0])
            if postgres {
                // Submissions follow the id (ON UPDATE CASCADE).
                statements.append("UPDATE documents SET id = '\(forms[0])', content_hash = '\(forms[2])' WHERE id = '\(id)'")
            } else {
                statements.append("UPDATE documents SET id = '\(forms[0])', contentHash = '\(forms[2])' WHERE id = '\(id)'")
                statements.append("UPDATE submissions SET documentId = '\(forms[0])' WHERE documentId = '\(id)'")
            }
            statements.append("UPDATE transitions SET reason = replace(reason, '\(id)', '\(forms[0])')")
        }
        statements.append(postgres ? "DELETE FROM document_identity" : "DELETE FROM documentIdentity")
        if postgres {
            try await TestPostgres.execute(store, statements)
        } else {
            let queue = try DatabaseQueue(path: String(store.dropFirst("sqlite:".count)))
            let earlier = statements
            try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA foreign_keys = OFF")
                try db.inTransaction {
                    for statement in earlier { try db.execute(sql: statement) }
                    return .commit
                }
            }
        }
        let before = try await storeBytes(store)
        #expect(earlierIds.allSatisfy { before.range(of: Data($0.utf8)) != nil })

        let rerun = try await CLIRunner.run(arguments)
        let second = try resultLines(rerun.stdout)
        #expect(second.count == 10)
        #expect(second.allSatisfy { $0.error == nil && $0.alreadySubmitted == true }, "\(rerun.stderr)")
        // Renamed under the secret the store made on opening: ten ids, none of the earlier ones.
        #expect(Set(second.compactMap(\.documentId)).count == 10)
        #expect(Set(second.compactMap(\.documentId)).isDisjoint(with: Set(earlierIds)))
        let after = try await storeBytes(store)
        #expect(earlierIds.allSatisfy { after.range(of: Data($0.utf8)) == nil })
        let reader = try await StoreLocation(parsing: store).withStore(create: false, readOnly: true, encryption: CLIRunner.storeEncryption) {
            reader in
            var reports: [String: TransactionReport] = [:]
            for id in Set(second.compactMap(\.transactionId)) { reports[id] = try await reader.report(id: id) }
            return reports
        }
        for line in second {
            let transactionId = try #require(line.transactionId)
            let report = try #require(reader[transactionId])
            let documentId = try #require(line.documentId)
            let document = try #require(report.documents.first { $0.id == documentId }, "\(report.documents.map(\.id))")
            #expect(document.submission?.outcome == .accepted && document.submission?.attempts == 1)
            #expect(report.history.contains { $0.reason == "document \(documentId) collected" })
        }
    }

    @Test(
        "a store the previous release wrote (ids keyed from the content) gets random ids when it opens: a re-run submits nothing twice, the keyed ids are gone, digests are known again",
        arguments: SampleStore.allCases)
    func keyedStore(_ kind: SampleStore) async throws {
        let folder = try temporaryFolder("document-ids-keyed")
        defer { try? FileManager.default.removeItem(at: folder) }
        let batch = try fieldBatch(folder, transactions: (0..<5).map { "keyed-\($0)" })
        // In clear, so that the previous release's rows can be written here with SQL alone.
        let pipeline = try pipelineFile(folder, Self.policy + "store:\n  encryption: {enabled: false}\n")
        let store = try await kind.fresh(folder, "k")
        let arguments = ["run", batch.path, "--store", store, "--pipeline", pipeline, "--omit-images"]
        let first = try resultLines(try await CLIRunner.run(arguments).stdout)
        #expect(first.count == 10 && first.allSatisfy { $0.error == nil })
        let secret = try await IdempotencyKeyTests.secret(of: store)

        // The rows as the previous release left them: ids HMAC-SHA256 of the transaction and the digest under the
        // store's secret (its content hashes were the fingerprints of now), no digest kept.
        let postgres = kind == .postgres
        var statements: [String] = [], keyedIds: [String] = []
        for line in first {
            let transactionId = try #require(line.transactionId), id = try #require(line.documentId)
            let digest = unkeyedForms(transactionId: transactionId, type: try #require(line.documentType), document: try #require(line.document))[3]
            let keyed =
                "doc-"
                + Data(HMAC<SHA256>.authenticationCode(for: Data("id\n\(transactionId)\n\(digest)".utf8), using: secret.key)).hexString.prefix(32)
            keyedIds.append(keyed)
            if postgres {
                statements.append("UPDATE documents SET id = '\(keyed)', content_digest = NULL WHERE id = '\(id)'")
            } else {
                statements.append("UPDATE documents SET id = '\(keyed)', contentDigest = NULL WHERE id = '\(id)'")
                statements.append("UPDATE submissions SET documentId = '\(keyed)' WHERE documentId = '\(id)'")
            }
            statements.append("UPDATE transitions SET reason = replace(reason, '\(id)', '\(keyed)')")
        }
        statements.append(postgres ? "UPDATE document_identity SET random_ids = false" : "UPDATE documentIdentity SET randomIds = 0")
        if postgres {
            try await TestPostgres.execute(store, statements)
        } else {
            let queue = try DatabaseQueue(path: String(store.dropFirst("sqlite:".count)))
            let earlier = statements
            try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA foreign_keys = OFF")
                try db.inTransaction {
                    for statement in earlier { try db.execute(sql: statement) }
                    return .commit
                }
            }
        }
        #expect(keyedIds.allSatisfy { id in first.allSatisfy { $0.documentId != id } })
        let before = try await storeBytes(store)
        #expect(keyedIds.allSatisfy { before.range(of: Data($0.utf8)) != nil })

        let rerun = try await CLIRunner.run(arguments)
        let second = try resultLines(rerun.stdout)
        #expect(second.count == 10 && second.allSatisfy { $0.error == nil && $0.alreadySubmitted == true }, "\(rerun.stderr)")
        let renamed = Set(second.compactMap(\.documentId))
        #expect(renamed.count == 10 && renamed.isDisjoint(with: Set(keyedIds)))
        let after = try await storeBytes(store)
        #expect(keyedIds.allSatisfy { after.range(of: Data($0.utf8)) == nil }, "the keyed ids leave the store's bytes")
        // Documents without images: their digests are known again, so a key rotation can fingerprint them anew.
        let withoutDigest =
            postgres
            ? try await TestPostgres.text(store, "SELECT count(*)::text FROM documents WHERE content_digest IS NULL")
            : try await DatabaseQueue(path: String(store.dropFirst("sqlite:".count))).read { db in
                try String.fetchOne(db, sql: "SELECT CAST(count(*) AS TEXT) FROM documents WHERE contentDigest IS NULL")
            }
        #expect(withoutDigest == "0")
    }
}
