-- Who owes whom, pair by pair (issue 54, item 2; docs/money.md "Who owes whom"): every ledger line
-- has another side, the person it is owed by or owed to. The journal now keeps that person with
-- each line, so the pairs can be read as the balances are: a snapshot plus the journal since
-- (sql/155_balances.sql), never by aggregating the ledger.
--
-- Rows written before this column existed have none. sql/155_balances.sql, which runs after this
-- migration, first waits for every transaction that wrote to the journal (LOCK … EXCLUSIVE), then
-- recomputes both snapshots and prunes every row they contain: no row without a counterparty
-- survives it, and its functions write one on every row after.
-- A nullable column without a default changes only the catalog: the lock is brief, but waits
-- behind the transactions writing to the journal; give up rather than queue every writer behind it.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TABLE orbit_private.balance_journal ADD COLUMN counterparty_id UUID;
