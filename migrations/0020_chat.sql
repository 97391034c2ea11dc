-- Chat (issue 22, docs/chat.md): conversations inside a community, their participants with read
-- and delivered watermarks, and messages. Triggers and policies are in sql/057_chat.sql and
-- sql/070_policies.sql.

-- `community`: one per community, every active member takes part (kept by trigger);
-- `group`: chosen members of one community, at most 256; `direct`: two members, one
-- conversation per pair per community (`direct_user_low` < `direct_user_high`).
CREATE TABLE conversations (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('community', 'group', 'direct')),
    title TEXT CHECK (title IS NULL OR char_length(title) BETWEEN 1 AND 100),
    created_by UUID REFERENCES users(id) ON DELETE SET NULL,
    direct_user_low UUID,
    direct_user_high UUID,
    -- Messages are numbered 1, 2, 3… per conversation, in the order they were stored (the
    -- conversation's row lock orders senders): watermarks and pages are positions.
    last_position BIGINT NOT NULL DEFAULT 0,
    last_message_id UUID,
    last_message_sender_id UUID,
    last_message_text TEXT,
    last_message_at TIMESTAMP WITH TIME ZONE,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    CONSTRAINT conversations_direct_pair CHECK (
        (kind = 'direct') = (direct_user_low IS NOT NULL AND direct_user_high IS NOT NULL)
        AND (direct_user_low IS NULL OR direct_user_low < direct_user_high)
    ),
    CONSTRAINT conversations_title_only_groups CHECK (kind = 'group' OR title IS NULL)
);
CREATE UNIQUE INDEX conversations_one_per_community ON conversations (community_id) WHERE kind = 'community';
CREATE UNIQUE INDEX conversations_one_per_pair ON conversations (community_id, direct_user_low, direct_user_high) WHERE kind = 'direct';

CREATE TABLE conversation_participants (
    id UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    conversation_id UUID NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    joined_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    left_at TIMESTAMP WITH TIME ZONE,
    -- The last message read / delivered (its position); only ever raised.
    read_position BIGINT NOT NULL DEFAULT 0 CHECK (read_position >= 0),
    delivered_position BIGINT NOT NULL DEFAULT 0 CHECK (delivered_position >= 0),
    muted_until TIMESTAMP WITH TIME ZONE,
    PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX idx_conversation_participants_user ON conversation_participants (user_id);

CREATE TABLE messages (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    conversation_id UUID NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    sender_id UUID REFERENCES users(id) ON DELETE SET NULL,
    position BIGINT NOT NULL,
    text TEXT CHECK (text IS NULL OR char_length(text) BETWEEN 1 AND 4000),
    -- E2E-ready (spec): ciphertext instead of text, and the scheme's version.
    content_encrypted BYTEA,
    encryption_version INTEGER,
    -- The sender's id for the message: a resend with the same id stores nothing new.
    client_message_id TEXT CHECK (client_message_id IS NULL OR char_length(client_message_id) BETWEEN 1 AND 100),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    edited_at TIMESTAMP WITH TIME ZONE,
    deleted_at TIMESTAMP WITH TIME ZONE,
    CONSTRAINT messages_has_content CHECK (deleted_at IS NOT NULL OR text IS NOT NULL OR content_encrypted IS NOT NULL),
    UNIQUE (conversation_id, position)
);
CREATE UNIQUE INDEX messages_client_id ON messages (sender_id, client_message_id) WHERE client_message_id IS NOT NULL;
-- Row-level security filters on these (SchemaCatalogTests).
CREATE INDEX idx_messages_sender ON messages (sender_id);
CREATE INDEX idx_messages_community ON messages (community_id);

ALTER TABLE conversations ENABLE ROW LEVEL SECURITY;
ALTER TABLE conversations FORCE ROW LEVEL SECURITY;
ALTER TABLE conversation_participants ENABLE ROW LEVEL SECURITY;
ALTER TABLE conversation_participants FORCE ROW LEVEL SECURITY;
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE messages FORCE ROW LEVEL SECURITY;

-- Every existing community gets its conversation, with its active members in it.
INSERT INTO conversations (community_id, kind, created_by)
SELECT id, 'community', created_by FROM communities;
INSERT INTO conversation_participants (conversation_id, user_id, community_id, joined_at)
SELECT c.id, m.user_id, m.community_id, m.joined_at
FROM members m JOIN conversations c ON c.community_id = m.community_id AND c.kind = 'community'
WHERE m.left_at IS NULL;
