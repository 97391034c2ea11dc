-- Billing (sql/README.md, docs/money.md "Subscriptions"): the payment providers' events and the
-- subscriptions they keep, the App Store tokens of communities and the refunds of payments. This
-- file owns the policies of billing_events, billing_subscriptions, billing_app_account_tokens and
-- billing_refunds and the rights on them.

-- Policies: none for orbit_app. Only the server, as orbit_admin, reads and writes these tables,
-- after it has verified the provider's signature; no user, admin or child sees them.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public'
          AND tablename IN ('billing_events', 'billing_subscriptions', 'billing_app_account_tokens', 'billing_refunds')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- Rights (sql/README.md, "Rights").
REVOKE ALL ON billing_events, billing_subscriptions, billing_app_account_tokens, billing_refunds FROM orbit_app, orbit_admin;
GRANT ALL ON billing_events, billing_subscriptions, billing_app_account_tokens, billing_refunds TO orbit_admin;
