-- What each instance's extensions used, per UTC day (YYYY-MM-DD): processor time and time waiting
-- for a turn (microseconds), executions by outcome, outbound requests and bytes, rows written
-- through the platform's interfaces, and the instance's storage (the most measured that day).
-- Every node adds its own counts (ops/usage.rs); the sums are the instance's usage.
CREATE TABLE extension_usage (
    customer_id       TEXT NOT NULL,
    day               TEXT NOT NULL,
    cpu_us            INTEGER NOT NULL,
    wait_us           INTEGER NOT NULL,
    calls_ok          INTEGER NOT NULL,
    calls_error       INTEGER NOT NULL,
    calls_deadline    INTEGER NOT NULL,
    calls_cpu         INTEGER NOT NULL,
    calls_memory      INTEGER NOT NULL,
    calls_trap        INTEGER NOT NULL,
    calls_fault       INTEGER NOT NULL,
    outbound_requests INTEGER NOT NULL,
    outbound_bytes    INTEGER NOT NULL,
    rows_written      INTEGER NOT NULL,
    storage_bytes     INTEGER NOT NULL,
    PRIMARY KEY (customer_id, day)
);
