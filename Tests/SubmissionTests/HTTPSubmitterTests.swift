import AsyncHTTPClient
import Foundation
import Logging
import LoopbackServer
import Testing
import VerifyModel

@testable import Submission

/// The HTTP submitter in-process, against a real HTTP server on loopback: which answers are retried, how long
/// it waits between attempts, and that cancellation ends a submission at once without an answer.
@Suite("HTTP submitter")
struct HTTPSubmitterUnitTests {
    static let state = TransactionState(policy: [.email: .required], expiresAt: Date(timeIntervalSinceNow: 3600))

    func submitter(
        _ server: LoopbackServer, maxAttempts: Int = 4, timeout: Double = 5, initialBackoffMs: Int = 1,
        maxBackoffMs: Int = 5
    ) -> HTTPSubmitter {
        HTTPSubmitter(
            client: .shared,
            configuration: .init(
                endpoint: URL(string: server.baseURL + "/v1")!, bearerToken: nil, timeoutSeconds: timeout,
                maxAttempts: maxAttempts, initialBackoffMs: initialBackoffMs, maxBackoffMs: maxBackoffMs),
            logger: Logger(label: "test"))
    }

    func request(_ transaction: String, key: String = UUID().uuidString) -> SubmissionRequest {
        SubmissionRequest(
            documentId: key, idempotencyKey: key, transactionId: transaction, verificationCode: "C1", documentType: .email,
            document: DocumentFields([.email: "a@example.com"]), state: Self.state, signals: nil)
    }

    @Test(
        "2xx accepted at once; 500 retried until it passes; 409 accepted unsent; 400 refused without a retry",
        arguments: [("accept-1", 1, true), ("flaky-1", 3, true), ("conflict-1", 1, true), ("bad-1", 1, false)])
    func answerClasses(_ transaction: String, requests: Int, accepted: Bool) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let key = "key-\(transaction)"
        let result = try await submitter(server).submit(request(transaction, key: key))
        #expect(server.requests(forKey: key) == requests)
        #expect(result.attempts == requests)
        switch result {
        case .accepted: #expect(accepted)
        case .failed(let error, _):
            #expect(!accepted)
            #expect(error.code == .submissionError)
            #expect(error.message == "the submission endpoint answered HTTP 400")
        }
    }

    @Test("retries stop at maxAttempts with a submissionError naming the last reason")
    func givesUp() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        // flaky answers 500 to the first two attempts: two attempts are not enough.
        let result = try await submitter(server, maxAttempts: 2).submit(request("flaky-2", key: "k"))
        #expect(result == .failed(DocumentSubmissionError(.submissionError, "gave up after 2 attempts: HTTP 500"), attempts: 2))
    }

    @Test(
        "backoff: exponential from initialBackoffMs, capped at maxBackoffMs, half of it jittered",
        arguments: 1...12)
    func backoffBounds(_ attempt: Int) throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let submitter = submitter(server, initialBackoffMs: 200, maxBackoffMs: 5000)
        let capped = min(200 * (1 << (attempt - 1)), 5000)
        for _ in 0..<50 {
            let wait = submitter.backoff(attempt)
            #expect(wait >= .milliseconds(capped / 2) && wait <= .milliseconds(capped), "attempt \(attempt): \(wait)")
        }
    }

    @Test("a cancelled submission ends at once with CancellationError, even against an API that never answers")
    func cancellation() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.hanging = true
        let submitter = submitter(server, timeout: 120)
        let task = Task { try await submitter.submit(request("accept-9", key: "hang")) }
        while server.requests(forKey: "hang") == 0 { await Task.yield() }
        let cancelled = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Against a 120 s timeout: seconds at most, however busy the machine running the suite is.
        #expect(ContinuousClock.now - cancelled < .seconds(10))
    }
}
