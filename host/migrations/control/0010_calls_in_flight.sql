-- Calls in flight per instance across every node (PostgreSQL: several nodes share the limit of
-- 20). `calls_in_flight_total` is what admission checks and moves in one statement (its row
-- lock orders concurrent admissions of one instance); `calls_in_flight` says which node holds
-- how many, so that the slots of a node that stopped beating are given back by the others.
CREATE TABLE calls_in_flight_total (
    customer_id TEXT PRIMARY KEY,
    held        INTEGER NOT NULL
);
CREATE TABLE calls_in_flight (
    customer_id TEXT NOT NULL,
    node        TEXT NOT NULL,
    held        INTEGER NOT NULL,
    PRIMARY KEY (customer_id, node)
);
