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
