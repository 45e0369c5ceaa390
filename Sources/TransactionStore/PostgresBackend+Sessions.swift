import Foundation
import PostgresNIO

// The operator's view's sessions: they hold no identity data and nothing sealed.
extension PostgresBackend {
    func insertSession(hash: String, expiresAt: Date, at time: Date) async throws {
        try await database.transaction { connection in
            try await connection.query("DELETE FROM operator_sessions WHERE expires_at <= \(time)", logger: self.logger)
            try await connection.query(
                "INSERT INTO operator_sessions (id_hash, created_at, expires_at) VALUES (\(hash), \(time), \(expiresAt))", logger: self.logger)
        }
    }

    func sessionExpiry(hash: String) async throws -> Date? {
        try await database.withConnection { connection in
            try await Self.first(connection, "SELECT expires_at FROM operator_sessions WHERE id_hash = \(hash)", Date.self, self.logger)
        }
    }

    func deleteSession(hash: String) async throws {
        try await database.withConnection { connection in
            _ = try await connection.query("DELETE FROM operator_sessions WHERE id_hash = \(hash)", logger: self.logger)
        }
    }
}
