import Crypto
import Foundation
import Testing

@testable import TransactionStore

/// Shipped migrations are frozen: a database migrated by an earlier release must see the same schema as a new one.
/// Changing a shipped migration's SQL fails here; a change to the schema is a new migration, with a new line below.
@Suite("Shipped migrations never change")
struct MigrationTests {
    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    @Test("SQLite migrations: names, order and SQL as shipped")
    func sqlite() {
        let shipped = SQLiteTransactionStore.migrations.map { "\($0.identifier) \(Self.digest($0.sql))" }
        #expect(shipped == [
            "v1-transactions-documents-transitions-submissions d7eaa2d3318e1405d3fbfbe0c218a8bfd77fd9682f6c35259620104451893f4b",
            "v2-protect-behavior-and-risk 78e88843fdb0d60e0e5cadebea86570ef3d97f409e5b234c698596c3a7df8ecc",
            "v3-transaction-versions a31f8115aaa3fe0723c5e3bce3c4287ade665cf2e71313a79ef39c9ed90d1219",
        ])
    }

    @Test("PostgreSQL migrations: names, order and SQL as shipped")
    func postgres() {
        let shipped = PostgresTransactionStore.migrations.map { "\($0.0) \(Self.digest($0.1.joined(separator: ";\n")))" }
        #expect(shipped == [
            "v1-transactions-documents-transitions-submissions 9275bb43ab1bca1c74a034605adda4cb0db56e84570ed53ba47983621f1f7c3c",
            "v2-protect-behavior-and-risk 10fd0cfc529a3dd76b180b3db3744ea0848f3a04319ef03c905c24b4d3321f1b",
            "v3-work-queue 27730b944afc898691e94cca3579231c4c6ef930faf7a3133f33074ecbb3dd75",
            "v4-work-groups 2051d6793c3c83a8e21f7d119f7df1c77d5e1f226d511281a20f474da2fcbdd3",
            "v5-transaction-versions 02718b98836f3b7e2a49784695b174c5ae536e241b83e2da4193eda3a814c2f4",
        ])
    }
}
