-- Members in new splits (issue 54, item 5; docs/money.md "Who a new split takes"): Settle Up's
-- member `active` and `defaultWeight`. An inactive member is left out of new splits among
-- everyone (and of the community's default split), and stays in old ones and in balances. A
-- member's default weight is their part in a split by shares that names no weights.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- Constant defaults change only the catalog (PostgreSQL 11 and later): no rewrite.
ALTER TABLE members ADD COLUMN active BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE members ADD COLUMN default_weight INTEGER NOT NULL DEFAULT 1;
-- NOT VALID: every row has the default, 1, so there is nothing to scan for; new rows are checked.
ALTER TABLE members ADD CONSTRAINT members_default_weight CHECK (default_weight BETWEEN 1 AND 1000) NOT VALID;
