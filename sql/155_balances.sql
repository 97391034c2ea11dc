-- orbit:isolation repeatable-read
-- (The migrator runs this file in one REPEATABLE READ transaction: the snapshot below is
-- computed with, and recorded as, that transaction's MVCC snapshot.)
--
-- The Settlements domain's balances (sql/README.md): this file owns the balances snapshot, the
-- `balances` view, the pairs' snapshot and `pair_balances` view (who owes whom),
-- orbit.balance_entries, the journal's triggers, their functions and the rights on them. It
-- grants them itself: it drops and recreates the views whenever it runs.
--
-- Balances per (community, user, currency) (spec: "Balances (Materialized View)"):
-- the relation `balances`, positive = is owed.
--
-- For each non-deleted transaction with payer P and each unsettled split (user u, amount m):
-- P += m and u -= m. Every split adds +m and -m, so a community's balances in one currency
-- always sum to zero. A split of the payer's own share nets out to zero for the payer.
--
-- `balances`, the relation orbit_app reads, is the materialized snapshot
-- (orbit_private.balances_snapshot, refreshed concurrently) plus the journal of changes its
-- snapshot did not see (migrations/0011): exact immediately after every commit, and nearly as
-- cheap to read as the snapshot when refreshed regularly. It shows orbit_app the reader's
-- communities only. `orbit-bench money` compares it with the plain aggregate.

-- Wait for every transaction that has written to the journal, and keep new ones out until this
-- file commits: the snapshot below then sees all of their lines, and every line written after
-- comes from this file's functions (migrations/0050: each names its counterparty). A LOCK does not
-- fix the REPEATABLE READ snapshot; the first query after it does.
LOCK TABLE orbit_private.balance_journal IN EXCLUSIVE MODE;

DROP VIEW IF EXISTS public.pair_balances;
DROP VIEW IF EXISTS public.balances;
DROP MATERIALIZED VIEW IF EXISTS orbit_private.pair_balances_snapshot;
DROP MATERIALIZED VIEW IF EXISTS orbit_private.balances_snapshot;
DROP VIEW IF EXISTS orbit.balance_entries;

-- One ledger line per side of each unsettled split: +amount for the payer, -amount for the
-- split's user; an income's (migrations/0056) the other way round: its receiver (paid_by) owes
-- each share, -amount for the receiver and +amount for the split's user. With several payers
-- (migrations/0023), each payer row (p, a) adds the two lines of p paying a on paid_by's behalf:
-- +a for p, -a for paid_by (zero for paid_by's own row); an income has none (sql/150).
-- Each line names its counterparty, the other side (who owes the +amount, whom the -amount is
-- owed to), and its transaction: the pairs (`pair_balances`) and the entries behind them.
CREATE VIEW orbit.balance_entries WITH (security_invoker = true) AS
SELECT t.community_id, side.user_id, t.currency, side.amount, greatest(t.updated_at, s.updated_at) AS changed_at,
    side.counterparty_id, t.id AS transaction_id
FROM public.transactions t
JOIN public.splits s ON s.transaction_id = t.id
CROSS JOIN LATERAL (VALUES (CASE WHEN t.type = 'income' THEN -s.amount::bigint ELSE s.amount::bigint END)) AS owed(amount)
CROSS JOIN LATERAL (VALUES (t.paid_by, owed.amount, s.user_id), (s.user_id, -owed.amount, t.paid_by))
    AS side(user_id, amount, counterparty_id)
WHERE t.deleted_at IS NULL AND NOT s.is_settled
UNION ALL
SELECT t.community_id, side.user_id, t.currency, side.amount, greatest(t.updated_at, p.created_at) AS changed_at,
    side.counterparty_id, t.id AS transaction_id
FROM public.transactions t
JOIN public.transaction_payers p ON p.transaction_id = t.id
CROSS JOIN LATERAL (VALUES (p.user_id, p.amount::bigint, t.paid_by), (t.paid_by, -p.amount::bigint, p.user_id))
    AS side(user_id, amount, counterparty_id)
WHERE t.deleted_at IS NULL AND p.user_id <> t.paid_by;

CREATE MATERIALIZED VIEW orbit_private.balances_snapshot AS
SELECT community_id, user_id, currency, sum(amount)::bigint AS balance, now() AS last_updated
FROM orbit.balance_entries
GROUP BY community_id, user_id, currency;

-- REFRESH MATERIALIZED VIEW CONCURRENTLY needs a unique index covering all rows.
CREATE UNIQUE INDEX balances_snapshot_key ON orbit_private.balances_snapshot (community_id, user_id, currency);
-- One person's balances across their communities ("my groups", GET /communities).
CREATE INDEX balances_snapshot_user ON orbit_private.balances_snapshot (user_id);

-- The same lines per pair: what `counterparty_id` owes `user_id` (negative: is owed by), both
-- directions kept, so that one person's pairs are one index range. A split of the payer's own
-- share is no pair.
CREATE MATERIALIZED VIEW orbit_private.pair_balances_snapshot AS
SELECT community_id, user_id, counterparty_id, currency, sum(amount)::bigint AS balance, now() AS last_updated
FROM orbit.balance_entries
WHERE user_id <> counterparty_id
GROUP BY community_id, user_id, counterparty_id, currency;

CREATE UNIQUE INDEX pair_balances_snapshot_key ON orbit_private.pair_balances_snapshot (community_id, user_id, counterparty_id, currency);

-- orbit_admin (BYPASSRLS) owns the snapshot, so a refresh sees every community whoever
-- created it. Refresh only through OrbitServices.refreshBalancesSnapshot (`orbitctl balances
-- refresh`), which records the snapshot it used; a bare REFRESH would desynchronize the two.
ALTER MATERIALIZED VIEW orbit_private.balances_snapshot OWNER TO orbit_admin;
ALTER MATERIALIZED VIEW orbit_private.pair_balances_snapshot OWNER TO orbit_admin;

-- The view was just computed with this transaction's snapshot: record it, and drop the journal
-- entries it contains (those of transactions still running stay).
DELETE FROM orbit_private.balance_snapshot_state;
INSERT INTO orbit_private.balance_snapshot_state (singleton, snapshot, refreshed_at) VALUES (TRUE, pg_current_snapshot(), now());
DELETE FROM orbit_private.balance_journal j USING orbit_private.balance_snapshot_state state
WHERE pg_visible_in_snapshot(j.xid, state.snapshot);

-- What orbit_app reads: snapshot + journal since; limited to the reader's communities (operators, orbit_admin, see all). It runs as its owner,
-- orbit_admin, so the private tables stay out of orbit_app's reach.
CREATE VIEW public.balances AS
WITH state AS (SELECT snapshot FROM orbit_private.balance_snapshot_state),
entries AS (
    SELECT s.community_id, s.user_id, s.currency, s.balance AS amount, s.last_updated AS changed_at
    FROM orbit_private.balances_snapshot s
    UNION ALL
    SELECT j.community_id, j.user_id, j.currency, j.delta, j.changed_at
    FROM orbit_private.balance_journal j, state
    WHERE NOT pg_visible_in_snapshot(j.xid, state.snapshot)
)
SELECT community_id, user_id, currency, sum(amount)::bigint AS balance, max(changed_at) AS last_updated
FROM entries
WHERE current_user <> 'orbit_app' OR community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
GROUP BY community_id, user_id, currency;

ALTER VIEW public.balances OWNER TO orbit_admin;

COMMENT ON VIEW public.balances IS
    'Balance per community, user and currency in minor units; positive = is owed. Exact at every commit.';

-- Who owes whom: the same snapshot and journal per pair. A person's pairs sum to their balance.
CREATE VIEW public.pair_balances AS
WITH state AS (SELECT snapshot FROM orbit_private.balance_snapshot_state),
entries AS (
    SELECT s.community_id, s.user_id, s.counterparty_id, s.currency, s.balance AS amount, s.last_updated AS changed_at
    FROM orbit_private.pair_balances_snapshot s
    UNION ALL
    SELECT j.community_id, j.user_id, j.counterparty_id, j.currency, j.delta, j.changed_at
    FROM orbit_private.balance_journal j, state
    WHERE NOT pg_visible_in_snapshot(j.xid, state.snapshot) AND j.user_id <> j.counterparty_id
)
SELECT community_id, user_id, counterparty_id, currency, sum(amount)::bigint AS balance, max(changed_at) AS last_updated
FROM entries
WHERE current_user <> 'orbit_app' OR community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
GROUP BY community_id, user_id, counterparty_id, currency;

ALTER VIEW public.pair_balances OWNER TO orbit_admin;

COMMENT ON VIEW public.pair_balances IS
    'What counterparty_id owes user_id per community and currency, in minor units (negative = is owed by). Exact at every commit.';



-- The journal: every change of a ledger line, in the changing transaction. (An income's split
-- lines have the signs turned, as in orbit.balance_entries.)
CREATE OR REPLACE FUNCTION orbit.journal_split() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    owed bigint;
BEGIN
    IF TG_OP <> 'INSERT' AND NOT OLD.is_settled THEN
        SELECT community_id, paid_by, currency, deleted_at, type INTO t FROM public.transactions WHERE id = OLD.transaction_id;
        IF FOUND AND t.deleted_at IS NULL THEN
            owed := CASE WHEN t.type = 'income' THEN -OLD.amount ELSE OLD.amount END;
            INSERT INTO orbit_private.balance_journal (community_id, user_id, counterparty_id, currency, delta)
            VALUES (t.community_id, t.paid_by, OLD.user_id, t.currency, -owed), (t.community_id, OLD.user_id, t.paid_by, t.currency, owed);
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' AND NOT NEW.is_settled THEN
        SELECT community_id, paid_by, currency, deleted_at, type INTO t FROM public.transactions WHERE id = NEW.transaction_id;
        IF FOUND AND t.deleted_at IS NULL THEN
            owed := CASE WHEN t.type = 'income' THEN -NEW.amount ELSE NEW.amount END;
            INSERT INTO orbit_private.balance_journal (community_id, user_id, counterparty_id, currency, delta)
            VALUES (t.community_id, t.paid_by, NEW.user_id, t.currency, owed), (t.community_id, NEW.user_id, t.paid_by, t.currency, -owed);
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- Payer rows (migrations/0023): +a for the payer, -a for paid_by, the reverse when a row goes.
CREATE OR REPLACE FUNCTION orbit.journal_payer() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        SELECT community_id, paid_by, currency, deleted_at INTO t FROM public.transactions WHERE id = OLD.transaction_id;
        IF FOUND AND t.deleted_at IS NULL AND OLD.user_id <> t.paid_by THEN
            INSERT INTO orbit_private.balance_journal (community_id, user_id, counterparty_id, currency, delta)
            VALUES (t.community_id, OLD.user_id, t.paid_by, t.currency, -OLD.amount), (t.community_id, t.paid_by, OLD.user_id, t.currency, OLD.amount);
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        SELECT community_id, paid_by, currency, deleted_at INTO t FROM public.transactions WHERE id = NEW.transaction_id;
        IF FOUND AND t.deleted_at IS NULL AND NEW.user_id <> t.paid_by THEN
            INSERT INTO orbit_private.balance_journal (community_id, user_id, counterparty_id, currency, delta)
            VALUES (t.community_id, NEW.user_id, t.paid_by, t.currency, NEW.amount), (t.community_id, t.paid_by, NEW.user_id, t.currency, -NEW.amount);
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- A transaction deleted (soft or hard), restored, or given another payer or currency moves all
-- of its lines: those of its unsettled splits and of its payer rows. (Change paid_by in a
-- statement of its own, not in one that also changes the transaction's splits or payers: the
-- lines are recomputed from the rows as they are when the trigger fires.)
CREATE OR REPLACE FUNCTION orbit.journal_transaction() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF OLD.deleted_at IS NULL THEN
        INSERT INTO orbit_private.balance_journal (community_id, user_id, counterparty_id, currency, delta)
        SELECT OLD.community_id, side.user_id, side.counterparty_id, OLD.currency, side.delta
        FROM public.splits s
        CROSS JOIN LATERAL (VALUES (CASE WHEN OLD.type = 'income' THEN -s.amount::bigint ELSE s.amount::bigint END)) AS owed(amount)
        CROSS JOIN LATERAL (VALUES (OLD.paid_by, s.user_id, -owed.amount), (s.user_id, OLD.paid_by, owed.amount)) AS side(user_id, counterparty_id, delta)
        WHERE s.transaction_id = OLD.id AND NOT s.is_settled
        UNION ALL
        SELECT OLD.community_id, side.user_id, side.counterparty_id, OLD.currency, side.delta
        FROM public.transaction_payers p
        CROSS JOIN LATERAL (VALUES (p.user_id, OLD.paid_by, -p.amount::bigint), (OLD.paid_by, p.user_id, p.amount::bigint)) AS side(user_id, counterparty_id, delta)
        WHERE p.transaction_id = OLD.id AND p.user_id <> OLD.paid_by;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.deleted_at IS NULL THEN
        INSERT INTO orbit_private.balance_journal (community_id, user_id, counterparty_id, currency, delta)
        SELECT NEW.community_id, side.user_id, side.counterparty_id, NEW.currency, side.delta
        FROM public.splits s
        CROSS JOIN LATERAL (VALUES (CASE WHEN NEW.type = 'income' THEN -s.amount::bigint ELSE s.amount::bigint END)) AS owed(amount)
        CROSS JOIN LATERAL (VALUES (NEW.paid_by, s.user_id, owed.amount), (s.user_id, NEW.paid_by, -owed.amount)) AS side(user_id, counterparty_id, delta)
        WHERE s.transaction_id = NEW.id AND NOT s.is_settled
        UNION ALL
        SELECT NEW.community_id, side.user_id, side.counterparty_id, NEW.currency, side.delta
        FROM public.transaction_payers p
        CROSS JOIN LATERAL (VALUES (p.user_id, NEW.paid_by, p.amount::bigint), (NEW.paid_by, p.user_id, -p.amount::bigint)) AS side(user_id, counterparty_id, delta)
        WHERE p.transaction_id = NEW.id AND p.user_id <> NEW.paid_by;
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NULL END;
END
$$;

ALTER FUNCTION orbit.journal_split() OWNER TO orbit_admin;
ALTER FUNCTION orbit.journal_transaction() OWNER TO orbit_admin;
ALTER FUNCTION orbit.journal_payer() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_splits_journal ON splits;
CREATE TRIGGER trigger_splits_journal AFTER INSERT OR UPDATE OF amount, user_id, is_settled OR DELETE ON splits
    FOR EACH ROW EXECUTE FUNCTION orbit.journal_split();
DROP TRIGGER IF EXISTS trigger_transactions_journal ON transactions;
CREATE TRIGGER trigger_transactions_journal AFTER UPDATE OF deleted_at, paid_by, currency ON transactions
    FOR EACH ROW WHEN (OLD.deleted_at IS DISTINCT FROM NEW.deleted_at OR OLD.paid_by IS DISTINCT FROM NEW.paid_by
                       OR OLD.currency IS DISTINCT FROM NEW.currency)
    EXECUTE FUNCTION orbit.journal_transaction();
-- Before a hard delete, while the splits are still there (the cascade removes them next).
DROP TRIGGER IF EXISTS trigger_transactions_journal_delete ON transactions;
CREATE TRIGGER trigger_transactions_journal_delete BEFORE DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION orbit.journal_transaction();
DROP TRIGGER IF EXISTS trigger_transaction_payers_journal ON transaction_payers;
CREATE TRIGGER trigger_transaction_payers_journal AFTER INSERT OR UPDATE OF amount, user_id OR DELETE ON transaction_payers
    FOR EACH ROW EXECUTE FUNCTION orbit.journal_payer();

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON public.balances, public.pair_balances, orbit.balance_entries FROM orbit_app, orbit_admin;
GRANT SELECT ON public.balances, public.pair_balances, orbit.balance_entries TO orbit_app;
GRANT ALL ON public.balances, public.pair_balances TO orbit_admin;
GRANT SELECT ON orbit.balance_entries TO orbit_admin;
-- The snapshot, its state and the journal (orbit_private) are orbit_admin's, their owner's,
-- alone: no file grants anything on them.
REVOKE ALL ON FUNCTION orbit.journal_split(), orbit.journal_payer(), orbit.journal_transaction() FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.journal_split(), orbit.journal_payer(), orbit.journal_transaction() TO orbit_admin;
