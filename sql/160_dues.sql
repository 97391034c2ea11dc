-- Dues (sql/README.md): dues, their payments and attendees, who owes what. This file owns
-- dues' history in money_activity, the dues_owed view, the policies of dues, dues_payments and
-- dues_attendees and the rights on them and on its functions.

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

-- A payment the provider recorded is the provider's (issue 52): orbit_app is refused any change
-- or removal of it, with an error. orbit_admin, the webhook's role, may.
CREATE OR REPLACE FUNCTION orbit.keep_provider_payments() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF current_user = 'orbit_app' AND OLD.provider_payment_id IS NOT NULL THEN
        RAISE EXCEPTION 'a payment made through the payment provider is changed only by its events (a refund or a dispute)'
            USING ERRCODE = 'insufficient_privilege', TABLE = 'dues_payments', COLUMN = 'provider_payment_id';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END
$$;

DROP TRIGGER IF EXISTS trigger_dues_payments_provider ON dues_payments;
CREATE TRIGGER trigger_dues_payments_provider BEFORE UPDATE OR DELETE ON dues_payments
    FOR EACH ROW EXECUTE FUNCTION orbit.keep_provider_payments();

-- Who owes which dues and how much (migrations/0030): every member active now or who left after
-- the dues were created, one head each — or, for dues per attendee (rows in dues_attendees),
-- those attendees only, amount × heads. One rule for the report, payments, edits and reminders.
-- Guests (migrations/0055) share expenses, not a club's dues: they owe none.
-- security_invoker: read with the reader's row-level security.
CREATE OR REPLACE VIEW dues_owed WITH (security_invoker = true) AS
SELECT d.id AS dues_id, d.community_id, m.user_id, coalesce(a.heads, 1) AS heads, d.amount::bigint * coalesce(a.heads, 1) AS amount_due
FROM public.dues d
JOIN public.members m ON m.community_id = d.community_id AND (m.left_at IS NULL OR m.left_at >= d.created_at)
LEFT JOIN public.dues_attendees a ON a.dues_id = d.id AND a.user_id = m.user_id
WHERE (a.user_id IS NOT NULL OR NOT EXISTS (SELECT FROM public.dues_attendees x WHERE x.dues_id = d.id))
  AND NOT EXISTS (SELECT FROM public.users g WHERE g.id = m.user_id AND g.is_guest);

-- Policies. This file owns every policy on dues, dues_payments and dues_attendees: it drops them
-- all and recreates the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('dues', 'dues_payments', 'dues_attendees')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- dues and dues payments: members read, admins write.
CREATE POLICY dues_select ON dues FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY dues_insert ON dues FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));
CREATE POLICY dues_update ON dues FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY dues_payments_select ON dues_payments FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
-- A payment recorded from the payment provider (provider_payment_id) is written only by the
-- server, as orbit_admin, from the provider's signed event: an admin records the other kind.
CREATE POLICY dues_payments_insert ON dues_payments FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND recorded_by = (SELECT orbit.app_user_id())
                AND provider_payment_id IS NULL);
-- and only the provider's events change or remove it (a refund, a dispute): an admin could
-- otherwise make a card payment cash, of 1 cent, by themselves (issue 52). The trigger
-- orbit.keep_provider_payments above refuses that with an error; a USING clause here would only
-- hide the row from the statement, and the admin would be told nothing happened.
CREATE POLICY dues_payments_change ON dues_payments FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND provider_payment_id IS NULL);
CREATE POLICY dues_payments_delete ON dues_payments FOR DELETE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
-- dues_attendees (dues per attendee): members read, admins write them with the dues.
CREATE POLICY dues_attendees_select ON dues_attendees FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY dues_attendees_insert ON dues_attendees FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON dues, dues_payments, dues_attendees, dues_owed FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT, UPDATE ON dues TO orbit_app;
-- Remove a payment record: a hard delete.
GRANT SELECT, INSERT, UPDATE, DELETE ON dues_payments TO orbit_app;
GRANT SELECT, INSERT ON dues_attendees TO orbit_app;
GRANT SELECT ON dues_owed TO orbit_app;
GRANT ALL ON dues, dues_payments, dues_attendees, dues_owed TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.dues_state(public.dues, uuid) FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION orbit.record_dues_activity() FROM PUBLIC, orbit_app;
REVOKE ALL ON FUNCTION orbit.keep_provider_payments() FROM PUBLIC, orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.keep_provider_payments() TO orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.dues_state(public.dues, uuid), orbit.record_dues_activity() TO orbit_admin;
