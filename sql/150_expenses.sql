-- Expenses (sql/README.md): transactions (expenses; settlements and dues are transactions too),
-- their splits and payers, and money's history (money_activity). This file owns the sums checked
-- at commit, an expense's recorded state, the policies of transactions, splits,
-- transaction_payers and money_activity and the rights on them and on its functions, including
-- the split functions migration 0028 created (orbit.plain_split_fits, orbit.split_input_fits),
-- which it now defines.
-- (Exchange rates and the currency functions are sql/145_rates.sql's, balances
-- sql/155_balances.sql's, dues sql/160_dues.sql's; a split's user and a payer are members by
-- sql/030_tenancy_integrity.sql.)

-- The sum of a transaction's splits equals its total_amount (spec: Splits, "Sum of split
-- amounts should equal transaction total"), checked by PostgreSQL at commit.
--
-- A deferred constraint trigger checks each touched transaction when the database transaction
-- commits, so the service can insert a transaction and its splits, or replace splits, in any
-- order in between. It fires on every change that can break the rule: a new transaction, a
-- changed total, and any insert, update or delete of a split.
CREATE OR REPLACE FUNCTION orbit.check_split_sum() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    checked_id uuid;
    total bigint;
    split_sum bigint;
BEGIN
    IF TG_TABLE_NAME = 'transactions' THEN
        checked_id := NEW.id;
    ELSIF TG_OP = 'DELETE' THEN
        checked_id := OLD.transaction_id;
    ELSE
        checked_id := NEW.transaction_id;
    END IF;
    SELECT t.total_amount INTO total FROM public.transactions t WHERE t.id = checked_id;
    IF NOT FOUND THEN
        RETURN NULL; -- the transaction was deleted, and its splits with it
    END IF;
    SELECT coalesce(sum(s.amount), 0) INTO split_sum FROM public.splits s WHERE s.transaction_id = checked_id;
    IF split_sum <> total THEN
        RAISE EXCEPTION 'the splits of transaction % add up to %, not its total_amount %', checked_id, split_sum, total
            USING ERRCODE = 'check_violation', CONSTRAINT = 'splits_sum_total', TABLE = 'splits';
    END IF;
    RETURN NULL;
END
$$;

ALTER FUNCTION orbit.check_split_sum() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_transactions_split_sum ON transactions;
CREATE CONSTRAINT TRIGGER trigger_transactions_split_sum
    AFTER INSERT OR UPDATE OF total_amount ON transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION orbit.check_split_sum();
DROP TRIGGER IF EXISTS trigger_splits_sum ON splits;
CREATE CONSTRAINT TRIGGER trigger_splits_sum
    AFTER INSERT OR UPDATE OF amount, transaction_id OR DELETE ON splits
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION orbit.check_split_sum();

-- Several payers (migrations/0023): when a transaction lists payers, their amounts add up to its
-- total_amount and its paid_by is one of them; checked at commit, like the splits, on every
-- change that can break it (a new or changed total or paid_by, any change to a payer row).
CREATE OR REPLACE FUNCTION orbit.check_payer_sum() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    checked_id uuid;
    t record;
    payer_sum bigint;
    payer_count bigint;
    main_payer_listed boolean;
BEGIN
    IF TG_TABLE_NAME = 'transactions' THEN
        checked_id := NEW.id;
    ELSIF TG_OP = 'DELETE' THEN
        checked_id := OLD.transaction_id;
    ELSE
        checked_id := NEW.transaction_id;
    END IF;
    SELECT total_amount, paid_by, type INTO t FROM public.transactions WHERE id = checked_id;
    IF NOT FOUND THEN
        RETURN NULL; -- the transaction was deleted, and its payers with it
    END IF;
    SELECT coalesce(sum(p.amount), 0), count(*), coalesce(bool_or(p.user_id = t.paid_by), false)
    INTO payer_sum, payer_count, main_payer_listed
    FROM public.transaction_payers p WHERE p.transaction_id = checked_id;
    -- An income (migrations/0056) has one receiver, paid_by: its ledger turns only split lines.
    IF payer_count > 0 AND t.type = 'income' THEN
        RAISE EXCEPTION 'transaction % is an income: it has one receiver (paid_by), no payer rows', checked_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transaction_payers_not_on_income', TABLE = 'transaction_payers';
    END IF;
    IF payer_count > 0 AND payer_sum <> t.total_amount THEN
        RAISE EXCEPTION 'the payers of transaction % add up to %, not its total_amount %', checked_id, payer_sum, t.total_amount
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transaction_payers_sum_total', TABLE = 'transaction_payers';
    END IF;
    IF payer_count > 0 AND NOT main_payer_listed THEN
        RAISE EXCEPTION 'paid_by of transaction % is not one of its payers', checked_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transaction_payers_include_paid_by', TABLE = 'transaction_payers';
    END IF;
    RETURN NULL;
