import Foundation
import GRDB

/// The SQLite store's schema: named migrations as frozen SQL, with the same identifiers as PostgreSQL's.
enum SQLiteSchema {
    /// Named migrations as frozen SQL: never change one once shipped (a test checksums them), never build one from
    /// the application's types; add a new one.
    static let migrations: [(identifier: String, sql: String)] = [
        (
            "v1-transactions-documents-transitions-submissions",
            """
            CREATE TABLE transactions (
                id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
                verificationCode TEXT NOT NULL,
                envId TEXT,
                submissionStatus TEXT NOT NULL CHECK (submissionStatus IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED')),
                createdAt DATETIME NOT NULL,
                updatedAt DATETIME NOT NULL,
                expiresAt DATETIME NOT NULL,
                signals TEXT
            );
            CREATE TABLE documentStatuses (
                transactionId TEXT NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
                documentType TEXT NOT NULL CHECK (documentType IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                requirement TEXT NOT NULL CHECK (requirement IN ('REQUIRED', 'OPTIONAL')),
                status TEXT NOT NULL CHECK (status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')),
                PRIMARY KEY (transactionId, documentType)
            );
            CREATE TABLE documents (
                id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
                transactionId TEXT NOT NULL,
                documentType TEXT NOT NULL,
                fields TEXT NOT NULL,
                source TEXT NOT NULL,
                contentHash TEXT NOT NULL,
                createdAt DATETIME NOT NULL,
                FOREIGN KEY (transactionId, documentType) REFERENCES documentStatuses(transactionId, documentType)
            );
            CREATE INDEX documentsByTransaction ON documents(transactionId);
            CREATE TABLE transitions (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                transactionId TEXT NOT NULL REFERENCES transactions(id),
                documentType TEXT CHECK (documentType IS NULL OR documentType IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                fromStatus TEXT NOT NULL,
                toStatus TEXT NOT NULL,
                at DATETIME NOT NULL,
                reason TEXT NOT NULL,
                CHECK ((documentType IS NULL AND fromStatus IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED') AND toStatus IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED'))
                    OR (documentType IS NOT NULL AND fromStatus IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED') AND toStatus IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')))
            );
            CREATE INDEX transitionsByTransaction ON transitions(transactionId, sequence);
            CREATE TABLE submissions (
                documentId TEXT PRIMARY KEY NOT NULL REFERENCES documents(id),
                attempts INTEGER NOT NULL CHECK (attempts >= 0),
                outcome TEXT NOT NULL CHECK (outcome IN ('PENDING','ACCEPTED','FAILED')),
                error TEXT,
                updatedAt DATETIME NOT NULL
            );
            """
        ),
        (
            "v2-protect-behavior-and-risk",
            """
            ALTER TABLE transactions ADD COLUMN behavior TEXT;
            ALTER TABLE transactions ADD COLUMN riskEvaluation TEXT;
            """
        ),
        // Writes name the version they were decided on (`StatusChanges`): another process's change in between is seen.
        (
            "v3-transaction-versions",
            """
            ALTER TABLE transactions ADD COLUMN version INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0);
            """
        ),
        // Protect's state leaves the transaction's row for a table of its own, one JSON document per transaction
        // that the Protect module defines; the store only keeps it.
        (
            "v4-protect-states",
            """
            CREATE TABLE protectStates (
                transactionId TEXT PRIMARY KEY NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
                state TEXT NOT NULL CHECK (json_valid(state))
            );
            INSERT INTO protectStates (transactionId, state)
                SELECT id, json_object('behavior', CASE WHEN json_valid(behavior) THEN json(behavior) END,
                                       'riskEvaluation', riskEvaluation)
                FROM transactions WHERE behavior IS NOT NULL OR riskEvaluation IS NOT NULL;
            ALTER TABLE transactions DROP COLUMN behavior;
            ALTER TABLE transactions DROP COLUMN riskEvaluation;
            """
        ),
        // A submission is claimed (owner and expiry) before it is sent: processes sharing the store send it once.
        (
            "v5-submission-claims",
            """
            ALTER TABLE submissions ADD COLUMN claimOwner TEXT;
            ALTER TABLE submissions ADD COLUMN claimExpiresAt DATETIME;
            """
        ),
        // Identity data at rest: the data key, wrapped by the key-encryption key (one row), and when a transaction's
        // data was purged by the retention policy.
        (
            "v6-store-keys-and-purges",
            """
            CREATE TABLE storeKeys (
                id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                wrappedKey TEXT NOT NULL,
                createdAt DATETIME NOT NULL,
                rotatedAt DATETIME
            );
            ALTER TABLE transactions ADD COLUMN purgedAt DATETIME;
            """
        ),
        // The operator's view pages through transactions by their last change, counts them by status and counts
        // recent collections, each from an index however large the store.
        (
            "v7-operator-view-indexes",
            """
            CREATE INDEX transactionsByUpdate ON transactions(updatedAt, id);
            CREATE INDEX transactionsByStatus ON transactions(submissionStatus);
            CREATE INDEX transitionsByTime ON transitions(at);
            """
        ),
        // Document ids and content hashes are keyed with a secret of the store's own (one row, sealed in an encrypted
        // store); the documents of an earlier version are renamed when a store opens (`openIdentity`).
        (
            "v8-document-identity",
            """
            CREATE TABLE documentIdentity (
                id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
                secret TEXT NOT NULL,
                createdAt DATETIME NOT NULL
            );
            """
        ),
        // The operator's view's browser sessions (`OperatorSessions`): a session id's HMAC under the token, with its
        // expiry, so that a sign-out ends it for every `serve` process on the store and a restart keeps it.
        (
            "v9-operator-sessions",
            """
            CREATE TABLE operatorSessions (
                idHash TEXT PRIMARY KEY NOT NULL CHECK (length(idHash) = 64),
                createdAt DATETIME NOT NULL,
                expiresAt DATETIME NOT NULL
            );
            CREATE INDEX operatorSessionsByExpiry ON operatorSessions(expiresAt);
            """
        ),
        // Document ids become random: a document is recognised by its content fingerprint (HMAC under the document
        // secret, unique in its transaction and type, emptied by a purge), made again from its sealed digest when the secret
        // changes. Each document is its type's revision in its transaction, which names its submission. The documents
        // an earlier release named from their content are renamed when a store opens (`openIdentity`).
        (
            "v10-random-document-ids",
            """
            ALTER TABLE documents ADD COLUMN revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1);
            ALTER TABLE documents ADD COLUMN contentDigest TEXT;
            UPDATE documents SET revision = 1 + (
                SELECT count(*) FROM documents earlier
                WHERE earlier.transactionId = documents.transactionId AND earlier.documentType = documents.documentType
                    AND (earlier.createdAt < documents.createdAt OR (earlier.createdAt = documents.createdAt AND earlier.id < documents.id)));
            CREATE UNIQUE INDEX documentsByRevision ON documents(transactionId, documentType, revision);
            CREATE UNIQUE INDEX documentsByFingerprint ON documents(transactionId, documentType, contentHash) WHERE contentHash <> '';
            ALTER TABLE documentIdentity ADD COLUMN randomIds INTEGER NOT NULL DEFAULT 0 CHECK (randomIds IN (0, 1));
            """
        ),
        // The review loop: every failed document, one review per document type of a transaction (and one per failure
        // tied to none), with its error, attempts and sealed inputs, open until an operator or a later document closes it.
        (
            "v11-reviews",
            """
            CREATE TABLE reviews (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                transactionId TEXT REFERENCES transactions(id),
                documentType TEXT CHECK (documentType IS NULL OR documentType IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                kind TEXT NOT NULL CHECK (kind IN ('capture','submission','unattached')),
                code TEXT NOT NULL,
                message TEXT NOT NULL,
                field TEXT,
                source TEXT NOT NULL,
                attempt INTEGER NOT NULL CHECK (attempt >= 1),
                failedAt DATETIME NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('open','accepted','replayed','rejected','resolved')),
                inputs TEXT,
                inputsBytes INTEGER NOT NULL DEFAULT 0,
                inputsState TEXT NOT NULL CHECK (inputsState IN ('kept','none','too-large','store-full','purged','expired')),
                documentId TEXT,
                claimOwner TEXT,
                claimExpiresAt DATETIME,
                pendingState TEXT,
                resolvedBy TEXT,
                resolvedAt DATETIME,
                resolution TEXT,
                note TEXT,
                CHECK ((transactionId IS NULL) = (kind = 'unattached'))
            );
            CREATE UNIQUE INDEX reviewsByDocument ON reviews(transactionId, documentType) WHERE transactionId IS NOT NULL;
            CREATE INDEX reviewsByState ON reviews(state, code);
            """
        )
    ]

