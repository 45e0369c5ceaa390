import DocumentOutcomes
import Foundation
import Logging
import Submission
import Synchronization
import Testing
import TransactionStore
import VerifyModel

@testable import Pipeline

/// A submitter that never answers, and says which documents reached it: the fault a real endpoint cannot be told
/// to produce on cue (a submission still in flight when the run is cancelled).
struct UnansweringSubmitter: DocumentSubmitter {
    let reached: AsyncStream<String>.Continuation

    func submit(_ request: SubmissionRequest) async throws(CancellationError) -> SubmissionResult {
        reached.yield(request.documentId)
        do {
            try await Task.sleep(for: .seconds(86_400))
        } catch {
            throw CancellationError()
        }
        return .accepted(attempts: 1)
    }
}

/// The runner in-process, over a real SQLite store and real pipes: what a run reports, what it records, and how it
/// stops.
// The limit catches a run that never returns (cancellation or a stop not honoured), not a slow one: beside the whole
// suite on 2 cores these tests wait a minute and more for the cooperative pool (81-88 s seen), and a 1-minute limit
// failed them on a fresh clone's CI run.
@Suite("The pipeline runner", .timeLimit(.minutes(5)))
struct RunnerTests {
    static func qr(_ transaction: String, code: String = "C1") -> String {
        "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=\(transaction)&code=\(code)"
    }

    static var configuration: PipelineConfiguration {
        var configuration = PipelineConfiguration()
        configuration.documents = [.email: .required, .phone: .optional]
        return configuration
    }

    static func freshStore() async throws -> TransactionStore { try await TransactionStore.inMemory() }

    /// A pipe holding `lines`; its write end stays open unless `close` (then the input ends after them).
    static func pipe(_ lines: [String], close: Bool = true) throws -> Pipe {
        let pipe = Pipe()
        try pipe.fileHandleForWriting.write(contentsOf: Data(lines.map { $0 + "\n" }.joined().utf8))
        if close { try pipe.fileHandleForWriting.close() }
        return pipe
    }

    /// Collects what the run emits.
    final class Emitted: Sendable {
        let outcomes = Mutex<[DocumentOutcome]>([])
        let stream = AsyncStream<DocumentOutcome>.makeStream()

        func emit(_ outcome: DocumentOutcome, _ progress: RunProgress) async {
            outcomes.withLock { $0.append(outcome) }
            stream.continuation.yield(outcome)
        }

        var sorted: [DocumentOutcome] { outcomes.withLock { $0 }.sorted { $0.sequence < $1.sequence } }
    }

