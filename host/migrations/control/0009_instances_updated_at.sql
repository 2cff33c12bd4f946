-- The instances changed since a time: what every node polls for (`ControlDb::changed_since`),
-- in time proportional to the changes rather than to the number of instances.
CREATE INDEX instances_updated_at ON instances (updated_at);
-- The schedules due now: what the flows' and monitors' schedulers look at.
CREATE INDEX flow_schedules_next_at ON flow_schedules (next_at);
CREATE INDEX monitor_schedules_next_at ON monitor_schedules (next_at);
