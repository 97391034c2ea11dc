-- Ready for end-to-end encryption (issue 40, item 3; 002 "v1.1 - E2E Encryption Migration";
-- docs/e2e.md). Posts and comments get the seed's columns, as chat messages already have them:
-- `content_encrypted` (the client's ciphertext, stored and returned byte for byte) and
-- `encryption_version` (the version of the community key it was encrypted with; 0 = plaintext).
-- A row holds ciphertext or plaintext, never both.
ALTER TABLE posts ADD COLUMN content_encrypted BYTEA;
ALTER TABLE posts ADD COLUMN encryption_version INTEGER NOT NULL DEFAULT 0 CHECK (encryption_version >= 0);
ALTER TABLE posts ADD CONSTRAINT posts_ciphertext_or_plaintext CHECK (
    content_encrypted IS NULL AND encryption_version = 0 OR content_encrypted IS NOT NULL AND encryption_version > 0 AND content IS NULL);

-- A comment has text or ciphertext (its content was NOT NULL).
ALTER TABLE comments ALTER COLUMN content DROP NOT NULL;
ALTER TABLE comments ADD COLUMN content_encrypted BYTEA;
ALTER TABLE comments ADD COLUMN encryption_version INTEGER NOT NULL DEFAULT 0 CHECK (encryption_version >= 0);
ALTER TABLE comments ADD CONSTRAINT comments_ciphertext_or_plaintext CHECK (
    content_encrypted IS NULL AND encryption_version = 0 AND content IS NOT NULL
    OR content_encrypted IS NOT NULL AND encryption_version > 0 AND content IS NULL);

-- Messages had the columns (migration 0020) with nothing written to them yet.
ALTER TABLE messages ADD CONSTRAINT messages_ciphertext_or_plaintext CHECK (
    content_encrypted IS NULL OR encryption_version > 0 AND text IS NULL);

-- The community's key, wrapped for each member (the seed's table): a member's client unwraps
-- `encrypted_key` with its own private key. A new version is recorded for the remaining
-- members when someone leaves (docs/e2e.md, "Re-keying").
CREATE TABLE community_keys (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    encrypted_key BYTEA NOT NULL CHECK (octet_length(encrypted_key) BETWEEN 1 AND 4096),
    key_version INTEGER NOT NULL CHECK (key_version > 0),
    created_by UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    CONSTRAINT community_keys_one_per_member_and_version UNIQUE (community_id, key_version, user_id)
);
CREATE INDEX idx_community_keys_user ON community_keys (user_id);

-- Each user's public key (for instance X25519), which the member who re-keys wraps the
-- community key for.
CREATE TABLE user_public_keys (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id UUID NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    public_key BYTEA NOT NULL CHECK (octet_length(public_key) BETWEEN 1 AND 1024),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

-- Each community's current key version, one row kept by a trigger on community_keys: new content
-- checks it FOR SHARE, so a post racing a re-key waits for it and is then checked against the new
-- version (or, in REPEATABLE READ, fails to serialize and is retried). Only the triggers, as
-- orbit_admin, touch it.
CREATE TABLE community_key_versions (
    community_id UUID PRIMARY KEY REFERENCES communities(id) ON DELETE CASCADE,
    current_version INTEGER NOT NULL CHECK (current_version > 0)
);

ALTER TABLE community_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE community_keys FORCE ROW LEVEL SECURITY;
ALTER TABLE user_public_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE user_public_keys FORCE ROW LEVEL SECURITY;
ALTER TABLE community_key_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE community_key_versions FORCE ROW LEVEL SECURITY;
