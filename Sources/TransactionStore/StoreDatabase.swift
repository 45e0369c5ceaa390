import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A PostgreSQL database with a running connection pool, shared by the parts that keep their tables in it (the
/// transaction store, the work queue): connections and transactions with errors turned into `StoreError`, and
/// named migrations, each part with a ledger of its own.
package struct StoreDatabase: Sendable {
    package let client: PostgresClient
    package let logger: Logger
    /// The database's URL without its password, for messages.
    package let location: String

    /// Every ledger's migrations run under this one advisory lock: processes that start together take turns.
    static let migrationLock: Int64 = 7_362_811

    package func withConnection<T: Sendable>(
        answerWithin deadline: Duration? = Self.answerTimeout, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let client = client
        return try await Self.bounded(deadline) { try await client.withConnection { connection in try await body(connection) } }
    }

    /// `body` in one database transaction, committed when it returns, rolled back when it throws.
    package func transaction<T: Sendable>(
        answerWithin deadline: Duration? = Self.answerTimeout, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let client = client, logger = logger
        return try await Self.bounded(deadline) {
            try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// How long an ordinary store operation waits for the database (the long ones, a key change or a migration,
    /// wait as long as they take). A session ended under a query (`pg_terminate_backend`, a server's crash) can leave
    /// postgres-nio waiting for an answer that never comes, and a frozen server never answers at all: past this, the
    /// operation fails with a store error, which a worker takes as the database's and not the document's.
    package static let answerTimeout = Duration.seconds(30)

    /// `operation`'s result, or a store error once `deadline` has passed. The operation runs in a task of its own,
    /// cancelled with the caller or at the deadline; one that ignores its cancellation is left behind, not waited for.
    static func bounded<T: Sendable>(
        _ deadline: Duration?, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let deadline else {
            do { return try await operation() } catch { throw storeError(error) }
        }
        let task = Task { try await operation() }
        let result: Result<T, any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
                let slot = FirstAnswer(continuation)
                let timer = Task {
                    do { try await Task.sleep(for: deadline) } catch { return }  // the answer came first
                    slot.resume(.failure(StoreError.database("the database did not answer within \(deadline.components.seconds) s")))
                }
                Task {
                    let result = await task.result
                    timer.cancel()
                    slot.resume(result)
                }
            }
        } onCancel: {
            task.cancel()
        }
        task.cancel()  // at the deadline; a no-op once it has finished
        do { return try result.get() } catch { throw storeError(error) }
    }

    /// Applies the migrations `ledger` has not recorded, in order, in one database transaction. A database whose
    /// ledger holds a migration this version does not know (nor lists in `retired`) was written by a newer one.
    /// `adoptingFrom` names the ledger that recorded these migrations before they moved to this one: a migration
    /// found there is recorded here, not applied again. `renamed`: identifiers an earlier release recorded, and what
    /// each is now; the ledger is rewritten with the new ones.
    package func migrate(
        ledger: String, _ migrations: [(String, [String])], retired: Set<String> = [],
        renamed: [String: String] = [:], adoptingFrom previous: String? = nil
    ) async throws {
        let location = location, logger = logger
        try await transaction(answerWithin: nil) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query(
                PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(ledger) (identifier text PRIMARY KEY)"),
                logger: logger)
            var applied = try await Self.identifiers(in: ledger, connection, logger: logger) ?? []
            guard applied.isSubset(of: Set(migrations.map(\.0)).union(retired).union(renamed.keys)) else {
                throw StoreError.newerSchema(location)
            }
            for (old, new) in renamed where applied.contains(old) {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "UPDATE \(ledger) SET identifier = $1 WHERE identifier = $2",
                        binds: {
                            var binds = PostgresBindings(capacity: 2)
                            binds.append(new)
                            binds.append(old)
                            return binds
                        }()), logger: logger)
                applied.remove(old)
                applied.insert(new)
            }
            var adoptable: Set<String> = []
            if let previous { adoptable = try await Self.identifiers(in: previous, connection, logger: logger) ?? [] }
            for (identifier, statements) in migrations where !applied.contains(identifier) {
                if !adoptable.contains(identifier) {
                    for statement in statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(ledger) (identifier) VALUES ($1)",
                        binds: {
                            var binds = PostgresBindings(capacity: 1)
                            binds.append(identifier)
                            return binds
                        }()), logger: logger)
            }
        }
    }

    /// For commands that open an existing store: the ledger must exist and hold nothing this version does not know;
    /// with `complete`, for commands that only read, every migration of this version must be applied too (they do
    /// not migrate, and an older schema would fail them query by query).
    package func requireMigrations(
        ledger: String, _ migrations: [(String, [String])], retired: Set<String> = [], renamed: [String: String] = [:],
        complete: Bool = false
    ) async throws {
        let logger = logger
        let recorded = try await withConnection { connection in try await Self.identifiers(in: ledger, connection, logger: logger) }
        guard let recorded else { throw StoreError.cannotOpen("no store in \(location)") }
        let identifiers = Set(recorded.map { renamed[$0] ?? $0 })
        guard identifiers.isSubset(of: Set(migrations.map(\.0)).union(retired)) else { throw StoreError.newerSchema(location) }
        let missing = migrations.filter { !identifiers.contains($0.0) }.count
        if complete, missing > 0 { throw StoreError.olderSchema(location, missing: missing) }
    }

    /// The identifiers a ledger recorded; nil when there is no such ledger.
    private static func identifiers(in ledger: String, _ connection: PostgresConnection, logger: Logger) async throws -> Set<String>? {
        let exists =
            try await connection.query("SELECT to_regclass(\(ledger)) IS NOT NULL", logger: logger)
            .collect().first?.decode(Bool.self) ?? false
        guard exists else { return nil }
        var identifiers: Set<String> = []
        for try await identifier in try await connection.query(PostgresQuery(unsafeSQL: "SELECT identifier FROM \(ledger)"), logger: logger)
            .decode(String.self)
        {
            identifiers.insert(identifier)
        }
        return identifiers
    }

    /// The server's message only: PostgresNIO's error descriptions quote the query and could quote document data.
    package static func storeError(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PostgresTransactionError {
            if let inner = error.closureError { return storeError(inner) }
            if let inner = error.beginError ?? error.commitError { return storeError(inner) }
        }
        if let error = error as? PSQLError {
            return .database(error.serverInfo?[.message] ?? "PostgreSQL error \(error.code)")
        }
        return .database("\(type(of: error))")
    }
}

/// The first of several answers resumes the waiting caller; the others are dropped.
package final class FirstAnswer<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, Never>?>

    package init(_ continuation: CheckedContinuation<T, Never>) {
        self.continuation = Mutex(continuation)
    }

    package func resume(_ answer: T) {
        continuation.withLock { $0.take() }?.resume(returning: answer)
    }
}
