import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import OutboundHTTP
import TransactionStore
import VerifyModel

/// Posts one risk evaluation per transaction to `{customHost}/v1/environments/{envId}/riskEvaluations`,
/// the PingOne shape with `event.sdk.signals.data`, and returns the answer (JSON) to store with it.
package struct RiskEvaluator: Sendable {
    let client: HTTPClient
    let host: URL
    let envId: String
    let timeout: TimeAmount

    package init(client: HTTPClient, host: URL, envId: String, timeoutSeconds: Double) {
        self.client = client
        self.host = host
        self.envId = envId
        timeout = .milliseconds(Int64(timeoutSeconds * 1000))
    }

    package func evaluate(transactionId: String, signals: String) async -> String {
        let url = host.appendingPathComponent("v1/environments").appendingPathComponent(envId).appendingPathComponent("riskEvaluations")
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body: [String: Any] = [
            "event": [
                "targetResource": ["name": "verify-pipeline"],
                "user": ["id": transactionId, "type": "EXTERNAL"],
                "sdk": ["signals": ["data": signals]]
            ]
        ]
        // A dictionary of strings always serialises; an empty body would be refused by the host, not crash the run.
        request.body = .bytes(ByteBuffer(bytes: Array((try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data())))
        // One deadline for the whole exchange, the answer's body included.
        let end = ContinuousClock.now + .nanoseconds(timeout.nanoseconds)
        do {
            let response = try await client.execute(request, deadline: .now() + timeout)
            guard let answer = await OutboundHTTP.read(response.body, upTo: 1 << 20, until: end) else {
                return #"{"error":"timed out"}"#
            }
            let text = String(buffer: answer)
            // Only whether the answer is JSON matters here: it is stored as the evaluation when it is.
            guard (200..<300).contains(Int(response.status.code)),
                (try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil
            else {
                return #"{"error":"HTTP \#(response.status.code)"}"#
            }
            return text
        } catch {
            return #"{"error":"\#(type(of: error))"}"#
        }
    }
}

/// Asks for at most one risk evaluation per transaction, once its signals payload exists, even when its
/// documents race; the answer is stored with the transaction.
package actor RiskEvaluations {
    let evaluator: RiskEvaluator
    let store: TransactionStore
    let logger: Logger
    private var asked: Set<String> = []

    package init(evaluator: RiskEvaluator, store: TransactionStore, logger: Logger) {
        self.evaluator = evaluator
        self.store = store
        self.logger = logger
    }

    package func evaluateOnce(_ transactionId: String) async {
        guard !asked.contains(transactionId) else { return }
        let transaction: StoredTransaction?, state: ProtectState?
        do {
            transaction = try await store.transaction(id: transactionId)
            state = try await store.protectState(of: transactionId, as: ProtectState.self)
        } catch {
            logger.warning(
                "could not read a transaction for its risk evaluation",
                metadata: ["transaction.id": "\(transactionId)", "error.code": "\(FailureCode(of: error))"])
            return
        }
        guard let transaction, let signals = transaction.signals, state?.riskEvaluation == nil,
            asked.insert(transactionId).inserted
        else { return }
        let answer = await evaluator.evaluate(transactionId: transactionId, signals: signals)
        do {
            _ = try await store.updateProtectState(of: transactionId, as: ProtectState.self) { current in
                var state = current ?? ProtectState()
                state.riskEvaluation = answer
                return state
            }
        } catch {
            logger.warning(
                "could not store a risk evaluation", metadata: ["transaction.id": "\(transactionId)", "error.code": "\(FailureCode(of: error))"])
        }
    }
}
