-- A job's payload is not only an HTTP request: `kind` says what it is ('http': method, uri,
-- headers and body hold the request; other kinds, such as flow steps and monitor runs, keep
-- their own payload as JSON in `payload`).
ALTER TABLE extension_jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'http';
ALTER TABLE extension_jobs ADD COLUMN payload TEXT;
-- Jobs due later (a flow run's `wait`): kept apart from the queue, so that the dispatcher's
-- skip scan of queued work never meets them, and moved into `extension_jobs` once due.
CREATE TABLE delayed_jobs (
    id          TEXT NOT NULL PRIMARY KEY,
    customer_id TEXT NOT NULL,
    extension   TEXT NOT NULL,
    kind        TEXT NOT NULL,
    payload     TEXT,
    due_at      INTEGER NOT NULL  -- ms since the Unix epoch, on the server's clock
);
CREATE INDEX delayed_jobs_due ON delayed_jobs(due_at);
