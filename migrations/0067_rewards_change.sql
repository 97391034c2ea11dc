-- Rewards change (docs/chores.md, "Rewards change"): a reward is archived as a chore is (off the
-- lists, nobody redeems it; its redemptions stay), and chores, rewards and family members say
-- when they last changed (updated_at, kept by the database: sql/020_timestamps.sql).
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TABLE rewards ADD COLUMN archived_at TIMESTAMP WITH TIME ZONE;
-- now() is stable, not volatile: PostgreSQL keeps the one value in the catalog for the rows there
-- are, without a rewrite. Those rows say they changed at this migration, the latest time they may
-- have.
ALTER TABLE rewards ADD COLUMN updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now();
ALTER TABLE chores ADD COLUMN updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now();
ALTER TABLE family_members ADD COLUMN updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now();
