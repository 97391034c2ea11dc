-- Announcements and pinning are admin-only (spec, "Permission Matrix"). The posts UPDATE
-- policy lets authors edit their own posts, and a policy cannot compare old and new values, so
-- this trigger refuses a non-admin's change of is_pinned, is_announcement or type to/from
-- 'announcement'. It limits orbit_app only; operators (orbit_admin) are not limited.
CREATE OR REPLACE FUNCTION orbit.guard_post_flags() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF current_user = 'orbit_app' AND NOT (NEW.community_id = ANY (orbit.admin_community_ids())) THEN
        RAISE EXCEPTION 'only admins can pin posts or make announcements'
            USING ERRCODE = 'insufficient_privilege', TABLE = 'posts';
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS trigger_posts_flags ON posts;
CREATE TRIGGER trigger_posts_flags BEFORE UPDATE OF is_pinned, is_announcement, type ON posts FOR EACH ROW
    WHEN (NEW.is_pinned IS DISTINCT FROM OLD.is_pinned OR NEW.is_announcement IS DISTINCT FROM OLD.is_announcement
          OR ((NEW.type = 'announcement') IS DISTINCT FROM (OLD.type = 'announcement')))
    EXECUTE FUNCTION orbit.guard_post_flags();
