-- "My groups" (docs/api.md, "Archived communities"): an admin archives a community; it becomes
-- read-only (sql/830_archive.sql), keeps its money, is listed only on request, and can be
-- unarchived.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- A NULL column changes only the catalog.
ALTER TABLE communities ADD COLUMN archived_at TIMESTAMPTZ;
