-- What each instance's extensions used, per UTC day (YYYY-MM-DD): processor time and time waiting
-- for a turn (microseconds), executions by outcome, outbound requests and bytes, rows written
-- through the platform's interfaces, and the instance's storage (the most measured that day).
-- Every node adds its own counts (ops/usage.rs); the sums are the instance's usage.
CREATE TABLE extension_usage (
    customer_id       TEXT COLLATE "C" NOT NULL,
    day               TEXT COLLATE "C" NOT NULL,
    cpu_us            BIGINT NOT NULL,
    wait_us           BIGINT NOT NULL,
    calls_ok          BIGINT NOT NULL,
    calls_error       BIGINT NOT NULL,
    calls_deadline    BIGINT NOT NULL,
    calls_cpu         BIGINT NOT NULL,
    calls_memory      BIGINT NOT NULL,
    calls_trap        BIGINT NOT NULL,
    calls_fault       BIGINT NOT NULL,
    outbound_requests BIGINT NOT NULL,
    outbound_bytes    BIGINT NOT NULL,
    rows_written      BIGINT NOT NULL,
    storage_bytes     BIGINT NOT NULL,
    PRIMARY KEY (customer_id, day)
);
