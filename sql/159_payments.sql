-- Getting paid back (sql/README.md; docs/money.md, "Getting paid back"): this file owns the
-- policies of payment_handles and payment_providers, the rights on them and their updated_at
-- triggers. A handle's format (an IBAN's mod 97, a Czech account's weighted checksum, UPI's
-- name@bank) is the service's (PaymentHandles); a provider's template is the operator's, checked
-- by the service too.

DROP TRIGGER IF EXISTS trigger_payment_handles_updated_at ON payment_handles;
CREATE TRIGGER trigger_payment_handles_updated_at BEFORE UPDATE ON payment_handles
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_payment_providers_updated_at ON payment_providers;
CREATE TRIGGER trigger_payment_providers_updated_at BEFORE UPDATE ON payment_providers
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();

-- Policies. This file owns every policy on payment_handles and payment_providers: it drops them
-- all and recreates the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('payment_handles', 'payment_providers')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- payment_handles: the user and the people who share an active community with them read them
-- (never search: no other file indexes them); the user alone writes their own.
CREATE POLICY payment_handles_select ON payment_handles FOR SELECT TO orbit_app
    USING (user_id = ANY ((SELECT orbit.contact_user_ids())::uuid[]));
CREATE POLICY payment_handles_insert ON payment_handles FOR INSERT TO orbit_app
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY payment_handles_update ON payment_handles FOR UPDATE TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY payment_handles_delete ON payment_handles FOR DELETE TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()));

-- payment_providers: everyone signed in reads the active ones; operators (orbit_admin) keep them.
CREATE POLICY payment_providers_select ON payment_providers FOR SELECT TO orbit_app
    USING (active);

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and grants
-- exactly these; orbit_admin, the operators' role, gets everything on them.
REVOKE ALL ON payment_handles, payment_providers FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT, DELETE ON payment_handles TO orbit_app;
GRANT UPDATE (handle, bic, holder) ON payment_handles TO orbit_app;
GRANT SELECT ON payment_providers TO orbit_app;
GRANT ALL ON payment_handles, payment_providers TO orbit_admin;
