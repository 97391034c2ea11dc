-- Recurring charges (sql/README.md): this file owns the policies of recurring_charges and the
-- rights on it. (What never changes of a charge is sql/030_tenancy_integrity.sql's.)

-- Policies. This file owns every policy on recurring_charges: it drops them all and recreates the
-- ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('recurring_charges')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- recurring charges: members read; a member sets up a recurring expense as themselves, an admin
-- recurring dues; its creator (while a member) or an admin pauses, skips, resumes or ends it,
-- dues' only an admin. Never deleted (ended instead): their occurrences point at them.
CREATE POLICY recurring_charges_select ON recurring_charges FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY recurring_charges_insert ON recurring_charges FOR INSERT TO orbit_app
    WITH CHECK (created_by = (SELECT orbit.app_user_id())
                AND community_id = ANY ((CASE kind WHEN 'dues' THEN (SELECT orbit.admin_community_ids())
                                                   ELSE (SELECT orbit.member_community_ids()) END)::uuid[]));
CREATE POLICY recurring_charges_update ON recurring_charges FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (kind = 'expense' AND created_by = (SELECT orbit.app_user_id())
               AND community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and grants
-- exactly these; orbit_admin, the operators' role, gets everything on them.
REVOKE ALL ON recurring_charges FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT ON recurring_charges TO orbit_app;
GRANT UPDATE (next_on, skipped, status, status_reason, updated_at) ON recurring_charges TO orbit_app;
GRANT ALL ON recurring_charges TO orbit_admin;
