-- The audit log (sql/README.md): this file owns the policies of audit_log and the rights on it.

-- Policies. This file owns every policy on audit_log: it drops them all and recreates the ones
-- below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('audit_log')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- audit log: admins read their community's; anyone records their own actions, in a community
-- they belong or belonged to (leaving is logged after the leave).
CREATE POLICY audit_log_select ON audit_log FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY audit_log_insert ON audit_log FOR INSERT TO orbit_app
    WITH CHECK (
        user_id = (SELECT orbit.app_user_id())
        AND (community_id IS NULL OR community_id = ANY ((SELECT orbit.joined_community_ids())::uuid[]))
    );

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and grants
-- exactly these; orbit_admin, the operators' role, gets everything on them.
REVOKE ALL ON audit_log FROM orbit_app, orbit_admin;
-- Append-only for orbit_app.
GRANT SELECT, INSERT ON audit_log TO orbit_app;
GRANT ALL ON audit_log TO orbit_admin;
