-- Shared (sql/README.md): this file owns the denormalized counters' triggers (on members,
-- comments and reactions), their functions, orbit.bump_count and the functions' rights.
--
-- Denormalized counters (spec: communities.member_count "updated via trigger",
-- posts.comment_count and posts.reaction_counts "Denormalized").
--
-- The draft's triggers only handled INSERT and one direction of UPDATE: a hard DELETE, a
-- rejoin (left_at back to NULL), a restored comment or an INSERT of an already-left member
-- left the counts wrong, reaction_counts was never maintained, and they ran as the caller, so
-- under row-level security a plain member's join could not update the community row.
--
-- Each trigger computes how a row's contribution changes (old row counted? new row counted?)
-- and applies it as an increment: `count = count + delta` is re-evaluated against the latest
-- row version when two transactions update the same parent, so concurrent changes never lose
-- an update (a recount inside the trigger would, under READ COMMITTED). The functions are
-- SECURITY DEFINER (owner orbit_admin), and orbit_app has no UPDATE right on the counters, so
-- nothing but these triggers writes them.

CREATE OR REPLACE FUNCTION orbit.update_member_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    was_active int := CASE WHEN TG_OP <> 'INSERT' AND OLD.left_at IS NULL THEN 1 ELSE 0 END;
    is_active int := CASE WHEN TG_OP <> 'DELETE' AND NEW.left_at IS NULL THEN 1 ELSE 0 END;
BEGIN
    IF is_active <> was_active THEN
        UPDATE public.communities SET member_count = member_count + is_active - was_active
        WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.community_id ELSE NEW.community_id END;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION orbit.update_comment_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    was_counted int := CASE WHEN TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL THEN 1 ELSE 0 END;
    is_counted int := CASE WHEN TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL THEN 1 ELSE 0 END;
BEGIN
    IF is_counted <> was_counted THEN
        UPDATE public.posts SET comment_count = comment_count + is_counted - was_counted
        WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.post_id ELSE NEW.post_id END;
    END IF;
    RETURN NULL;
END
$$;

-- counts with `key` moved by `delta`; keys that reach zero disappear ({"like": 2, "love": 1}).
CREATE OR REPLACE FUNCTION orbit.bump_count(counts jsonb, key text, delta int) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN n > 0 THEN jsonb_set(counts, ARRAY[key], to_jsonb(n)) ELSE counts - key END
    FROM (SELECT coalesce((counts ->> key)::int, 0) + delta AS n) AS next
$$;

CREATE OR REPLACE FUNCTION orbit.update_reaction_counts() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE public.posts SET reaction_counts = orbit.bump_count(reaction_counts, NEW.type::text, 1)
        WHERE id = NEW.post_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE public.posts SET reaction_counts = orbit.bump_count(reaction_counts, OLD.type::text, -1)
        WHERE id = OLD.post_id;
    ELSIF NEW.type IS DISTINCT FROM OLD.type THEN
        UPDATE public.posts
        SET reaction_counts = orbit.bump_count(orbit.bump_count(reaction_counts, OLD.type::text, -1), NEW.type::text, 1)
        WHERE id = NEW.post_id;
    END IF;
    RETURN NULL;
END
$$;

ALTER FUNCTION orbit.update_member_count() OWNER TO orbit_admin;
ALTER FUNCTION orbit.update_comment_count() OWNER TO orbit_admin;
ALTER FUNCTION orbit.update_reaction_counts() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_member_count ON members;
CREATE TRIGGER trigger_member_count AFTER INSERT OR UPDATE OF left_at OR DELETE ON members
    FOR EACH ROW EXECUTE FUNCTION orbit.update_member_count();
DROP TRIGGER IF EXISTS trigger_comment_count ON comments;
CREATE TRIGGER trigger_comment_count AFTER INSERT OR UPDATE OF deleted_at OR DELETE ON comments
    FOR EACH ROW EXECUTE FUNCTION orbit.update_comment_count();
DROP TRIGGER IF EXISTS trigger_reaction_counts ON reactions;
CREATE TRIGGER trigger_reaction_counts AFTER INSERT OR UPDATE OF type OR DELETE ON reactions
    FOR EACH ROW EXECUTE FUNCTION orbit.update_reaction_counts();

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON FUNCTION orbit.bump_count(jsonb, text, int) FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION orbit.update_member_count(), orbit.update_comment_count(), orbit.update_reaction_counts()
FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.bump_count(jsonb, text, int) TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.update_member_count(), orbit.update_comment_count(), orbit.update_reaction_counts()
TO orbit_admin;
