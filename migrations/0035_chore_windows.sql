-- Chores: no free points from the past (issue 37, item 8; docs/chores.md).
--
-- completion_window_days: how many days back an occurrence may still be marked done (today and
-- the N days before, in the chore's zone; 7 unless the parent sets another, 0 to 31). Without
-- it a daily chore set a year ago could be "done" 365 times today. sql/058 refuses an occurrence
-- older than the window whoever writes (chore_completions_within_window); a one-off chore without
-- a due time has no window (its one occurrence is "whenever").
ALTER TABLE chores ADD COLUMN completion_window_days SMALLINT NOT NULL DEFAULT 7
    CONSTRAINT chores_completion_window CHECK (completion_window_days BETWEEN 0 AND 31);

-- recurrence_ends_at: the last occurrence of a rule with COUNT or UNTIL (NULL: endless, or not
-- computed yet). With it a COUNT rule is expanded as the same rule UNTIL that instant, from the
-- period before the window asked for instead of from its first occurrence, and the "due soon"
-- job skips series that have ended. The services compute it; a change of the rule, its start or
-- its zone clears it (sql/058).
ALTER TABLE chores ADD COLUMN recurrence_ends_at TIMESTAMP WITH TIME ZONE;
