-- Where a firing's sweep has been counted up to (the last recipient key of the last batch
-- counted; NULL before its first): a batch run again after a node died is not counted twice.
ALTER TABLE flow_schedules ADD COLUMN swept_after BIGINT;
