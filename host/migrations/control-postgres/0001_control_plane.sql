-- The control plane on PostgreSQL (schema `herald`): the same tables as on SQLite
-- (migrations/control), milliseconds as BIGINT.
CREATE TABLE instances (
    customer_id TEXT COLLATE "C" PRIMARY KEY,
    settings    TEXT COLLATE "C" NOT NULL,
    model       TEXT COLLATE "C" NOT NULL,
    revision    BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE TABLE credentials (
    client_id   TEXT COLLATE "C" PRIMARY KEY,
    customer_id TEXT COLLATE "C" NOT NULL REFERENCES instances(customer_id),
    secret_hash TEXT COLLATE "C" NOT NULL,
    scope       TEXT COLLATE "C" NOT NULL CHECK (scope IN ('public', 'app')),
    description TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX credentials_by_instance ON credentials(customer_id);

CREATE TABLE settings (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value TEXT COLLATE "C" NOT NULL
);
