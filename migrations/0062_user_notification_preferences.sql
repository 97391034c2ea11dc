-- Notification preferences per user (docs/api.md, "Notification preferences"): One By Two's
-- expenses, settlements, reminders and weeklyDigest switches, across every community; a
-- member's switch of a type in one community overrides them there.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- A constant default changes only the catalog (PostgreSQL 11 and later): no rewrite.
ALTER TABLE users ADD COLUMN notification_prefs JSONB NOT NULL DEFAULT '{}';
-- NOT VALID: every row has the default, an object; new rows and changes are checked.
ALTER TABLE users ADD CONSTRAINT users_notification_prefs_object CHECK (jsonb_typeof(notification_prefs) = 'object') NOT VALID;
