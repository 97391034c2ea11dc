-- A parent who is not an admin sets rewards for their own children (docs/chores.md): such a
-- reward names the parent (family_of), and only that parent's children redeem it.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- NULL for every reward there is (an admin's, for everyone): only the catalog changes. No foreign
-- key, as an account is anonymized, never deleted (LifecycleService), and a key would need an
-- index on rewards to check a user's removal.
ALTER TABLE rewards ADD COLUMN family_of UUID;
-- Row-level security filters on it (rewards_update: a parent changes their own family's), and
-- every such column leads a full index (SchemaCatalogTests). rewards is small (a household's few
-- dozen), so the build's write lock is short; on a large database build it first by hand,
-- `CREATE INDEX CONCURRENTLY IF NOT EXISTS rewards_family_of ON rewards (family_of)`, and this
-- finds it (docs/operations.md, "Migrations on a large, live database").
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX IF NOT EXISTS rewards_family_of ON rewards (family_of);
