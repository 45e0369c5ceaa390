import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOSSL
import OutboundHTTP
import VerifyModel

/// Submits documents over HTTP (CONTRACT §7): `POST {endpoint}/transactions/{id}/documents` with an
/// `Idempotency-Key` made from the transaction, the document type and the submission's revision alone, so that retries,
/// re-runs and runs on another store can never create a second copy.
/// 2xx (whatever the body) and 409 are accepted; 408, 429, 5xx, timeouts and dropped connections are retried with
/// exponential backoff and jitter; a 3xx (redirects are never followed) and any other 4xx fail at once.
package struct HTTPSubmitter: DocumentSubmitter {
    package struct Configuration: Sendable {
        package var endpoint: URL
        /// From the environment variable the pipeline names; never logged.
        package var bearerToken: String?
        package var timeout: TimeAmount
        package var maxAttempts: Int
        package var initialBackoff: TimeAmount
        package var maxBackoff: TimeAmount

        package init(
            endpoint: URL, bearerToken: String?, timeoutSeconds: Double, maxAttempts: Int,
            initialBackoffMs: Int, maxBackoffMs: Int
        ) {
            self.endpoint = endpoint
            self.bearerToken = bearerToken
            timeout = .milliseconds(Int64(timeoutSeconds * 1000))
            self.maxAttempts = max(1, maxAttempts)
            initialBackoff = .milliseconds(Int64(initialBackoffMs))
            maxBackoff = .milliseconds(Int64(maxBackoffMs))
        }
    }

    let client: HTTPClient
    let configuration: Configuration
    let logger: Logger

    package init(client: HTTPClient, configuration: Configuration, logger: Logger) {
        self.client = client
        self.configuration = configuration
        self.logger = logger
    }

    struct Body: Encodable {
        struct Signals: Encodable { var data: String }
        var documentId: String
        var documentType: DocumentType
        var document: DocumentFields
        var documentStatus: [String: DocumentStatus]
        var documentSubmissionStatus: DocumentSubmissionStatus
        var signals: Signals?
    }

    enum Outcome {
        case accepted
        case retry(String)
        case reject(String)
    }

    package func submit(_ request: SubmissionRequest) async throws -> SubmissionResult {
        let url = configuration.endpoint.appendingPathComponent("transactions")
            .appendingPathComponent(request.transactionId).appendingPathComponent("documents")
        var http = HTTPClientRequest(url: url.absoluteString)
        http.method = .POST
        http.headers.add(name: "Content-Type", value: "application/json")
        http.headers.add(name: "Idempotency-Key", value: request.idempotencyKey)
        if let token = configuration.bearerToken {
            http.headers.add(name: "Authorization", value: "Bearer \(token)")
        } else {
            let credentials = Data("\(request.transactionId):\(request.verificationCode)".utf8).base64EncodedString()
            http.headers.add(name: "Authorization", value: "Basic \(credentials)")
        }
        let body = Body(
            documentId: request.documentId, documentType: request.documentType, document: request.document,
            documentStatus: Dictionary(uniqueKeysWithValues: request.state.documents.map { ($0.key.rawValue, $0.value) }),
            documentSubmissionStatus: request.state.submissionStatus,
            signals: request.signals.map { Body.Signals(data: $0) })
        // Encoding a struct of strings and enums cannot fail; were it to, the document fails rather than the run.
        guard let encoded = try? JSONEncoder().encode(body) else {
            return .failed(DocumentSubmissionError(.invalidKeyMap, "the document could not be encoded"), attempts: 0)
        }
        http.body = .bytes(ByteBuffer(bytes: Array(encoded)))

        var reason = ""
        for attempt in 1...configuration.maxAttempts {
            let outcome = try await send(http)
            Self.count(outcome, retry: attempt > 1)
            switch outcome {
            case .accepted:
                return .accepted(attempts: attempt)
            case .reject(let why):
                return .failed(DocumentSubmissionError(.submissionError, why), attempts: attempt)
            case .retry(let why):
                reason = why
                logger.debug(
                    "submission attempt failed",
                    metadata: [
                        "document.id": "\(request.documentId)", "attempt": "\(attempt)", "reason": "\(why)"
                    ])
                if attempt < configuration.maxAttempts {
                    do {
                        try await Task.sleep(for: backoff(attempt))
                    } catch {
                        throw CancellationError()
                    }
                }
            }
        }
        return .failed(
            DocumentSubmissionError(.submissionError, "gave up after \(configuration.maxAttempts) attempts: \(reason)"),
            attempts: configuration.maxAttempts)
    }

    /// `verify_submission_attempts_total{class, retry}`: each attempt by how it ended (accepted, rejected, retryable)
    /// and whether it was a retry.
    static func count(_ outcome: Outcome, retry: Bool) {
        let kind =
            switch outcome {
            case .accepted: "accepted"
            case .reject: "rejected"
            case .retry: "retryable"
            }
        Counter(label: "verify_submission_attempts_total", dimensions: [("class", kind), ("retry", retry ? "true" : "false")]).increment()
    }

    /// At most this much of any response body is read: the status is the answer, and a body could be endless.
    static let maximumBodyBytes = 64 << 10

    /// One attempt, bounded as a whole by `timeout`: connecting, sending, the response head and the part of the body
    /// that is read. A failure of a cancelled task is the cancellation, not an answer to retry.
    private func send(_ request: HTTPClientRequest) async throws -> Outcome {
        try Task.checkCancellation(as: CancellationError.self)
        let end = ContinuousClock.now + .nanoseconds(configuration.timeout.nanoseconds)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: .now() + configuration.timeout, logger: logger)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            try Task.checkCancellation(as: CancellationError.self)
            return .retry("timed out")
        } catch let error as NIOSSLError {
            try Task.checkCancellation(as: CancellationError.self)
            // An untrusted certificate stays untrusted: trying again cannot help.
            if case .handshakeFailed = error { return .reject("the TLS handshake with the submission endpoint failed (is its certificate trusted?)") }
            return .retry("TLS failed (\(type(of: error)))")
        } catch is NIOSSLExtraError {
            try Task.checkCancellation(as: CancellationError.self)
            // The certificate names another host (NIOSSLExtraError.failedToValidateHostname): as lasting as an unknown CA.
            return .reject("the submission endpoint's TLS certificate does not name its host")
        } catch {
            try Task.checkCancellation(as: CancellationError.self)
            return .retry("connection failed (\(type(of: error)))")
        }
        // The status line is the answer whatever follows it: the body is read (a little) only so the connection can be reused.
        _ = await OutboundHTTP.read(response.body, upTo: Self.maximumBodyBytes, until: end)
        let code = Int(response.status.code)
        switch code {
        case 200..<300, 409: return .accepted
        case 300..<400: return .reject("the submission endpoint answered HTTP \(code); redirects are not followed")
        case 408, 429, 500..<600: return .retry("HTTP \(code)")
        default: return .reject("the submission endpoint answered HTTP \(code)")
        }
    }

    /// Exponential, capped, with "equal jitter": half fixed, half random, so retries from many workers spread out.
    func backoff(_ attempt: Int) -> Duration {
        let base = configuration.initialBackoff.nanoseconds * (Int64(1) << Int64(min(attempt - 1, 30)))
        let capped = min(base, configuration.maxBackoff.nanoseconds)
        let jittered = capped / 2 + Int64.random(in: 0...max(capped / 2, 0))
        return .nanoseconds(jittered)
    }
}