END
$$;

ALTER FUNCTION orbit.check_payer_sum() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_transactions_payer_sum ON transactions;
CREATE CONSTRAINT TRIGGER trigger_transactions_payer_sum
    AFTER UPDATE OF total_amount, paid_by ON transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION orbit.check_payer_sum();
DROP TRIGGER IF EXISTS trigger_transaction_payers_sum ON transaction_payers;
CREATE CONSTRAINT TRIGGER trigger_transaction_payers_sum
    AFTER INSERT OR UPDATE OF amount, user_id, transaction_id OR DELETE ON transaction_payers
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION orbit.check_payer_sum();

-- A receipt (migrations/0059) is an image uploaded to the transaction's own community, checked
-- for every writer when it is set or changed.
CREATE OR REPLACE FUNCTION orbit.check_receipt_media() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.receipt_media_id IS NOT DISTINCT FROM OLD.receipt_media_id THEN
        RETURN NEW;
    END IF;
    IF NOT EXISTS (
        SELECT FROM public.media m WHERE m.id = NEW.receipt_media_id AND m.community_id = NEW.community_id AND m.type = 'image'
    ) THEN
        RAISE EXCEPTION 'receipt % is not an image uploaded to this community', NEW.receipt_media_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_receipt_media', TABLE = 'transactions';
    END IF;
    RETURN NEW;
END
$$;

ALTER FUNCTION orbit.check_receipt_media() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_transactions_receipt_media ON transactions;
CREATE TRIGGER trigger_transactions_receipt_media BEFORE INSERT OR UPDATE OF receipt_media_id ON transactions
    FOR EACH ROW WHEN (NEW.receipt_media_id IS NOT NULL) EXECUTE FUNCTION orbit.check_receipt_media();

-- What a transaction is, as money's history (money_activity) records it before and after a
-- change: its fields, the split as entered, payers (paid_by alone when it has no payer rows) and splits. Runs as the
-- caller: it shows what the caller may see.
--
-- This function and the two split checks below are PL/pgSQL, not SQL, and pin no search_path:
-- PostgreSQL cannot inline them (each holds a sub-select), and a SQL function that is not inlined
-- is planned again at every call, where PL/pgSQL keeps its plans for the session; a pinned
-- search_path would cost each call a GUC save and restore. Every table is qualified and every
-- function called is pg_catalog's (always searched first) or qualified. They run on every expense
-- written: as SQL, a tenth of the server's time for an expense with 10 splits (docs/benchmarks.md,
-- "Adding an expense").
CREATE OR REPLACE FUNCTION orbit.expense_state(transaction_id uuid) RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (
        SELECT jsonb_build_object(
            'type', t.type, 'description', t.description, 'total_amount', t.total_amount, 'currency', t.currency,
            'paid_by', t.paid_by, 'category', t.category, 'category_id', t.category_id, 'transaction_date', t.transaction_date,
            'transaction_time', to_char(t.transaction_time, 'HH24:MI'), 'receipt_media_id', t.receipt_media_id,
            'linked_event_id', t.linked_event_id, 'deleted', t.deleted_at IS NOT NULL, 'split_input', t.split_input, 'notes', t.notes,
            'payers', coalesce(
                (SELECT jsonb_agg(jsonb_build_object('user_id', p.user_id, 'amount', p.amount) ORDER BY p.user_id)
                 FROM public.transaction_payers p WHERE p.transaction_id = t.id),
                jsonb_build_array(jsonb_build_object('user_id', t.paid_by, 'amount', t.total_amount))),
            'splits', coalesce(
                (SELECT jsonb_agg(jsonb_build_object('user_id', s.user_id, 'family_member_id', s.family_member_id, 'amount', s.amount,
                                                     'is_settled', s.is_settled) ORDER BY s.user_id, s.family_member_id NULLS FIRST)
                 FROM public.splits s WHERE s.transaction_id = t.id),
                '[]'::jsonb))
        FROM public.transactions t WHERE t.id = expense_state.transaction_id
    );
END
$$;

