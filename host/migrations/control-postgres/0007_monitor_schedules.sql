-- Monitor extensions' schedules: when each runs next (on the server's clock), claimed by the node
-- that moves `next_at` on, so that one run happens per due time whatever the number of nodes.
CREATE TABLE monitor_schedules (
    customer_id TEXT COLLATE "C" NOT NULL,
    extension   TEXT COLLATE "C" NOT NULL,
    schedule    TEXT COLLATE "C" NOT NULL,
    sha256      TEXT COLLATE "C" NOT NULL,
    next_at     BIGINT NOT NULL,
    PRIMARY KEY (customer_id, extension)
);
