import DocumentOutcomes
import Foundation
import Logging
import Protect
import TransactionStore
import VerifyModel
import WorkQueues

/// The end of a transaction's input (CONTRACT §1): its missing optional documents become SKIPPED. A batch folder's
/// transaction folders end with their last reported document, its loose images with the batch, and a work
/// queue's groups with the item the queue makes for their end.
struct InputEnds: Sendable {
    let store: TransactionStore
    let signals: SignalsCollector
    let logger: Logger
    let now: @Sendable () -> Date

    /// Returns false when a transaction's missing documents could not be skipped (each logged).
    @discardableResult
    func skipMissingOptionalDocuments(_ ids: [String], reason: String) async -> Bool {
        var succeeded = true
        for id in ids {
            do {
                guard let (updated, transitions) = try await store.endInput(of: id, reason: reason, at: now()) else { continue }
                if !transitions.isEmpty { await signals.statusChanged(updated) }
            } catch {
                succeeded = false
                logger.warning(
                    "could not skip the missing optional documents of a transaction",
                    metadata: ["transaction.id": "\(id)", "error.code": "\(FailureCode(of: error))"])
            }
        }
        return succeeded
    }

    /// The end of a transaction folder (or of a batch's loose images) taken from the queue. On failure the item
    /// goes back to the queue, for this worker or another to try again.
    func endGroup(_ item: WorkItem, queueInput: QueueInput) async {
        let group = item.group ?? FolderIngest.looseImagesGroup  // never nil for a group end (the schema's CHECK)
        let queue = queueInput.queue
        var ended = false
        do throws {
            let ids = try await queue.transactions(ofGroup: group, batch: item.batch)
            let reason = group == FolderIngest.looseImagesGroup ? "end of batch" : "end of \(group)"
            ended = await skipMissingOptionalDocuments(ids, reason: reason)
        } catch {
            logger.warning("could not end a group of the queue", metadata: ["queue.item": "\(item.id)", "error.code": "\(FailureCode(of: error))"])
        }
        if ended {
            await queueInput.end(item.id, logger: logger) { () throws in
                try await queue.complete(item.id, transactionId: nil, result: "{}")
            }
        } else {
            await queueInput.end(item.id, logger: logger) { () throws in try await queue.release(item.id, owner: queueInput.owner) }
        }
    }
}

/// The transaction folders of a batch run: when a folder's last document has been reported, its transactions'
/// input has ended, so their missing optional documents are skipped then rather than at the end of the whole
/// batch. The batch folder's loose images end with the batch.
struct FolderEnds {
    private var open: [String: Int] = [:]
    private var transactions: [String: Set<String>] = [:]

    /// Notes a transaction folder's documents, before any of them can be reported.
    mutating func expect(_ jobs: [Result<DocumentJob, IngestFailure>]) {
        for case .success(let job) in jobs {
            guard let folder = job.inputGroup, folder != FolderIngest.looseImagesGroup else { continue }
            open[folder, default: 0] += 1
        }
    }

    /// Notes a reported document; when it was its folder's last, returns the folder and its transactions.
    mutating func reported(_ input: DocumentInput, transactionId: String?) -> (folder: String, transactions: [String])? {
        guard let folder = input.group, let remaining = open[folder] else { return nil }
        if let transactionId { transactions[folder, default: []].insert(transactionId) }
        guard remaining == 1 else {
            open[folder] = remaining - 1
            return nil
        }
        open[folder] = nil
        return (folder, (transactions.removeValue(forKey: folder) ?? []).sorted())
    }
}
