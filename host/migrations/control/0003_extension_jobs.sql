-- Executions of asynchronous extensions. A row is written (and committed) before the caller gets
-- its 202, so nothing accepted is lost to a crash. `seq` orders the queue; `id` is the caller's
-- unguessable queueId. A finished row keeps the extension's response until the retention ends.
CREATE TABLE extension_jobs (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    customer_id      TEXT NOT NULL,
    extension        TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    accepted_at      INTEGER NOT NULL,  -- ms since the Unix epoch, on the server's clock
    started_at       INTEGER,
    finished_at      INTEGER,
    method           TEXT NOT NULL,
    uri              TEXT NOT NULL,     -- what the extension receives: /{path}?{query}
    headers          TEXT NOT NULL,     -- JSON [[name, value], ...]
    body             BLOB NOT NULL,
    response_status  INTEGER,
    response_headers TEXT,
    response_body    BLOB,
    outcome          TEXT               -- why a failed execution failed (for the operator)
);
-- The dispatcher's question: which instances have queued work, and their oldest job.
CREATE INDEX extension_jobs_queued ON extension_jobs(state, customer_id, seq);
-- The retention sweep.
CREATE INDEX extension_jobs_finished ON extension_jobs(finished_at) WHERE finished_at IS NOT NULL;
