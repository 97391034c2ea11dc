-- Debt reminders (docs/money.md, "Who hears about money"): Settle Up's remindOldDebts. Once a
-- week, for communities that turn it on (settings.remindOldDebts), everyone who has owed more than
-- the community's threshold for longer than its number of days is reminded; the dedupe key of
-- the week keeps it to one per debt and week with any number of servers.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'debt_reminder' AFTER 'nudge';
