-- A user's own feed (issue 38, docs/sync.md): what belongs to a user and to no community (their
-- account, their devices, their family, their notifications of no community) is logged with no
-- community and the user as `user_id`; only that user reads those rows (sql/070_policies.sql).
ALTER TABLE changes ALTER COLUMN community_id DROP NOT NULL;
ALTER TABLE changes ADD CONSTRAINT changes_owner CHECK (community_id IS NOT NULL OR user_id IS NOT NULL);
CREATE INDEX idx_changes_own ON changes (user_id, xid, seq) WHERE community_id IS NULL;
