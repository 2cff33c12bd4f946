CREATE TABLE extension_jobs (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               TEXT COLLATE "C" NOT NULL UNIQUE,
    customer_id      TEXT COLLATE "C" NOT NULL,
    extension        TEXT COLLATE "C" NOT NULL,
    state            TEXT COLLATE "C" NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts         BIGINT NOT NULL DEFAULT 0,
    accepted_at      BIGINT NOT NULL,
    started_at       BIGINT,
    finished_at      BIGINT,
    method           TEXT COLLATE "C" NOT NULL,
    uri              TEXT COLLATE "C" NOT NULL,
    headers          TEXT COLLATE "C" NOT NULL,
    body             BYTEA NOT NULL,
    response_status  BIGINT,
    response_headers TEXT COLLATE "C",
    response_body    BYTEA,
    outcome          TEXT COLLATE "C"
);
CREATE INDEX extension_jobs_queued ON extension_jobs(state, customer_id, seq);
CREATE INDEX extension_jobs_finished ON extension_jobs(finished_at) WHERE finished_at IS NOT NULL;
