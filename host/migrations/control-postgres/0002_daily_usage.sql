CREATE TABLE daily_usage (
    customer_id TEXT COLLATE "C" NOT NULL,
    day         TEXT COLLATE "C" NOT NULL,
    calls       BIGINT NOT NULL,
    PRIMARY KEY (customer_id, day)
);
