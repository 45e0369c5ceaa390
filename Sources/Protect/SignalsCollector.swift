import Foundation
import Logging
import TransactionStore
import VerifyModel

/// Collects Protect signals for the transactions of a run (CONTRACT §5): one payload per transaction, made
/// when the transaction starts (or when first needed, with `isLazyMetadata`), stored with it, and sent
/// unchanged with each of its submissions; behavioural data kept per transaction in the store.
///
/// Pausing follows the SDK: with `pauseBehavioralDataOnSuccess`, collection pauses when a transaction
/// completes (and that transaction's record is frozen); with `resumeBehavioralDataOnStart`, it resumes
/// when a new transaction starts.
package actor SignalsCollector {
    package let configuration: ProtectConfiguration
    let store: TransactionStore
    let channel: String
    let logger: Logger
    private var paused = false
    private var started: Set<String> = []

    package init(configuration: ProtectConfiguration, store: TransactionStore, channel: String, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.channel = channel
        self.logger = logger
    }

    var collectsBehavior: Bool { configuration.enabled && configuration.isBehavioralDataCollection }

    /// A document of the transaction was collected. The first one starts the transaction: resume, and
    /// make the payload now unless metadata is lazy.
    package func documentArrived(_ transaction: StoredTransaction, capture: CaptureInfo, at time: Date) async {
        guard configuration.enabled else { return }
        if started.insert(transaction.id).inserted, configuration.resumeBehavioralDataOnStart { paused = false }
        await updateBehavior(transaction.id) { $0.arrival(at: time) }
        if !configuration.isLazyMetadata { _ = await payload(for: transaction, capture: capture, at: time) }
    }

    package func retried(_ transactionId: String, times: Int) async {
        guard times > 0 else { return }
        await updateBehavior(transactionId) { $0.retries += times }
    }

    package func decodeFailed(_ transactionId: String) async {
        await updateBehavior(transactionId) { $0.failedDecodes += 1 }
    }

    /// The transaction may have completed: pause when configured to.
    package func statusChanged(_ transaction: StoredTransaction) async {
        guard collectsBehavior, configuration.pauseBehavioralDataOnSuccess,
            transaction.state.submissionStatus == .completed
        else { return }
        await updateBehavior(transaction.id) { $0.paused = true }
        paused = true
        if configuration.isConsoleLogEnabled {
            logger.debug("protect: behavioural data paused on success", metadata: ["transaction.id": "\(transaction.id)"])
        }
    }

    /// The transaction's payload: the stored one, or a new one made now and stored (the first stored wins).
    /// nil when Protect is disabled.
    package func payload(for transaction: StoredTransaction, capture: CaptureInfo, at time: Date) async -> String? {
        guard configuration.enabled, let envId = configuration.envId else { return nil }
        if let signals = transaction.signals { return signals }
        let current: StoredTransaction?, state: ProtectState?
        do {
            current = try await store.transaction(id: transaction.id)
            state = collectsBehavior ? try await store.protectState(of: transaction.id, as: ProtectState.self) : nil
        } catch {
            logger.warning(
                "protect: could not read the transaction",
                metadata: ["transaction.id": "\(transaction.id)", "error.code": "\(FailureCode(of: error))"])
            return nil
        }
        if let stored = current?.signals { return stored }
        let behavior = state?.behavior
        let device = DeviceAttributes.collect(
            channel: channel, capture: capture,
            ignoring: Set(configuration.deviceAttributesToIgnore))
        let data = SignalsPayload(envId: envId, createdAt: time, device: device, behavior: behavior).data
        let stored: String
        do {
            stored = try await store.setSignals(data, of: transaction.id)
        } catch {
            logger.warning(
                "protect: could not store the signals payload",
                metadata: ["transaction.id": "\(transaction.id)", "error.code": "\(FailureCode(of: error))"])
            return nil
        }
        if configuration.isConsoleLogEnabled {
            logger.debug(
                "protect: signals collected",
                metadata: [
                    "transaction.id": "\(transaction.id)", "protect.attributes": "\(device.keys.sorted().joined(separator: ","))",
                    "protect.behavior": "\(behavior != nil)"
                ])
        }
        return stored
    }

    private func updateBehavior(_ transactionId: String, _ change: @escaping @Sendable (inout BehaviorRecord) -> Void) async {
        guard collectsBehavior, !paused else { return }
        do {
            _ = try await store.updateProtectState(of: transactionId, as: ProtectState.self) { current in
                var state = current ?? ProtectState()
                var record = state.behavior ?? BehaviorRecord()
                guard !record.paused else { return current }
                change(&record)
                state.behavior = record
                return state
            }
        } catch {
            logger.warning(
                "protect: could not record behavioural data",
                metadata: ["transaction.id": "\(transactionId)", "error.code": "\(FailureCode(of: error))"])
        }
    }
}
