-- Chat, live (issue 22, item 4; docs/chat.md): chat in the change feed, presence, chat pushes.

-- A change of a conversation, its participants or its messages is seen only by the
-- conversation's participants (sql/070_policies.sql); the column says which conversation.
ALTER TABLE changes ADD COLUMN conversation_id UUID;
CREATE INDEX idx_changes_conversation ON changes (conversation_id);

-- A push for a chat message (to a participant without a live socket); marked read when the
-- participant's read watermark passes the message.
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'chat_message';

-- Presence: shown to people who share a community with the user, unless they turn it off.
ALTER TABLE users ADD COLUMN presence_visible BOOLEAN NOT NULL DEFAULT true;
-- When the user's last live socket closed.
ALTER TABLE users ADD COLUMN last_seen_at TIMESTAMP WITH TIME ZONE;

-- The open `GET /live` sockets of every server: a user is online while one of theirs is fresh.
-- A server refreshes `seen_at` of its sockets every 30 s and deletes a socket's row when it
-- closes; rows of a server that stopped go stale (90 s) and the retention job removes them.
-- Written and read by servers as orbit_admin only; people see presence through orbit.presence().
CREATE TABLE live_connections (
    id UUID PRIMARY KEY,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    server_id UUID NOT NULL,
    opened_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    seen_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);
CREATE INDEX idx_live_connections_user ON live_connections (user_id, seen_at);
CREATE INDEX idx_live_connections_server ON live_connections (server_id);
ALTER TABLE live_connections ENABLE ROW LEVEL SECURITY;
ALTER TABLE live_connections FORCE ROW LEVEL SECURITY;
