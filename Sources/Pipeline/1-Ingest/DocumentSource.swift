import DocumentOutcomes
import Foundation
import ImageDecoding
import Logging
import Synchronization
import TransactionStore
import VerifyModel
import WorkQueues

/// A kind of input the line reads (a batch folder, NDJSON lines, the work queue, reviews sent through again): it
/// feeds the intake, says how many documents it holds once it knows, and decides what its documents' completion and
/// its own end mean. Adding an input is one type conforming to this; the run treats every source alike.
package protocol DocumentSource: Sendable {
    /// Protect's channel for the transactions its documents open (`folder`, `stream`).
    var channel: String { get }
    /// How many documents it holds, once that is known (a review batch at once, a folder once walked); nil for a stream.
    var total: Int? { get }
    /// Checks, before the line starts, that the input can be read at all (a folder that is not one). Default: nothing.
    func open() throws
    /// Hands every input to `admit`, in order, until the input ends; throws `CancellationError` when the run stops.
    func feed(_ context: SourceContext, admit: @escaping @Sendable (SourceItem) async throws -> Void) async throws
    /// Runs beside the line until the run cancels it (a worker's lease heartbeat). Default: returns at once.
    func sustain(_ context: SourceContext) async
    /// Whether a failed document goes back to the input, to be redone and reported then, instead of being reported
    /// now (a worker's document the store failed). Default: false.
    func giveBack(_ document: FinishedDocument, _ context: SourceContext) async -> Bool
    /// After a document is reported: what completes it here (a worker's queue item marked done); what is returned runs
    /// after, beside the report (a transaction folder's end), so that it holds no report up. Default: nothing.
    func reported(_ document: FinishedDocument, _ context: SourceContext) async -> (@Sendable () async -> Void)?
    /// The line has reported everything and was not stopped: the end of the whole input. Default: nothing.
    func ended(_ context: SourceContext) async
    /// The kind of work-queue batch its documents make (`enqueue`); nil for an input that cannot be queued.
    var queueBatch: WorkBatchKind? { get }
}

extension DocumentSource {
    package func open() throws {}
    package func sustain(_ context: SourceContext) async {}
    package func giveBack(_ document: FinishedDocument, _ context: SourceContext) async -> Bool { false }
    package func reported(_ document: FinishedDocument, _ context: SourceContext) async -> (@Sendable () async -> Void)? { nil }
    package func ended(_ context: SourceContext) async {}
    package var queueBatch: WorkBatchKind? { nil }
}

/// What a source is handed by the run it feeds.
package struct SourceContext: Sendable {
    let configuration: PipelineConfiguration
    let inputEnds: InputEnds
    let touched: TouchedTransactions
    let logger: Logger
}

/// One input as a source hands it on: a document job, or an input that failed before it became one; with the queue
/// item it was claimed as, for a worker.
package struct SourceItem: Sendable {
    var job: Result<DocumentJob, IngestFailure>
    var queueItem: WorkItem? = nil
}

/// A document that left the line: its outcome, and what it leaves for its review when it failed.
package struct FinishedDocument: Sendable {
    package var outcome: DocumentOutcome
    var failedInput: FailedInput?

    init(_ outcome: DocumentOutcome, failedInput: FailedInput? = nil) {
        self.outcome = outcome
        self.failedInput = failedInput
    }
}

/// A batch folder (CONTRACT §6), walked as it is fed: each transaction folder is read when the line reaches it. At
/// the end of a transaction folder (its last document reported) its transactions' missing optional documents become
/// SKIPPED; at the end of the batch, those of its loose images.
package final class FolderSource: DocumentSource {
    let root: URL
    private let walked = Mutex<Int?>(nil)
    private let ends = Mutex(FolderEnds())

    package init(_ root: URL) { self.root = root }

    package var channel: String { "folder" }
    package var total: Int? { walked.withLock { $0 } }
    package var queueBatch: WorkBatchKind? { .folder }

    package func open() throws {
        guard FolderIngest.isDirectory(root) else { throw DocumentFailure(.noDocumentToSubmitError, "\(root.path) is not a folder") }
        // Read once here so that a folder that cannot be listed fails the run before the line starts, as it did when it
        // was walked whole first, instead of ending the intake with nothing reported.
        guard FolderListing(path: root.path) != nil else {
            throw DocumentFailure(.noDocumentToSubmitError, "cannot read the folder \(root.path)")
        }
    }

    package func feed(_ context: SourceContext, admit: @escaping @Sendable (SourceItem) async throws -> Void) async throws {
        var sequence = 0
        for part in try FolderIngest(root: root).parts() {
            let jobs = FolderIngest.numbered(part(), from: sequence)
            sequence += jobs.count
            // Counted before any of them can be reported: the folder ends with the last.
            ends.withLock { $0.expect(jobs) }
            for job in jobs { try await admit(SourceItem(job: job)) }
        }
        walked.withLock { $0 = sequence }
    }

    package func reported(_ document: FinishedDocument, _ context: SourceContext) async -> (@Sendable () async -> Void)? {
        let outcome = document.outcome
        guard let (folder, ids) = ends.withLock({ $0.reported(outcome.input, transactionId: outcome.transactionId) }) else { return nil }
        return {
            await context.inputEnds.skipMissingOptionalDocuments(ids, reason: "end of \(folder)")
            await context.touched.ended(ids)
        }
    }

    package func ended(_ context: SourceContext) async {
        await context.inputEnds.skipMissingOptionalDocuments(await context.touched.notEnded, reason: "end of batch")
    }
}

/// NDJSON documents, one a line (CONTRACT §5), from a file descriptor (standard input): a stream, with no end of
/// input before the descriptor's.
package struct LineSource: DocumentSource {
    let fileDescriptor: Int32

    package init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    package var channel: String { "stream" }
    package var total: Int? { nil }
    package var queueBatch: WorkBatchKind? { .stream }

    package func feed(_ context: SourceContext, admit: @escaping @Sendable (SourceItem) async throws -> Void) async throws {
        try await ByteInput.withChunks(fileDescriptor: fileDescriptor) { chunks in
            try await StreamLine.inputs(in: chunks, maxLineBytes: context.configuration.maxLineBytes) { try await admit(SourceItem(job: $0)) }
        }
    }
}

extension DocumentSource where Self == FolderSource {
    /// A batch folder.
    package static func folder(_ url: URL) -> FolderSource { FolderSource(url) }
}

extension DocumentSource where Self == LineSource {
    /// NDJSON lines from a file descriptor.
    package static func lines(fileDescriptor: Int32) -> LineSource { LineSource(fileDescriptor: fileDescriptor) }
}
