-- Nudges (sql/README.md; docs/money.md, "Who hears about money"): this file owns the policies of
-- nudges and the rights on them. The day's limit per pair and "only who is owed" are the
-- service's (SettlementService.nudge, under a lock of the pair), read from pair_balances.

-- Policies. This file owns every policy on nudges: it drops them all and recreates the ones
-- below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('nudges')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- nudges: the two people of a nudge see it, while members; a member nudges as themselves.
CREATE POLICY nudges_select ON nudges FOR SELECT TO orbit_app
    USING ((from_user_id = (SELECT orbit.app_user_id()) OR to_user_id = (SELECT orbit.app_user_id()))
           AND community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY nudges_insert ON nudges FOR INSERT TO orbit_app
    WITH CHECK (from_user_id = (SELECT orbit.app_user_id()) AND community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and grants
-- exactly these; orbit_admin, the operators' role, gets everything on them. A nudge never changes.
REVOKE ALL ON nudges FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT ON nudges TO orbit_app;
GRANT ALL ON nudges TO orbit_admin;
