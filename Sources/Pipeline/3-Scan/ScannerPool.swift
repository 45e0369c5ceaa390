import BarcodeScanning

/// The scan stage's scanners, one per scan worker, lent for the scanning itself. A document that waits for another
/// document's reading of its folder's QR holds none, so a wait never leaves a core idle while documents that could be
/// scanned queue up: the stage takes in more documents than it has scanners, and the scanners bound its CPU work.
final class ScannerPool: Sendable {
    /// A scanner on loan: one borrower at a time uses it (ZBar's are not thread-safe), handed over through the pool's
    /// queue, which orders each return before the next loan.
    private struct Loan: @unchecked Sendable {
        let scanner: BarcodeScanner
    }

    let count: Int
    private let idle: StageQueue<Loan>

    init(count: Int, configuration: BarcodeScanner.Configuration) {
        self.count = max(1, count)
        idle = StageQueue(limits: QueueLimits(items: self.count, bytes: 1))
        for _ in 0..<self.count {
            // The queue has room for every scanner, so no send waits.
            guard idle.trySend(Loan(scanner: BarcodeScanner(configuration: configuration))) else {
                preconditionFailure("the pool's queue holds all its scanners")
            }
        }
    }

    /// Runs `body` with a scanner of the pool, waiting for one to be free; `CancellationError` when the run is cancelled
    /// while waiting.
    func lend<Value>(_ body: (BarcodeScanner) throws -> Value) async throws -> Value {
        guard let loan = await idle.receive() else { throw CancellationError() }
        defer { _ = idle.trySend(loan) }
        return try body(loan.scanner)
    }
}
