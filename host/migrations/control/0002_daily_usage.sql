-- Calls counted against the daily cap, per instance and UTC day (YYYY-MM-DD). Nodes add their
-- counts here every second; the sum is the instance's usage.
CREATE TABLE daily_usage (
    customer_id TEXT NOT NULL,
    day         TEXT NOT NULL,
    calls       INTEGER NOT NULL,
    PRIMARY KEY (customer_id, day)
);
