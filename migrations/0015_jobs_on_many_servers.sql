-- Scheduled jobs that any number of servers run at once.
--
-- Delivery: a server claims a batch of undelivered notifications (FOR UPDATE SKIP LOCKED) by
-- writing its claim and the time into them, and marks a row delivered only while its claim is
-- still the one there. A server that dies holding a claim leaves the batch to the others once
-- the lease (five minutes, in the service) has passed.
ALTER TABLE notifications ADD COLUMN delivery_claim UUID;
ALTER TABLE notifications ADD COLUMN delivery_claimed_at TIMESTAMP WITH TIME ZONE;

-- Reminders look at every community's upcoming events in one statement, not one community
-- after another: one-off events and single occurrences by their start, and the live series.
CREATE INDEX idx_events_upcoming ON events (starts_at) WHERE deleted_at IS NULL AND recurrence_rule IS NULL;
CREATE INDEX idx_events_live_series ON events (starts_at) WHERE deleted_at IS NULL AND recurrence_rule IS NOT NULL;

-- Dues reminders: the active dues due in the next few days, across communities.
CREATE INDEX idx_dues_due ON dues (due_date) WHERE is_active;