-- A split that is not itemised fits `amount` (migration 0028). NULL-safe: anything missing (a part
-- without its value, an item without its amount) does not fit (bool_and and sum would skip NULLs).
CREATE OR REPLACE FUNCTION orbit.plain_split_fits(split jsonb, amount bigint) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    RETURN (
        jsonb_typeof(split -> 'parts') = 'array' AND jsonb_array_length(split -> 'parts') > 0
        AND CASE split ->> 'method'
            WHEN 'equal' THEN true
            WHEN 'exact' THEN (SELECT bool_and(coalesce((p ->> 'value')::bigint >= 0, false)) AND sum((p ->> 'value')::bigint) = amount
                               FROM jsonb_array_elements(split -> 'parts') p)
            WHEN 'percent' THEN (SELECT bool_and(coalesce((p ->> 'value')::bigint >= 0, false)) AND sum((p ->> 'value')::bigint) = 10000
                                 FROM jsonb_array_elements(split -> 'parts') p)
            WHEN 'shares' THEN (SELECT bool_and(coalesce((p ->> 'value')::bigint > 0, false)) FROM jsonb_array_elements(split -> 'parts') p)
            ELSE false
        END) IS TRUE;
END
$$;

-- A split as entered, itemised or not, fits `total` (migration 0028; the CHECK constraints
-- transactions_split_input_fits and recurring_charges_split_fits).
CREATE OR REPLACE FUNCTION orbit.split_input_fits(split jsonb, total bigint) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    RETURN (
        CASE split ->> 'method'
        WHEN 'items' THEN
            jsonb_typeof(split -> 'items') = 'array' AND jsonb_array_length(split -> 'items') > 0
            AND (split ->> 'tax')::bigint >= 0 AND (split ->> 'tip')::bigint >= 0
            AND (SELECT bool_and(coalesce((i ->> 'amount')::bigint > 0 AND orbit.plain_split_fits(i -> 'split', (i ->> 'amount')::bigint), false))
                        AND sum((i ->> 'amount')::bigint) + (split ->> 'tax')::bigint + (split ->> 'tip')::bigint = total
                 FROM jsonb_array_elements(split -> 'items') i)
        ELSE orbit.plain_split_fits(split, total)
        END) IS TRUE;
END
$$;

-- Policies. This file owns every policy on transactions, splits, transaction_payers and
-- money_activity: it drops them all and recreates the ones below, so a policy removed here is
-- removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN (
            'transactions', 'splits', 'transaction_payers', 'money_activity'
        )
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- transactions: members log them as themselves; the creator or an admin edits them.
CREATE POLICY transactions_select ON transactions FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY transactions_insert ON transactions FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));
CREATE POLICY transactions_update ON transactions FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- splits: written with their transaction, by members of its community.
CREATE POLICY splits_select ON splits FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY splits_write ON splits FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- transaction_payers: written with their transaction, like splits.
CREATE POLICY transaction_payers_select ON transaction_payers FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY transaction_payers_write ON transaction_payers FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- money_activity (money's history): every member reads it; a member writes rows as themselves,
-- and fills in `after` only of their own rows written in this very transaction.
CREATE POLICY money_activity_select ON money_activity FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY money_activity_insert ON money_activity FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND actor_id = (SELECT orbit.app_user_id()));
CREATE POLICY money_activity_update ON money_activity FOR UPDATE TO orbit_app
    USING (actor_id = (SELECT orbit.app_user_id()) AND created_at = now())
    WITH CHECK (actor_id = (SELECT orbit.app_user_id()));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON transactions, splits, transaction_payers, money_activity FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT, UPDATE ON transactions TO orbit_app;
-- Replace an expense's splits (and payers): hard deletes.
GRANT SELECT, INSERT, UPDATE, DELETE ON splits, transaction_payers TO orbit_app;
GRANT SELECT, INSERT ON money_activity TO orbit_app;
GRANT UPDATE (after) ON money_activity TO orbit_app;
GRANT ALL ON transactions, splits, transaction_payers, money_activity TO orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.expense_state(uuid), orbit.plain_split_fits(jsonb, bigint), orbit.split_input_fits(jsonb, bigint)
FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION orbit.check_split_sum(), orbit.check_payer_sum(), orbit.check_receipt_media() FROM PUBLIC, orbit_app;
-- Functions the services and the tables' checks call as the querying role.
GRANT EXECUTE ON FUNCTION
    orbit.expense_state(uuid), orbit.plain_split_fits(jsonb, bigint), orbit.split_input_fits(jsonb, bigint)
TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.check_split_sum(), orbit.check_payer_sum(), orbit.check_receipt_media() TO orbit_admin;
