// Writes transactions and status transitions to a store as fast as it can, printing a line after each
// committed write, until it is killed. The store crash test kills it with SIGKILL mid-burst.
// Usage: store-burst STORE_URL   (sqlite:PATH or postgres://...)
import Foundation
import TransactionStore
import VerifyModel

/// Unbuffered, so the parent sees each line as soon as its write has committed.
func report(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let location = try StoreLocation(parsing: CommandLine.arguments[1])
try await location.withStore(create: true) { store in
    let policy: [DocumentType: DocumentRequirement] = [.governmentId: .required, .selfie: .optional, .email: .optional]
    let start = Date(timeIntervalSince1970: 1_795_305_600)
    for index in 0... {
        let id = "burst-\(index)"
        let time = start.addingTimeInterval(Double(index))
        _ = try await store.openTransaction(
            NewTransaction(
                id: id, verificationCode: "c\(index)", policy: policy, createdAt: time,
                expiresAt: time.addingTimeInterval(86_400)))
        for type in [DocumentType.governmentId, .selfie] {
            let document = DocumentRecord(
                id: "\(id)-\(type.rawValue)", transactionId: id, type: type,
                fields: DocumentFields([.documentNumber: "N\(index)"]), source: "burst",
                contentHash: "h\(index)", createdAt: time)
            _ = try await store.collect(document, at: time)
            report("collected \(id) \(type.rawValue)")
        }
        for type in [DocumentType.governmentId, .selfie] {
            _ = try await store.apply(.process, to: type, of: id, reason: "accepted", at: time)
            report("processed \(id) \(type.rawValue)")
        }
        _ = try await store.apply(.skip, to: .email, of: id, reason: "end of input", at: time)
        report("completed \(id)")
    }
}
