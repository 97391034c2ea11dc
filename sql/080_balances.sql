-- Balances per (community, user, currency) (spec: "Balances (Materialized View)"; DESIGN.md:
-- the relation `balances`, positive = is owed).
--
-- For each non-deleted transaction with payer P and each unsettled split (user u, amount m):
-- P += m and u -= m. Every split adds +m and -m, so a community's balances in one currency
-- always sum to zero. A split of the payer's own share nets out to zero for the payer.
--
-- `balances`, the relation orbit_app reads, aggregates on demand. It is a security_invoker
-- view, so the row-level security of transactions and splits applies to the reader: it shows
-- the reader's communities only, and it is exact immediately after every commit. The
-- materialized snapshot (orbit_private.balances_snapshot) holds the same numbers as of its
-- last refresh, for operators and reports; orbit_app cannot reach its schema. The README's
-- benchmark (`orbit-bench schema`) compares reading the two.

DROP MATERIALIZED VIEW IF EXISTS orbit_private.balances_snapshot;

-- One ledger line per side of each unsettled split: +amount for the payer, -amount for the
-- split's user.
CREATE OR REPLACE VIEW orbit.balance_entries WITH (security_invoker = true) AS
SELECT t.community_id, side.user_id, t.currency, side.amount, greatest(t.updated_at, s.updated_at) AS changed_at
FROM public.transactions t
JOIN public.splits s ON s.transaction_id = t.id
CROSS JOIN LATERAL (VALUES (t.paid_by, s.amount::bigint), (s.user_id, -s.amount::bigint)) AS side(user_id, amount)
WHERE t.deleted_at IS NULL AND NOT s.is_settled;

CREATE OR REPLACE VIEW public.balances WITH (security_invoker = true) AS
SELECT community_id, user_id, currency, sum(amount)::bigint AS balance, max(changed_at) AS last_updated
FROM orbit.balance_entries
GROUP BY community_id, user_id, currency;

COMMENT ON VIEW public.balances IS
    'Balance per community, user and currency in minor units; positive = is owed. Exact at every commit.';

CREATE MATERIALIZED VIEW orbit_private.balances_snapshot AS
SELECT community_id, user_id, currency, sum(amount)::bigint AS balance, now() AS last_updated
FROM orbit.balance_entries
GROUP BY community_id, user_id, currency;

-- REFRESH MATERIALIZED VIEW CONCURRENTLY needs a unique index covering all rows.
CREATE UNIQUE INDEX balances_snapshot_key ON orbit_private.balances_snapshot (community_id, user_id, currency);

-- orbit_admin (BYPASSRLS) owns the snapshot, so a refresh sees every community whoever
-- created it: `SET ROLE orbit_admin; REFRESH MATERIALIZED VIEW CONCURRENTLY
-- orbit_private.balances_snapshot;`
ALTER MATERIALIZED VIEW orbit_private.balances_snapshot OWNER TO orbit_admin;
