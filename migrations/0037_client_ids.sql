-- Offline writes survive any time offline (issue 38, item 3; docs/sync.md, "Offline writes").
--
-- A create may carry the id the client generated for the entity. Each such create leaves its
-- fingerprint here, for as long as its author exists: a replay of any age is recognised (the
-- same author and the same request: the stored entity, 200), and the same id with other content
-- is refused (409). Idempotency keys, kept 24 hours, cannot do that for a phone away a weekend.
-- Written only by orbit.take_client_id() (sql/086_client_ids.sql), read only through
-- orbit.client_create_match(); orbit_app has no right on the schema.
CREATE TABLE orbit_private.client_creates (
    entity_id UUID PRIMARY KEY,
    -- The table the entity went into (posts, transactions, chores, ...).
    entity_table TEXT NOT NULL,
    -- Its author: a user, or a signed-in child.
    user_id UUID REFERENCES users (id) ON DELETE CASCADE,
    family_member_id UUID REFERENCES family_members (id) ON DELETE CASCADE,
    -- SHA-256 of the request: its method, path and canonical JSON body.
    fingerprint BYTEA NOT NULL CHECK (octet_length(fingerprint) = 32),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    CHECK ((user_id IS NULL) <> (family_member_id IS NULL))
);
CREATE INDEX idx_client_creates_user ON orbit_private.client_creates (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX idx_client_creates_family_member ON orbit_private.client_creates (family_member_id) WHERE family_member_id IS NOT NULL;
