-- What the change log costs a write (issue 38). Compaction finds old changes by time, oldest
-- first: a BRIN range over `created_at` (which follows the insertion order) costs an insert
-- almost nothing, where a B-tree was one more entry per change; compaction takes its batches in
-- `seq` order.
DROP INDEX idx_changes_created;
CREATE INDEX idx_changes_created ON changes USING brin (created_at);
-- Each server reads the log for its live updates (LiveListener: the transactions committed
-- since its last read, by transaction id) instead of every writer notifying at commit.
CREATE INDEX idx_changes_xid ON changes (xid);
