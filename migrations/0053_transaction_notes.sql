-- Corrections (issue 54, item 3; docs/money.md): an expense or a settlement has notes, up to
-- 2,000 characters.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- The new column is NULL in every row: its CHECK holds (PostgreSQL checks it with one scan).
ALTER TABLE transactions ADD COLUMN notes TEXT CONSTRAINT transactions_notes_length CHECK (char_length(notes) <= 2000);
