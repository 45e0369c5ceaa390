import Foundation
import Logging
import PostgresNIO
import TransactionStore

extension SealedColumn {
    /// A document's job as the pipeline serialised it, sealed to its item.
    static let workJob = SealedColumn(rawValue: "work_items.job")
    /// What a worker recorded of a done document.
    static let workResult = SealedColumn(rawValue: "work_items.result")
}

/// The work queue's items as the store sees them: they hold identity data sealed with the store's key and name their
/// transactions, so a purge of a transaction empties its items (done ones, and queued ones: a worker that claims
/// one reports it purged), and a key change seals them again, each in the store's own database transaction.
package struct WorkItems: PostgresNeighbour {
    /// What every process that opens a PostgreSQL store passes it (`StoreLocation.withStore`).
    package static let neighbours: [any PostgresNeighbour] = [WorkItems()]

    /// Whether the database holds the queue: a store may be used without one.
    private func present(_ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        try await connection.query("SELECT to_regclass('work_items') IS NOT NULL", logger: logger).collect().first?.decode(Bool.self) ?? false
    }

    package func purge(transactions ids: [String], on connection: PostgresConnection, logger: Logger) async throws {
        guard try await present(connection, logger) else { return }
        try await connection.query(
            "UPDATE work_items SET job = '', result = NULL WHERE kind = 'document' AND transaction_id = ANY(\(ids))", logger: logger)
    }

    package func rewrite(on connection: PostgresConnection, logger: Logger, _ rewrite: SealedRewrite) async throws -> Int {
        guard try await present(connection, logger) else { return 0 }
        var items: [(Int64, String, String?)] = []
        for try await row in try await connection.query(
            "SELECT id, job, result FROM work_items WHERE kind = 'document' AND (job <> '' OR result IS NOT NULL) FOR UPDATE", logger: logger
        ).decode((Int64, String, String?).self) {
            items.append(row)
        }
        var count = 0
        for (id, job, result) in items {
            let row = "\(id)"
            let newJob = job.isEmpty ? job : try rewrite(job, .workJob, row)
            let newResult = try result.map { value throws in try rewrite(value, .workResult, row) }
            guard newJob != job || newResult != result else { continue }
            try await connection.query("UPDATE work_items SET job = \(newJob), result = \(newResult) WHERE id = \(id)", logger: logger)
            count += (job.isEmpty ? 0 : 1) + (result == nil ? 0 : 1)
        }
        return count
    }

    package func tables(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await present(connection, logger) ? ["work_items"] : []
    }
}
