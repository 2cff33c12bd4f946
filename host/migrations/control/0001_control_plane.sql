-- The control plane: instances with their settings and data model, API credentials, settings.
CREATE TABLE instances (
    customer_id TEXT PRIMARY KEY,
    settings    TEXT NOT NULL,    -- JSON: environment, licensed UAR, daily cap
    model       TEXT NOT NULL,    -- JSON: the data model as defined by the operator
    revision    INTEGER NOT NULL, -- bumped on every change; nodes reload what changed
    created_at  INTEGER NOT NULL, -- ms since the Unix epoch
    updated_at  INTEGER NOT NULL
);

CREATE TABLE credentials (
    client_id   TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES instances(customer_id),
    secret_hash TEXT NOT NULL,    -- salted SHA-256; the secret itself is never stored
    scope       TEXT NOT NULL CHECK (scope IN ('public', 'app')),
    description TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
CREATE INDEX credentials_by_instance ON credentials(customer_id);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
