-- Communities and their members (sql/README.md). This file owns the rules of membership
-- (a community keeps an admin, only admins change roles), the policies of communities and
-- members and the rights on them and on its functions. (Counting members is
-- sql/040_counters.sql's, the community conversation sql/200_chat.sql's.)

-- A community always keeps at least one admin (spec: admins manage members, roles
-- and settings, so a community without one could never be managed again).
--
-- The check runs after a change that takes an active admin away (demotion, leaving, removal,
-- hard delete). It first locks the community row, so two admins demoting each other at the
-- same moment are checked one after the other and the second one fails. A community that is
-- itself being deleted (its row is gone) is not checked.
CREATE OR REPLACE FUNCTION orbit.keep_an_admin() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT (OLD.role = 'admin' AND OLD.left_at IS NULL) THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.role = 'admin' AND NEW.left_at IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM FROM public.communities c WHERE c.id = OLD.community_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (
        SELECT FROM public.members m
        WHERE m.community_id = OLD.community_id AND m.role = 'admin' AND m.left_at IS NULL AND m.id <> OLD.id
    ) THEN
        RAISE EXCEPTION 'a community needs at least one admin'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'members_last_admin', TABLE = 'members',
                  HINT = 'Make another member an admin first.';
    END IF;
    RETURN NULL;
END
$$;

ALTER FUNCTION orbit.keep_an_admin() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_members_keep_admin ON members;
CREATE TRIGGER trigger_members_keep_admin AFTER UPDATE OF role, left_at OR DELETE ON members
    FOR EACH ROW EXECUTE FUNCTION orbit.keep_an_admin();

-- Only admins change roles: a member's UPDATE policy lets them edit their own row, and a
-- policy cannot compare old and new values, so this trigger does. It limits orbit_app only:
-- orbit_admin (operators) bypasses row-level security by design.
CREATE OR REPLACE FUNCTION orbit.guard_member_role() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF current_user = 'orbit_app' AND NOT (NEW.community_id = ANY (orbit.admin_community_ids())) THEN
        RAISE EXCEPTION 'only an admin of the community can change member roles'
            USING ERRCODE = 'insufficient_privilege', TABLE = 'members';
    END IF;
    RETURN NEW;
END
$$;

-- A member's pin and its position (migrations/0051) are theirs alone: an admin, who may update
-- any member row, may not change them.
CREATE OR REPLACE FUNCTION orbit.guard_member_pin() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF current_user = 'orbit_app' AND NEW.user_id IS DISTINCT FROM orbit.app_user_id() THEN
        RAISE EXCEPTION 'only the member pins a community for themselves'
            USING ERRCODE = 'insufficient_privilege', TABLE = 'members';
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS trigger_members_pin ON members;
CREATE TRIGGER trigger_members_pin BEFORE UPDATE OF pinned, pin_position ON members FOR EACH ROW
    WHEN (NEW.pinned IS DISTINCT FROM OLD.pinned OR NEW.pin_position IS DISTINCT FROM OLD.pin_position)
    EXECUTE FUNCTION orbit.guard_member_pin();

DROP TRIGGER IF EXISTS trigger_members_role ON members;
CREATE TRIGGER trigger_members_role BEFORE UPDATE OF role ON members FOR EACH ROW
    WHEN (NEW.role IS DISTINCT FROM OLD.role)
    EXECUTE FUNCTION orbit.guard_member_role();

-- Policies. This file owns every policy on communities and members: it drops them all and recreates
-- the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('communities', 'members')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- communities: anyone signed in may create one (as its creator); admins update it, including
-- the soft delete (the service narrows that to the creator, per the permission matrix).
CREATE POLICY communities_select ON communities FOR SELECT TO orbit_app
    USING (id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
-- What billing decides (the subscription and the provider's ids) is written only by the server,
-- as orbit_admin, from a provider's verified event or an operator's command: a new community
-- starts free, with no provider ids (issue 52: a member made one active until 2099 with a
-- made-up Stripe customer, which the next checkout would have sent to Stripe). The rights below
-- leave these columns out of orbit_app's INSERT and UPDATE too.
CREATE POLICY communities_insert ON communities FOR INSERT TO orbit_app
    WITH CHECK (created_by = (SELECT orbit.app_user_id()) AND deleted_at IS NULL
                AND subscription_status = 'free' AND subscription_expires_at IS NULL
                AND stripe_customer_id IS NULL AND stripe_subscription_id IS NULL);
CREATE POLICY communities_update ON communities FOR UPDATE TO orbit_app
    USING (id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));

-- members: admins add and change members; the creator of a new, still empty community adds
-- themselves as its first admin; a member edits their own row (nickname, preferences, leave).
-- Role changes by non-admins are refused by orbit.guard_member_role above.
CREATE POLICY members_select ON members FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY members_insert ON members FOR INSERT TO orbit_app
    WITH CHECK (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (user_id = (SELECT orbit.app_user_id()) AND role = 'admin' AND orbit.can_found(community_id))
    );
CREATE POLICY members_update ON members FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR user_id = (SELECT orbit.app_user_id()));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON communities, members FROM orbit_app, orbit_admin;
GRANT SELECT ON communities TO orbit_app;
-- Not member_count (sql/040_counters.sql keeps it), nor the subscription's columns (billing's).
GRANT INSERT (id, name, description, icon_url, created_by, settings) ON communities TO orbit_app;
GRANT UPDATE (name, description, icon_url, settings, deleted_at, archived_at) ON communities TO orbit_app;
GRANT SELECT, INSERT ON members TO orbit_app;
GRANT UPDATE (role, nickname, notification_prefs, joined_at, invited_by, left_at, pinned, pin_position, active, default_weight) ON members TO orbit_app;
GRANT ALL ON communities, members TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.guard_member_role(), orbit.guard_member_pin() FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION orbit.keep_an_admin() FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.keep_an_admin(), orbit.guard_member_role(), orbit.guard_member_pin() TO orbit_admin;
