-- The weekly digest (docs/money.md, "Who hears about money"): One By Two's weeklyDigest, per
-- user, Monday morning in the user's own time zone (users.timezone, an IANA name the service
-- checks; UTC while unset), once per week by its dedupe key.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'weekly_digest' AFTER 'debt_reminder';
-- No default: only the catalog changes, no rewrite.
ALTER TABLE users ADD COLUMN timezone TEXT;
