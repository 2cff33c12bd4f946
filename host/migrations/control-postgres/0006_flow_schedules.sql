-- Scheduled flows: when each fires next (on the server's clock), claimed by the node that moves
-- `next_at` on, and the progress of its latest firing's sweep over the target recipients.
CREATE TABLE flow_schedules (
    customer_id TEXT COLLATE "C" NOT NULL,
    flow        TEXT COLLATE "C" NOT NULL,
    schedule    TEXT COLLATE "C" NOT NULL,
    next_at     BIGINT NOT NULL,
    fired_at    BIGINT,
    swept       BIGINT NOT NULL DEFAULT 0,
    sweep_done  BIGINT NOT NULL DEFAULT 0,
    swept_at    BIGINT,
    PRIMARY KEY (customer_id, flow)
);