    @Test("every line gets one outcome; a bad line fails alone with its code; the store holds what was done")
    func streamOutcomes() async throws {
        let store = try await Self.freshStore()
        let input = try Self.pipe([
            #"{"id":"a","qr":"\#(Self.qr("t-1"))","type":"EMAIL","email":"a@example.com"}"#,
            "{not json",
            #"{"id":"c","transactionId":"t-unknown","type":"EMAIL","email":"x@example.com"}"#,
            #"{"id":"d","transactionId":"t-1","type":"PHONE","phone":"+1 555 0100"}"#
        ])
        let runner = PipelineRunner(configuration: Self.configuration, store: store, submitter: LocalSubmitter(), logger: Logger(label: "test"))
        let emitted = Emitted()
        let summary = try await runner.run(
            .lines(fileDescriptor: input.fileHandleForReading.fileDescriptor), stop: StopSignal(),
            emit: emitted.emit)
        let outcomes = emitted.sorted
        #expect(outcomes.map(\.inputId) == ["a", "line-2", "c", "d"], "a line without its own id is named by its number")
        #expect(outcomes.map { $0.failure?.code.rawValue } == [nil, "invalidKeyMap", "initiateDocumentTransactionError", nil])
        // t-1's two documents are submitted side by side: the one that finishes second sees the transaction COMPLETED.
        #expect(
            [outcomes[0], outcomes[3]].contains { $0.response?.documentSubmissionStatus == .completed },
            "\(outcomes.map { $0.response?.documentSubmissionStatus })")
        #expect(summary.documents == 4 && summary.failed == 2 && summary.completed == 1)
        let stored = try #require(try await store.transaction(id: "t-1"))
        #expect(stored.state.documents == [.email: .processed, .phone: .processed] && stored.state.submissionStatus == .completed)
        #expect(try await store.transaction(id: "t-unknown") == nil)
    }

    @Test("cancelled with submissions in flight: the run returns, nothing unfinished is recorded, a re-run sends each document once")
    func cancelledMidSubmission() async throws {
        let store = try await Self.freshStore()
        let lines = [
            #"{"id":"a","qr":"\#(Self.qr("t-1"))","type":"EMAIL","email":"a@example.com"}"#,
            #"{"id":"b","qr":"\#(Self.qr("t-2"))","type":"EMAIL","email":"b@example.com"}"#
        ]
        let (reached, continuation) = AsyncStream<String>.makeStream()
        let runner = PipelineRunner(
            configuration: Self.configuration, store: store,
            submitter: UnansweringSubmitter(reached: continuation), logger: Logger(label: "test"))
        let emitted = Emitted()
        let input = try Self.pipe(lines)
        let run = Task {
            try await runner.run(
                .lines(fileDescriptor: input.fileHandleForReading.fileDescriptor), stop: StopSignal(),
                emit: emitted.emit)
        }
        var documents: [String] = []
        for await document in reached {
            documents.append(document)
            if documents.count == 2 { break }
        }
        run.cancel()
        let summary = try await run.value
        #expect(summary.documents == 0 && emitted.sorted.isEmpty, "a document cut short is not reported")
        for document in documents {
            #expect(try await store.submission(documentId: document) == nil)
        }
        #expect(try await store.transaction(id: "t-1")?.state.documents[.email] == .collected)

        // Run again on the same input, with a submitter that answers.
        let rerun = PipelineRunner(configuration: Self.configuration, store: store, submitter: LocalSubmitter(), logger: Logger(label: "test"))
        let again = Emitted(), sameInput = try Self.pipe(lines)
        let second = try await rerun.run(
            .lines(fileDescriptor: sameInput.fileHandleForReading.fileDescriptor), stop: StopSignal(),
            emit: again.emit)
        #expect(second.documents == 2 && second.failed == 0 && second.alreadySubmitted == 0)
        #expect(Set(again.sorted.compactMap(\.documentId)) == Set(documents))
        for document in documents {
            #expect(try await store.submission(documentId: document)?.attempts == 1)
        }
    }

    @Test("stop ends the intake though the input stays open; what was taken finishes and is reported")
    func stopEndsIntake() async throws {
        let store = try await Self.freshStore()
        let input = try Self.pipe([#"{"id":"a","qr":"\#(Self.qr("t-1"))","type":"EMAIL","email":"a@example.com"}"#], close: false)
        let runner = PipelineRunner(configuration: Self.configuration, store: store, submitter: LocalSubmitter(), logger: Logger(label: "test"))
        let emitted = Emitted(), stop = StopSignal()
        let run = Task { try await runner.run(.lines(fileDescriptor: input.fileHandleForReading.fileDescriptor), stop: stop, emit: emitted.emit) }
        for await _ in emitted.stream.stream { break }
        stop.stop()
        let summary = try await run.value
        #expect(summary.documents == 1 && summary.failed == 0)
        #expect(emitted.sorted.first?.response?.documentStatus[.email] == .processed)
        try input.fileHandleForWriting.close()
    }

    @Test("a second QR for a known transaction with another verification code is refused; nothing is submitted for it")
    func verificationCodeMismatch() async throws {
        let store = try await Self.freshStore()
        let input = try Self.pipe([
            #"{"id":"a","qr":"\#(Self.qr("t-1", code: "C1"))","type":"EMAIL","email":"a@example.com"}"#,
            #"{"id":"b","qr":"\#(Self.qr("t-1", code: "FORGED"))","type":"PHONE","phone":"+1 555 0100"}"#
        ])
        let runner = PipelineRunner(configuration: Self.configuration, store: store, submitter: LocalSubmitter(), logger: Logger(label: "test"))
        let emitted = Emitted()
        _ = try await runner.run(.lines(fileDescriptor: input.fileHandleForReading.fileDescriptor), stop: StopSignal(), emit: emitted.emit)
        let outcomes = emitted.sorted
        #expect(outcomes.map { $0.failure?.code.rawValue } == [nil, "initiateDocumentTransactionError"])
        #expect(outcomes[1].failure?.message == "the QR's verification code is not the one transaction 't-1' was opened with")
        #expect(try await store.transaction(id: "t-1")?.state.documents[.phone] == .optional, "the phone was not collected")
    }

    @Test("a folder that is not there fails the run, before anything is read")
    func missingFolder() async throws {
        let runner = PipelineRunner(
            configuration: Self.configuration, store: try await Self.freshStore(), submitter: LocalSubmitter(),
            logger: Logger(label: "test"))
        await #expect(throws: DocumentFailure.self) {
            _ = try await runner.run(.folder(URL(fileURLWithPath: "/nonexistent-\(UUID())")), stop: StopSignal()) { _, _ in }
        }
    }
}
