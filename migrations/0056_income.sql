-- Income (issue 54, item 4; docs/money.md "Income"): Settle Up's negative expense. Money one
-- member received for the group (a refund, a sale), shared among those it is for: the receiver
-- (paid_by) owes each of them their share. Its ledger lines are an expense's with the signs
-- turned (sql/155_balances.sql). Adding a value to an enum rewrites nothing; it comes after the
-- spec's three.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TYPE transaction_type ADD VALUE IF NOT EXISTS 'income' AFTER 'dues';

-- Money's history names an income's changes as such. The check is replaced by a wider one in the
-- same transaction: no moment without it.
-- squawk-ignore ban-drop-constraint
ALTER TABLE money_activity DROP CONSTRAINT money_activity_entity_check;
-- NOT VALID: every row there satisfies the narrower check it replaces, so there is nothing to
-- scan for; new rows are checked all the same.
ALTER TABLE money_activity ADD CONSTRAINT money_activity_entity_check CHECK (entity IN ('expense', 'settlement', 'dues', 'income')) NOT VALID;
