-- Search (sql/README.md; docs/search.md): what a member can find. This file owns the search
-- vectors' functions, the trigger that keeps them on every searchable table (of several domains:
-- posts, comments, events, expenses, chat messages; it runs after them all), the re-index when a
-- community's language changes, and the rights on those functions. The columns and their GIN
-- indexes, and the configurations `orbit.<language>`, are migrations/0040_search.sql's.
--
-- Who finds what is not this file's to say: a search is a SELECT as orbit_app, so each table's
-- own row-level security decides (a non-participant never reads a chat message, so never finds
-- one). What is never indexed is: a deleted row (its vector is NULL the moment it is deleted)
-- and the comments of a deleted post, encrypted chat content (content_encrypted), and
-- transactions that are not expenses.

-- The text search configuration of a community: `orbit.<language>` for its `language` setting,
-- `orbit.simple` (no stemming, accents folded) when it is unset. It reads the setting as its
-- caller: the triggers below run as orbit_admin (a row written by anyone, a child's device or
-- a job, takes its community's language); a search as orbit_app reads it under row-level
-- security, so a community one cannot see tells nothing (it is `simple`).
CREATE OR REPLACE FUNCTION orbit.search_config(community uuid) RETURNS regconfig
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(
        (SELECT t.oid::regconfig FROM public.communities c
         JOIN pg_catalog.pg_ts_config t ON t.cfgnamespace = 'orbit'::regnamespace AND t.cfgname = c.settings ->> 'language'
         WHERE c.id = community),
        'orbit.simple'::regconfig)
$$;

-- A searchable row's document: its title-like text weighs more (A) than its body (B).
CREATE OR REPLACE FUNCTION orbit.search_document(config regconfig, title text, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT setweight(to_tsvector(config, coalesce(title, '')), 'A') || setweight(to_tsvector(config, coalesce(body, '')), 'B')
$$;

-- Each table's vector: NULL for what is never found.
CREATE OR REPLACE FUNCTION orbit.search_vector(p public.posts) RETURNS tsvector
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN p.deleted_at IS NULL THEN
        orbit.search_document(orbit.search_config(p.community_id), p.poll_data ->> 'question', p.content) END
$$;
CREATE OR REPLACE FUNCTION orbit.search_vector(c public.comments) RETURNS tsvector
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN c.deleted_at IS NULL
            AND EXISTS (SELECT FROM public.posts p WHERE p.id = c.post_id AND p.deleted_at IS NULL) THEN
        orbit.search_document(orbit.search_config(c.community_id), NULL, c.content) END
$$;
CREATE OR REPLACE FUNCTION orbit.search_vector(e public.events) RETURNS tsvector
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN e.deleted_at IS NULL THEN
        orbit.search_document(orbit.search_config(e.community_id), e.title, concat_ws(' ', e.location_name, e.description)) END
$$;
CREATE OR REPLACE FUNCTION orbit.search_vector(t public.transactions) RETURNS tsvector
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN t.deleted_at IS NULL AND t.type = 'expense' THEN
        orbit.search_document(orbit.search_config(t.community_id), t.description, NULL) END
$$;
-- Ciphertext is never indexed (docs/e2e.md): the server cannot read it, and a vector of it would
-- be a copy of the plaintext's words.
CREATE OR REPLACE FUNCTION orbit.search_vector(m public.messages) RETURNS tsvector
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN m.deleted_at IS NULL AND m.content_encrypted IS NULL AND m.text IS NOT NULL THEN
        orbit.search_document(orbit.search_config(m.community_id), NULL, m.text) END
$$;

-- Keeps a row's vector as it is written: on insert, and on an update of what is indexed.
CREATE OR REPLACE FUNCTION orbit.index_for_search() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- NEW is of the trigger's table: the call resolves to that table's orbit.search_vector.
    NEW.search_vector := orbit.search_vector(NEW);
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.index_for_search() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_posts_search ON posts;
CREATE TRIGGER trigger_posts_search BEFORE INSERT OR UPDATE OF content, poll_data, deleted_at ON posts
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_comments_search ON comments;
CREATE TRIGGER trigger_comments_search BEFORE INSERT OR UPDATE OF content, deleted_at ON comments
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_events_search ON events;
CREATE TRIGGER trigger_events_search BEFORE INSERT OR UPDATE OF title, description, location_name, deleted_at ON events
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_transactions_search ON transactions;
CREATE TRIGGER trigger_transactions_search BEFORE INSERT OR UPDATE OF description, type, deleted_at ON transactions
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_messages_search ON messages;
CREATE TRIGGER trigger_messages_search BEFORE INSERT OR UPDATE OF text, content_encrypted, deleted_at ON messages
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();

-- A post's comments go with it: deleted, none is found; restored, they are again.
CREATE OR REPLACE FUNCTION orbit.index_post_comments() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE public.comments c SET search_vector = orbit.search_vector(c)
    WHERE c.post_id = NEW.id AND c.search_vector IS DISTINCT FROM orbit.search_vector(c);
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.index_post_comments() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_posts_search_comments ON posts;
CREATE TRIGGER trigger_posts_search_comments AFTER UPDATE OF deleted_at ON posts
    FOR EACH ROW WHEN (OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
    EXECUTE FUNCTION orbit.index_post_comments();

-- Re-indexes a community's rows (its language changed; a file's first apply). An update of the
-- vector alone is not a change of the row: orbit.record_change logs nothing for it and
-- orbit.touch_updated_at leaves updated_at (sql/800_changes.sql, sql/020_timestamps.sql).
-- NULL: every community's rows that lack the vector they should have.
CREATE OR REPLACE FUNCTION orbit.reindex_search(community uuid) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE public.posts r SET search_vector = orbit.search_vector(r)
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.comments r SET search_vector = orbit.search_vector(r)
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.events r SET search_vector = orbit.search_vector(r)
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.transactions r SET search_vector = orbit.search_vector(r)
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.messages r SET search_vector = orbit.search_vector(r)
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
END
$$;
ALTER FUNCTION orbit.reindex_search(uuid) OWNER TO orbit_admin;

CREATE OR REPLACE FUNCTION orbit.reindex_community_search() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM orbit.reindex_search(NEW.id);
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.reindex_community_search() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_communities_search_language ON communities;
CREATE TRIGGER trigger_communities_search_language AFTER UPDATE OF settings ON communities
    FOR EACH ROW WHEN ((OLD.settings ->> 'language') IS DISTINCT FROM (NEW.settings ->> 'language'))
    EXECUTE FUNCTION orbit.reindex_community_search();

-- Rights (sql/README.md, "Rights"): the search (as orbit_app) asks for its community's
-- configuration; the rest runs in triggers, as orbit_admin. orbit_admin's EXECUTE is revoked too
-- on the functions the migrating role owns (those that are not SECURITY DEFINER), then granted.
REVOKE ALL ON FUNCTION
    orbit.search_config(uuid), orbit.search_document(regconfig, text, text), orbit.search_vector(public.posts),
    orbit.search_vector(public.comments), orbit.search_vector(public.events), orbit.search_vector(public.transactions),
    orbit.search_vector(public.messages)
FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.index_for_search(), orbit.index_post_comments(), orbit.reindex_search(uuid), orbit.reindex_community_search()
FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.search_config(uuid) TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.search_config(uuid), orbit.search_document(regconfig, text, text), orbit.search_vector(public.posts),
    orbit.search_vector(public.comments), orbit.search_vector(public.events), orbit.search_vector(public.transactions),
    orbit.search_vector(public.messages), orbit.index_for_search(), orbit.index_post_comments(), orbit.reindex_search(uuid),
    orbit.reindex_community_search()
TO orbit_admin;

-- Rows written before this file (an upgrade from before migration 0040) get their vectors (after
-- the rights: orbit_admin, whose functions these are, runs them).
DO $$ BEGIN PERFORM orbit.reindex_search(NULL); END $$;
