-- Recurring events (issue 6; spec: "Recurrence Handling": instances are created as needed with
-- recurrence_parent_id, and modifying one instance breaks it from the series).
--
-- * recurrence_timezone: the IANA zone a series' rule is expanded in (the community's
--   settings.timezone when the series was created), so a 6 pm practice stays at 6 pm local
--   across daylight-saving changes even if the community's setting changes later.
-- * original_starts_at: for an instance row, the occurrence of its series it replaces (the
--   iCalendar RECURRENCE-ID). An instance may move (starts_at) but stays that occurrence; a
--   cancelled occurrence is an instance row with deleted_at set.
ALTER TABLE events ADD COLUMN recurrence_timezone TEXT;
ALTER TABLE events ADD COLUMN original_starts_at TIMESTAMP WITH TIME ZONE;

ALTER TABLE events ADD CONSTRAINT events_series_shape CHECK (
    (recurrence_rule IS NULL OR (recurrence_timezone IS NOT NULL AND recurrence_parent_id IS NULL))
    AND (recurrence_parent_id IS NULL OR (original_starts_at IS NOT NULL AND recurrence_rule IS NULL))
);

-- One instance row per occurrence of a series.
CREATE UNIQUE INDEX events_instance_key ON events (recurrence_parent_id, original_starts_at)
    WHERE recurrence_parent_id IS NOT NULL;
-- The series of a community that a calendar window must expand.
CREATE INDEX idx_events_series ON events (community_id, starts_at)
    WHERE recurrence_rule IS NOT NULL AND deleted_at IS NULL;

-- Plus-ones are 0 to 20 (issue 6).
ALTER TABLE rsvps ADD CONSTRAINT rsvps_plus_ones_max CHECK (plus_ones <= 20);
