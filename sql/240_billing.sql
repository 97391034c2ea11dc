-- Billing (sql/README.md, docs/money.md "Subscriptions"): the payment providers' events and the
-- subscriptions they keep, the App Store tokens of communities, the payments recorded for dues and
-- their refunds and disputes. This file owns the policies of billing_events, billing_subscriptions,
-- billing_app_account_tokens, billing_refunds, billing_payments and billing_disputes and the rights
-- on them.

-- Policies: none for orbit_app. Only the server, as orbit_admin, reads and writes these tables,
-- after it has verified the provider's signature; no user, admin or child sees them.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public'
          AND tablename IN (
              'billing_events', 'billing_subscriptions', 'billing_app_account_tokens', 'billing_refunds', 'billing_payments',
              'billing_disputes')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- Rights (sql/README.md, "Rights").
REVOKE ALL ON billing_events, billing_subscriptions, billing_app_account_tokens, billing_refunds, billing_payments, billing_disputes
    FROM orbit_app, orbit_admin;
GRANT ALL ON billing_events, billing_subscriptions, billing_app_account_tokens, billing_refunds, billing_payments, billing_disputes
    TO orbit_admin;
