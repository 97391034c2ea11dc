-- The change feed (issue 20, docs/sync.md): which rows of a community changed, in an order a
-- follower can resume from without ever skipping a commit.
--
-- A trigger on every synced table (sql/085_changes.sql) appends (entity, id, upsert|delete)
-- with the writing transaction's id (`xid`, pg_current_xact_id(): 64 bits, never wraps) and a
-- sequence number. A follower's cursor holds the snapshot up to which it has every change; a
-- pull delivers the changes of the transactions visible in a new snapshot and not in that one,
-- so a transaction that commits late is delivered late, but always. The row's data is not copied
-- here: the feed reads the entity as its own GET returns it, as the follower, at pull time.
CREATE TABLE changes (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    community_id UUID NOT NULL,
    entity TEXT NOT NULL,
    entity_id UUID NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    -- Set for entities only one user may see (their notifications).
    user_id UUID,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);
CREATE INDEX idx_changes_feed ON changes (community_id, xid, seq);
CREATE INDEX idx_changes_created ON changes (created_at);
CREATE INDEX idx_changes_user ON changes (user_id);

ALTER TABLE changes ENABLE ROW LEVEL SECURITY;
ALTER TABLE changes FORCE ROW LEVEL SECURITY;

-- How far compaction has gone: changes written before `cutoff` may be gone, so a cursor issued
-- before it may have missed some and must resync from scratch (410).
CREATE TABLE orbit_private.change_horizon (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    cutoff TIMESTAMP WITH TIME ZONE NOT NULL
);
INSERT INTO orbit_private.change_horizon (cutoff) VALUES ('-infinity');
