-- Account deletion (issue 10; spec: "Account Deletion Flow"): a request starts a 7-day grace
-- period during which it can be cancelled; a scheduled job then anonymizes the account.
ALTER TABLE users ADD COLUMN deletion_requested_at TIMESTAMP WITH TIME ZONE;
CREATE INDEX idx_users_deletion_requested ON users (deletion_requested_at) WHERE deletion_requested_at IS NOT NULL AND deleted_at IS NULL;

-- Retention scans (spec: "Retention Policies").
CREATE INDEX idx_posts_deleted ON posts (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX idx_notifications_created ON notifications (created_at);
CREATE INDEX idx_invites_expires ON invites (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX idx_refresh_tokens_expires ON refresh_tokens (expires_at);
CREATE INDEX idx_audit_created ON audit_log (created_at);
CREATE INDEX idx_communities_deleted ON communities (deleted_at) WHERE deleted_at IS NOT NULL;
