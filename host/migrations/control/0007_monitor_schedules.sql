-- Monitor extensions' schedules: when each runs next (on the server's clock), claimed by the node
-- that moves `next_at` on, so that one run happens per due time whatever the number of nodes.
CREATE TABLE monitor_schedules (
    customer_id TEXT NOT NULL,
    extension   TEXT NOT NULL,     -- the monitor's extension id
    schedule    TEXT NOT NULL,     -- the schedule next_at was computed from
    sha256      TEXT NOT NULL,     -- the component the schedule was read from
    next_at     INTEGER NOT NULL,  -- ms since the Unix epoch
    PRIMARY KEY (customer_id, extension)
);
