-- Media (sql/README.md): this file owns the policies of media and the rights on it.

-- Policies. This file owns every policy on media: it drops them all and recreates the ones below,
-- so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('media')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- media: members upload as themselves; the uploader or an admin removes. A signed-in child
-- (sql/205_family.sql) uploads to the community their device reaches, as themselves on behalf of
-- their parent (a chore's photo proof, docs/chores.md), and sees their own uploads only.
CREATE POLICY media_select ON media FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR (family_member_id = (SELECT orbit.app_child_id()) AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]))
    );
CREATE POLICY media_insert ON media FOR INSERT TO orbit_app
    WITH CHECK (
        (
            community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND uploaded_by = (SELECT orbit.app_user_id())
            AND family_member_id IS NULL
        )
        OR (
            family_member_id = (SELECT orbit.app_child_id()) AND uploaded_by = (SELECT orbit.app_child_parent_id())
            AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]) AND type = 'image'
        )
    );
CREATE POLICY media_change ON media FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND uploaded_by = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY media_delete ON media FOR DELETE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND uploaded_by = (SELECT orbit.app_user_id())));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and grants
-- exactly these; orbit_admin, the operators' role, gets everything on them.
REVOKE ALL ON media FROM orbit_app, orbit_admin;
-- No UPDATE: an upload never changes after it is recorded (migrations/0032). Removing media
-- is a hard delete.
GRANT SELECT, INSERT, DELETE ON media TO orbit_app;
GRANT ALL ON media TO orbit_admin;
