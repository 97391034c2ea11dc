-- Notifications (issue 10): scheduled reminders carry a dedupe key so that a job run twice, or
-- two jobs at once, never notify the same person twice for the same cause; delivery to devices
-- marks delivered_at.
ALTER TABLE notifications ADD COLUMN dedupe_key TEXT;
ALTER TABLE notifications ADD COLUMN delivered_at TIMESTAMP WITH TIME ZONE;
CREATE UNIQUE INDEX notifications_dedupe_key ON notifications (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX idx_notifications_undelivered ON notifications (created_at) WHERE delivered_at IS NULL;
