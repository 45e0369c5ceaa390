import DocumentOutcomes
import Metrics

/// One stage of the line: a function of one document's value to the next stage's, or to the document's end.
/// Every stage has this shape and one driver runs them all (`drive`); adding a stage is a type conforming to this
/// and its place where the line is assembled (`PipelineRunner.Line`).
protocol PipelineStage: Sendable {
    associatedtype Input: StageValue
    /// `Never` for the last stage: every document leaves it finished.
    associatedtype Output: StageValue
    /// Its metrics' `stage` label.
    var name: String { get }
    /// Documents it works on at once.
    var workers: Int { get }
    /// The document's next value, or its end here. A `DocumentFailure` thrown (or any other error but
    /// cancellation) is the document's failure, and is reported; cancellation drops it unrecorded, as the shutdown
    /// rules say.
    func process(_ document: InFlight<Input>) async throws -> StageResult<Output>
}

/// What a stage makes of a document.
enum StageResult<Output: StageValue>: Sendable {
    /// On to the next stage.
    case next(Output)
    /// Done here (an earlier run's accepted submission, an explicit skip, the last stage's answer).
    case finished(FinishedDocument)
}

/// The last stage's output: nothing goes on after it.
extension Never: StageValue {
    var transactionId: String? { switch self {} }
    var byteCount: Int { switch self {} }
    var failedInput: FailedInput? { switch self {} }
}

extension PipelineStage {
    /// Runs `workers` copies of the stage over `input` until it is drained (or the run is cancelled), each document's
    /// next value to `next`, its end or failure to `report`; then closes `next`. Each document's time in the stage and
    /// the depth of the queue before it are metrics, labelled by the stage's name.
    func drive(
        from input: StageQueue<InFlight<Input>>, to next: StageQueue<InFlight<Output>>?, report: StageQueue<FinishedDocument>
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(workers, 1) {
                group.addTask {
                    let duration = Metrics.Timer(label: "verify_stage_duration_seconds", dimensions: [("stage", name)])
                    let depth = Gauge(label: "verify_queue_depth", dimensions: [("stage", name)])
                    while let item = await input.receive() {
                        depth.record(input.depth)
                        let start = ContinuousClock.now
                        defer {
                            let elapsed = start.duration(to: .now).components
                            duration.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
                        }
                        do {
                            try await pass(item, to: next, report: report)
                        } catch {
                            return  // cancelled: the document is dropped unrecorded, as the shutdown rules say
                        }
                    }
                }
            }
        }
        next?.finish()
    }

    /// One document through the stage; throws only when the run is cancelled.
    private func pass(_ item: InFlight<Input>, to next: StageQueue<InFlight<Output>>?, report: StageQueue<FinishedDocument>) async throws {
        let result: StageResult<Output>
        do {
            result = try await process(item)
        } catch {
            // Cut short by the run's cancellation (the stage's own wait, or the store's): dropped unrecorded.
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            result = .finished(item.failed(DocumentFailure(any: error)))
        }
        switch result {
        case .next(let value):
            // A stage with no next one has `Never` for its output: it never gets here.
            try await next?.send(item.with(value), weight: value.byteCount)
        case .finished(let document):
            try await report.send(document)
        }
    }
}
