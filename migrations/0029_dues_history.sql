-- Dues in money's history (issue 24, item 6; docs/money.md, "History"): creating, changing or
-- deactivating dues and recording a payment each write a row of money_activity (entity 'dues'),
-- by trigger (sql/060_split_sums.sql, orbit.record_dues_activity), so that every way dues are
-- written — `dues create`, the recurring-charges job, an edit, a payment — is recorded. A
-- payment is the new action 'paid'.
ALTER TABLE money_activity DROP CONSTRAINT money_activity_action_check;
ALTER TABLE money_activity ADD CONSTRAINT money_activity_action_check
    CHECK (action IN ('created', 'edited', 'deleted', 'settled', 'paid'));
