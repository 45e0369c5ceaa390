import Foundation
import PostgresNIO

/// The PostgreSQL store's schema: named migrations as frozen SQL, applied in order under an advisory lock so that
/// processes starting together agree. Their identifiers are the SQLite store's (`SQLiteSchema`).
enum PostgresSchema {
    /// Named migrations as frozen SQL, applied in order under an advisory lock so that workers starting together
    /// agree. Never change one once shipped (a test checksums them); add a new one.
    static let migrations: [(String, [String])] = [
        (
            "v1-transactions-documents-transitions-submissions",
            [
                """
                CREATE TABLE transactions (
                    id text PRIMARY KEY CHECK (length(id) > 0),
                    verification_code text NOT NULL,
                    env_id text,
                    submission_status text NOT NULL CHECK (submission_status IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED')),
                    created_at timestamptz NOT NULL,
                    updated_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL,
                    signals text
                )
                """,
                """
                CREATE TABLE document_statuses (
                    transaction_id text NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
                    document_type text NOT NULL CHECK (document_type IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                    requirement text NOT NULL CHECK (requirement IN ('REQUIRED', 'OPTIONAL')),
                    status text NOT NULL CHECK (status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')),
                    PRIMARY KEY (transaction_id, document_type)
                )
                """,
                """
                CREATE TABLE documents (
                    id text PRIMARY KEY CHECK (length(id) > 0),
                    transaction_id text NOT NULL,
                    document_type text NOT NULL,
                    fields text NOT NULL,
                    source text NOT NULL,
                    content_hash text NOT NULL,
                    created_at timestamptz NOT NULL,
                    FOREIGN KEY (transaction_id, document_type) REFERENCES document_statuses(transaction_id, document_type)
                )
                """,
                "CREATE INDEX documents_by_transaction ON documents(transaction_id)",
                """
                CREATE TABLE transitions (
                    sequence bigserial PRIMARY KEY,
                    transaction_id text NOT NULL REFERENCES transactions(id),
                    document_type text CHECK (document_type IS NULL OR document_type IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                    from_status text NOT NULL,
                    to_status text NOT NULL,
                    at timestamptz NOT NULL,
                    reason text NOT NULL,
                    CHECK ((document_type IS NULL AND from_status IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED') AND to_status IN ('NOT_STARTED','STARTED','PROCESS','COMPLETED'))
                        OR (document_type IS NOT NULL AND from_status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED') AND to_status IN ('REQUIRED','OPTIONAL','COLLECTED','PROCESSED','SKIPPED')))
                )
                """,
                "CREATE INDEX transitions_by_transaction ON transitions(transaction_id, sequence)",
                """
                CREATE TABLE submissions (
                    document_id text PRIMARY KEY REFERENCES documents(id),
                    attempts integer NOT NULL CHECK (attempts >= 0),
                    outcome text NOT NULL CHECK (outcome IN ('PENDING','ACCEPTED','FAILED')),
                    error text,
                    updated_at timestamptz NOT NULL
                )
                """
            ]
        ),
        (
            "v2-protect-behavior-and-risk",
            [
                "ALTER TABLE transactions ADD COLUMN behavior text",
                "ALTER TABLE transactions ADD COLUMN risk_evaluation text"
            ]
        ),
        // Writes name the version they were decided on (`StatusChanges`): a change by another worker in between is seen.
        (
            "v3-transaction-versions",
            [
                "ALTER TABLE transactions ADD COLUMN version bigint NOT NULL DEFAULT 0 CHECK (version >= 0)"
            ]
        ),
        // Protect's state leaves the transaction's row for a table of its own, one JSON document per transaction
        // that the Protect module defines; the store only keeps it.
        (
            "v4-protect-states",
            [
                """
                CREATE TABLE protect_states (
                    transaction_id text PRIMARY KEY REFERENCES transactions(id) ON DELETE CASCADE,
                    state jsonb NOT NULL
                )
                """,
                """
                INSERT INTO protect_states (transaction_id, state)
                SELECT id, jsonb_build_object('behavior', behavior::jsonb, 'riskEvaluation', risk_evaluation)
                FROM transactions WHERE behavior IS NOT NULL OR risk_evaluation IS NOT NULL
                """,
                "ALTER TABLE transactions DROP COLUMN behavior, DROP COLUMN risk_evaluation"
            ]
        ),
        // A submission is claimed (owner and expiry) before it is sent: processes sharing the store send it once.
        (
            "v5-submission-claims",
            [
                """
                ALTER TABLE submissions ADD COLUMN claim_owner text, ADD COLUMN claim_expires_at timestamptz,
                    ADD CONSTRAINT submission_claims_whole CHECK ((claim_owner IS NULL) = (claim_expires_at IS NULL))
                """
            ]
        ),
        // Identity data at rest: the data key, wrapped by the key-encryption key (one row), and when a
        // transaction's data was purged by the retention policy.
        (
            "v6-store-keys-and-purges",
            [
                """
                CREATE TABLE store_keys (
                    id integer PRIMARY KEY CHECK (id = 1),
                    wrapped_key text NOT NULL,
                    created_at timestamptz NOT NULL,
                    rotated_at timestamptz
                )
                """,
                "ALTER TABLE transactions ADD COLUMN purged_at timestamptz"
            ]
        ),
        // The operator's view pages through transactions by their last change, counts them by status and counts
        // recent collections, each from an index however large the store.
        (
            "v7-operator-view-indexes",
            [
                "CREATE INDEX transactions_by_update ON transactions(updated_at, id)",
                "CREATE INDEX transactions_by_status ON transactions(submission_status)",
                "CREATE INDEX transitions_by_time ON transitions(at)"
            ]
        ),
        // Document ids and content hashes are keyed with a secret of the store's own (one row, sealed in an
        // encrypted store); the documents of an earlier version are renamed when a store opens (`openIdentity`),
        // their submissions following the new id.
        (
            "v8-document-identity",
            [
                """
                CREATE TABLE document_identity (
                    id integer PRIMARY KEY CHECK (id = 1),
                    secret text NOT NULL,
                    created_at timestamptz NOT NULL
                )
                """,
                """
                ALTER TABLE submissions DROP CONSTRAINT submissions_document_id_fkey,
                    ADD CONSTRAINT submissions_document_id_fkey FOREIGN KEY (document_id) REFERENCES documents(id) ON UPDATE CASCADE
                """
            ]
        ),
        // The operator's view's browser sessions (`OperatorSessions`): a session id's HMAC under the token, with its
        // expiry, so that a sign-out ends it for every `serve` process on the store and a restart keeps it.
        (
            "v9-operator-sessions",
            [
                """
                CREATE TABLE operator_sessions (
                    id_hash text PRIMARY KEY CHECK (length(id_hash) = 64),
                    created_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX operator_sessions_by_expiry ON operator_sessions(expires_at)"
            ]
        ),
        // Document ids become random: a document is recognised by its content fingerprint (HMAC under the document
        // secret, unique in its transaction and type, emptied by a purge), made again from its sealed digest when the secret
        // changes. Each document is its type's revision in its transaction, which names its submission. The documents
        // an earlier release named from their content are renamed when a store opens (`openIdentity`).
        (
            "v10-random-document-ids",
            [
                "ALTER TABLE documents ADD COLUMN revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1), ADD COLUMN content_digest text",
                """
                UPDATE documents d SET revision = r.revision FROM (
                    SELECT id, row_number() OVER (PARTITION BY transaction_id, document_type ORDER BY created_at, id COLLATE "C") AS revision
                    FROM documents
                ) r WHERE d.id = r.id
                """,
                "CREATE UNIQUE INDEX documents_by_revision ON documents(transaction_id, document_type, revision)",
                "CREATE UNIQUE INDEX documents_by_fingerprint ON documents(transaction_id, document_type, content_hash) WHERE content_hash <> ''",
                "ALTER TABLE document_identity ADD COLUMN random_ids boolean NOT NULL DEFAULT false"
            ]
        ),
        // The review loop: every failed document, one review per document type of a transaction (and one per failure
        // tied to none), with its error, attempts and sealed inputs, open until an operator or a later document closes it.
        (
            "v11-reviews",
            [
                """
                CREATE TABLE reviews (
                    id bigserial PRIMARY KEY,
                    transaction_id text REFERENCES transactions(id),
                    document_type text CHECK (document_type IS NULL OR document_type IN ('GOVERNMENT_ID','SELFIE','EMAIL','PHONE','VOICE')),
                    kind text NOT NULL CHECK (kind IN ('capture','submission','unattached')),
                    code text NOT NULL,
                    message text NOT NULL,
                    field text,
                    source text NOT NULL,
                    attempt integer NOT NULL CHECK (attempt >= 1),
                    failed_at timestamptz NOT NULL,
                    state text NOT NULL CHECK (state IN ('open','accepted','replayed','rejected','resolved')),
                    inputs text,
                    inputs_bytes bigint NOT NULL DEFAULT 0,
                    inputs_state text NOT NULL CHECK (inputs_state IN ('kept','none','too-large','store-full','purged','expired')),
                    document_id text,
                    claim_owner text,
                    claim_expires_at timestamptz,
                    pending_state text,
                    resolved_by text,
                    resolved_at timestamptz,
                    resolution text,
                    note text,
                    CHECK ((transaction_id IS NULL) = (kind = 'unattached'))
                )
                """,
                "CREATE UNIQUE INDEX reviews_by_document ON reviews(transaction_id, document_type) WHERE transaction_id IS NOT NULL",
                "CREATE INDEX reviews_by_state ON reviews(state, code)"
            ]
        )
    ]

    /// The work queue's migrations, recorded in this ledger until they moved to the queue's own.
    static let retiredMigrations: Set<String> = ["v3-work-queue", "v4-work-groups"]

    /// The identifiers releases before the alignment with SQLite's recorded, and what each is now: a database they
    /// migrated is adopted (its ledger rewritten) by the next command that writes, and read as it is meanwhile.
    static let adopted: [String: String] = [
        "v5-transaction-versions": "v3-transaction-versions",
        "v6-protect-states": "v4-protect-states",
        "v7-submission-claims": "v5-submission-claims",
        "v8-store-keys-and-purges": "v6-store-keys-and-purges",
        "v9-operator-view-indexes": "v7-operator-view-indexes",
        "v10-document-identity": "v8-document-identity"
    ]

    static let ledger = "schema_migrations"

    /// Adopts an earlier release's identifiers, applies the missing migrations; refuses a database that has migrations
    /// this version does not know.
    static func migrate(_ database: StoreDatabase) async throws {
        try await database.migrate(ledger: ledger, migrations, retired: retiredMigrations, renamed: adopted)
    }

    /// For commands that open an existing store: the database must already hold a store of a version this one reads;
    /// `complete` (commands that only read): with every migration of this version applied.
    static func requireSchema(_ database: StoreDatabase, complete: Bool) async throws {
        try await database.requireMigrations(ledger: ledger, migrations, retired: retiredMigrations, renamed: adopted, complete: complete)
    }
}
