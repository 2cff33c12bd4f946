-- Nodes (server processes) that run asynchronous executions, with their last sign of life. A job
-- records the node running it; when that node stops beating, another node queues the job again.
CREATE TABLE nodes (
    id           TEXT COLLATE "C" PRIMARY KEY,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);
ALTER TABLE extension_jobs ADD COLUMN node TEXT COLLATE "C";
CREATE INDEX extension_jobs_running ON extension_jobs(node) WHERE state = 'running';
