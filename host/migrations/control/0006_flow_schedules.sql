-- Scheduled flows: when each fires next (on the server's clock), claimed by the node that moves
-- `next_at` on, and the progress of its latest firing's sweep over the target recipients.
CREATE TABLE flow_schedules (
    customer_id TEXT NOT NULL,
    flow        TEXT NOT NULL,
    schedule    TEXT NOT NULL,     -- the cron expression next_at was computed from
    next_at     INTEGER NOT NULL,  -- ms since the Unix epoch
    fired_at    INTEGER,           -- the latest firing
    swept       INTEGER NOT NULL DEFAULT 0,  -- recipients its sweep has started runs for
    sweep_done  INTEGER NOT NULL DEFAULT 0,  -- 1 once the sweep went through every recipient
    swept_at    INTEGER,           -- when its sweep last finished a batch (a live sweep moves)
    PRIMARY KEY (customer_id, flow)
);
