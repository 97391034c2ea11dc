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
    SELECT total_amount, paid_by INTO t FROM public.transactions WHERE id = checked_id;
    IF NOT FOUND THEN
        RETURN NULL; -- the transaction was deleted, and its payers with it
    END IF;
    SELECT coalesce(sum(p.amount), 0), count(*), coalesce(bool_or(p.user_id = t.paid_by), false)
    INTO payer_sum, payer_count, main_payer_listed
    FROM public.transaction_payers p WHERE p.transaction_id = checked_id;
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

-- What a transaction is, as money's history (money_activity) records it before and after a
-- change: its fields, the split as entered, payers (paid_by alone when it has no payer rows) and splits. Runs as the
-- caller: it shows what the caller may see.
CREATE OR REPLACE FUNCTION orbit.expense_state(transaction_id uuid) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT jsonb_build_object(
    'type', t.type, 'description', t.description, 'total_amount', t.total_amount, 'currency', t.currency,
    'paid_by', t.paid_by, 'category', t.category, 'transaction_date', t.transaction_date,
    'linked_event_id', t.linked_event_id, 'deleted', t.deleted_at IS NOT NULL, 'split_input', t.split_input,
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
$$;

-- Dues as money's history records them (migrations/0029), in the shape of a transaction's state:
-- type 'dues', the name as description, the amount as total_amount, the due date as
-- transaction_date, no payer (paid_by null), category 'dues', `deleted` when deactivated, and as
-- `payers` what each member has paid of them so far (leaving out payment `without`: the state
-- before that payment). SECURITY DEFINER through its caller, the trigger below.
CREATE OR REPLACE FUNCTION orbit.dues_state(d public.dues, without uuid DEFAULT NULL) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT jsonb_build_object(
    'type', 'dues', 'description', d.name, 'total_amount', d.amount, 'currency', d.currency, 'paid_by', NULL,
    'category', 'dues', 'transaction_date', d.due_date, 'linked_event_id', NULL, 'deleted', NOT d.is_active,
    'payers', coalesce(
        (SELECT jsonb_agg(jsonb_build_object('user_id', p.user_id, 'amount', p.paid) ORDER BY p.user_id)
         FROM (SELECT user_id, sum(amount_paid) AS paid FROM public.dues_payments
               WHERE dues_id = d.id AND id IS DISTINCT FROM without GROUP BY user_id) p),
        '[]'::jsonb),
    'splits', '[]'::jsonb)
$$;

-- Writes money's history for dues: created (by the acting user, else the creator: the job),
-- edited (name, amount, currency, due date or deactivation, before and after), paid (a payment,
-- by who recorded it, before and after).
CREATE OR REPLACE FUNCTION orbit.record_dues_activity() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d public.dues;
BEGIN
    IF TG_TABLE_NAME = 'dues' AND TG_OP = 'INSERT' THEN
        INSERT INTO public.money_activity (community_id, actor_id, action, entity, entity_id, after)
        VALUES (NEW.community_id, coalesce(orbit.app_user_id(), NEW.created_by), 'created', 'dues', NEW.id, orbit.dues_state(NEW));
    ELSIF TG_TABLE_NAME = 'dues' THEN
        IF (OLD.name, OLD.amount, OLD.currency, OLD.due_date, OLD.is_active) IS DISTINCT FROM
           (NEW.name, NEW.amount, NEW.currency, NEW.due_date, NEW.is_active) THEN
            INSERT INTO public.money_activity (community_id, actor_id, action, entity, entity_id, before, after)
            VALUES (NEW.community_id, orbit.app_user_id(), 'edited', 'dues', NEW.id, orbit.dues_state(OLD), orbit.dues_state(NEW));
        END IF;
    ELSE
        SELECT * INTO d FROM public.dues WHERE id = NEW.dues_id;
        INSERT INTO public.money_activity (community_id, actor_id, action, entity, entity_id, before, after)
        VALUES (NEW.community_id, coalesce(orbit.app_user_id(), NEW.recorded_by), 'paid', 'dues', NEW.dues_id,
                orbit.dues_state(d, NEW.id), orbit.dues_state(d));
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_dues_activity() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_dues_activity ON dues;
CREATE TRIGGER trigger_dues_activity AFTER INSERT OR UPDATE ON dues
    FOR EACH ROW EXECUTE FUNCTION orbit.record_dues_activity();
DROP TRIGGER IF EXISTS trigger_dues_payments_activity ON dues_payments;
CREATE TRIGGER trigger_dues_payments_activity AFTER INSERT ON dues_payments
    FOR EACH ROW EXECUTE FUNCTION orbit.record_dues_activity();

-- Who owes which dues and how much (migrations/0030): every member active now or who left after
-- the dues were created, one head each — or, for dues per attendee (rows in dues_attendees),
-- those attendees only, amount × heads. One rule for the report, payments, edits and reminders.
-- security_invoker: read with the reader's row-level security.
CREATE OR REPLACE VIEW dues_owed WITH (security_invoker = true) AS
SELECT d.id AS dues_id, d.community_id, m.user_id, coalesce(a.heads, 1) AS heads, d.amount::bigint * coalesce(a.heads, 1) AS amount_due
FROM public.dues d
JOIN public.members m ON m.community_id = d.community_id AND (m.left_at IS NULL OR m.left_at >= d.created_at)
LEFT JOIN public.dues_attendees a ON a.dues_id = d.id AND a.user_id = m.user_id
WHERE a.user_id IS NOT NULL OR NOT EXISTS (SELECT FROM public.dues_attendees x WHERE x.dues_id = d.id);
