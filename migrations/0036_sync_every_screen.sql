-- The change feed, without silent gaps (issue 38; docs/sync.md).
--
-- Compaction is judged by transaction, not by time: it records the newest transaction whose
-- changes it removed, and a cursor whose snapshot's xmin is not past that may lack one of them
-- (410). By time, a cursor was judged by when its snapshot was taken, while a transaction that
-- began before the cutoff could commit after that moment, its changes already removed.
ALTER TABLE orbit_private.change_horizon ADD COLUMN compacted_through xid8 NOT NULL DEFAULT '0';

-- A family member's rename is a change of every expense with a split for them
-- (sql/085_changes.sql, orbit.record_rename): found by this index, not by reading every split.
CREATE INDEX idx_splits_family_member ON splits (family_member_id) WHERE family_member_id IS NOT NULL;
