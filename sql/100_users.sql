-- Users (sql/README.md): accounts, their sessions (refresh tokens) and their idempotency keys.
-- This file owns the policies of users, refresh_tokens and idempotency_keys and the rights on
-- them. (An account's own change feed is sql/800_changes.sql's; the operator flag is
-- sql/105_operators.sql's.)

-- Policies. This file owns every policy on users, refresh_tokens and idempotency_keys: it drops
-- them all and recreates the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('users', 'refresh_tokens', 'idempotency_keys')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- users
-- One's own row first: PostgreSQL evaluates a policy's sub-select only when it gets to it, so
-- reading one's own name (a notification's "who", GET /users/me) does not gather every contact.
CREATE POLICY users_select ON users FOR SELECT TO orbit_app
    USING (id = (SELECT orbit.app_user_id()) OR id = ANY ((SELECT orbit.contact_user_ids())::uuid[]));
CREATE POLICY users_insert ON users FOR INSERT TO orbit_app
    WITH CHECK (id = (SELECT orbit.app_user_id()));
CREATE POLICY users_update ON users FOR UPDATE TO orbit_app
    USING (id = (SELECT orbit.app_user_id()))
    WITH CHECK (id = (SELECT orbit.app_user_id()));

-- refresh tokens: one's own.
CREATE POLICY refresh_tokens_own ON refresh_tokens FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- idempotency keys: one's own.
CREATE POLICY idempotency_keys_own ON idempotency_keys FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and grants
-- exactly these; orbit_admin, the operators' role, gets everything on them.
REVOKE ALL ON users, refresh_tokens, idempotency_keys FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT, UPDATE ON users TO orbit_app;
-- Sign out: a session's refresh tokens go.
GRANT SELECT, INSERT, UPDATE, DELETE ON refresh_tokens, idempotency_keys TO orbit_app;
GRANT ALL ON users, refresh_tokens, idempotency_keys TO orbit_admin;