    /// GRDB's migrator reads which migrations are applied before each one's (immediate) transaction, so two processes
    /// opening a new file together could both apply one. Each migration therefore looks again inside its own transaction;
    /// when another process applied it meanwhile, it gives way and the migrator starts over.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        for (identifier, sql) in migrations {
            migrator.registerMigration(identifier) { db in
                let applied =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
                        arguments: [identifier]) ?? false
                if applied { throw AppliedElsewhere() }
                try db.execute(sql: sql)
            }
        }
        return migrator
    }()

    struct AppliedElsewhere: Error {}

    /// Migrates, giving way to another process migrating the same file (at most once per migration).
    static func migrate(_ writer: any DatabaseWriter) throws {
        for _ in 0...migrations.count {
            do {
                try migrator.migrate(writer)
                return
            } catch is AppliedElsewhere {
                continue
            }
        }
        try migrator.migrate(writer)
    }

    /// Opens the database for a store: refused when a newer release wrote it; a command that only reads (`readOnly`)
    /// migrates nothing and refuses a schema that misses migrations; the others bring it up to date.
    static func prepare(_ writer: any DatabaseWriter, location: String, readOnly: Bool) throws {
        if try writer.read({ db in try migrator.hasBeenSuperseded(db) }) { throw StoreError.newerSchema(location) }
        guard readOnly else { return try migrate(writer) }
        let applied = try writer.read { db in try migrator.appliedIdentifiers(db) }
        let missing = migrations.filter { !applied.contains($0.identifier) }.count
        if missing > 0 { throw StoreError.olderSchema(location, missing: missing) }
    }
}
