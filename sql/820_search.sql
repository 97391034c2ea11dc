-- Search (sql/README.md; docs/search.md): what a member can find. This file owns the search
-- vectors' functions, the trigger that keeps them on every searchable table (of several domains:
-- posts, comments, events, expenses, chat messages; it runs after them all), the re-index when a
-- community's language changes, and the rights on those functions. The columns and their GIN
-- indexes, and the configurations `orbit.<language>`, are migrations/0040_search.sql's.
--
-- Who finds what is not this file's to say: a search is a SELECT as orbit_app, so each table's
-- own row-level security decides (a non-participant never reads a chat message, so never finds
-- one). What is never indexed is: a deleted row (its vector is NULL the moment it is deleted)
-- and the comments of a deleted post, encrypted content (content_encrypted: posts, comments, chat messages), and
-- transactions that are not expenses.

-- The text search configuration of a community: `orbit.<language>` for its `language` setting,
-- `orbit.simple` (no stemming, accents folded) when it is unset. It reads the setting as its
-- caller: the triggers below run as orbit_admin (a row written by anyone, a child's device or
-- a job, takes its community's language); a search as orbit_app reads it under row-level
-- security, so a community one cannot see tells nothing (it is `simple`).
CREATE OR REPLACE FUNCTION orbit.search_config(community uuid) RETURNS regconfig
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN coalesce(
        (SELECT t.oid::regconfig FROM public.communities c
         JOIN pg_catalog.pg_ts_config t ON t.cfgnamespace = 'orbit'::regnamespace AND t.cfgname = c.settings ->> 'language'
         WHERE c.id = community),
        'orbit.simple'::regconfig);
END
$$;

-- A searchable row's document: its title-like text weighs more (A) than its body (B).
--
-- search_config above, this and scope_vector below run once per row written, and are PL/pgSQL:
-- PostgreSQL inlines none of the three where a row's vector is made (search_config and
-- scope_vector hold a sub-select, which it never inlines, and search_document's `config` would be
-- search_config's call twice), and a SQL function that is not inlined is planned again at every
-- call, where PL/pgSQL keeps its plans for the session. As SQL they cost an expense's insert
-- 307 µs of the 1.4 ms its statement takes on the server; as PL/pgSQL, 97 µs (docs/benchmarks.md,
-- "Adding an expense"). They call only pg_catalog's functions (always searched first) and qualify
-- every table, so they pin no search_path, which would cost each call a GUC save and restore.
CREATE OR REPLACE FUNCTION orbit.search_document(config regconfig, title text, body text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN setweight(to_tsvector(config, coalesce(title, '')), 'A') || setweight(to_tsvector(config, coalesce(body, '')), 'B');
END
$$;

-- A community's vector: every lexeme prefixed with the community (the first 12 hex digits of
-- its id), positions and weights kept. The GIN index then holds a word once per community, and a
-- search looks up only its community's posting lists: in the busiest community of the data set
-- a common word is a few thousand entries, not the half million of every community together.
-- (Two communities sharing a prefix only share posting lists; the search checks the community.)
CREATE OR REPLACE FUNCTION orbit.scope_vector(community uuid, document tsvector) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    -- In a tsvector's text each lexeme is quoted (a quote inside it doubled), followed by its
    -- positions and weights, which stay as they are. A lexeme may be at most 2,046 bytes: one
    -- over 2,033 would not fit its prefix, and is left out (no one searches for a 2 kB word).
    -- Only a document whose text is that long can hold one, so only such a document is looked at.
    RETURN regexp_replace(
        CASE WHEN octet_length(document::text) <= 2033 THEN document
            ELSE ts_delete(document, ARRAY(SELECT u.lexeme FROM unnest(document) AS u WHERE octet_length(u.lexeme) > 2033)) END::text,
        '''((?:[^'']|'''')*)''', '''' || left(replace(community::text, '-', ''), 12) || '~\1''', 'g')::tsvector;
END
$$;

-- A query for a community's vectors: each of its lexemes prefixed as orbit.scope_vector does
-- (a lexeme is quoted in a tsquery's text too).
CREATE OR REPLACE FUNCTION orbit.scope_query(community uuid, query tsquery) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_replace(query::text, '''((?:[^'']|'''')*)''', '''' || left(replace(community::text, '-', ''), 12) || '~\1''', 'g')::tsquery
$$;

-- Each table's vector: NULL for what is never found. (No pinned search_path, as above: every name
-- is qualified, and they run once per row written.)
CREATE OR REPLACE FUNCTION orbit.search_vector(p public.posts) RETURNS tsvector
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN p.deleted_at IS NULL AND p.content_encrypted IS NULL THEN
        orbit.scope_vector(p.community_id,
            orbit.search_document(orbit.search_config(p.community_id), p.poll_data ->> 'question', p.content)) END
$$;
CREATE OR REPLACE FUNCTION orbit.search_vector(c public.comments) RETURNS tsvector
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN c.deleted_at IS NULL AND c.content_encrypted IS NULL
            AND EXISTS (SELECT FROM public.posts p WHERE p.id = c.post_id AND p.deleted_at IS NULL) THEN
        orbit.scope_vector(c.community_id, orbit.search_document(orbit.search_config(c.community_id), NULL, c.content)) END
$$;
CREATE OR REPLACE FUNCTION orbit.search_vector(e public.events) RETURNS tsvector
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN e.deleted_at IS NULL THEN
        orbit.scope_vector(e.community_id,
            orbit.search_document(orbit.search_config(e.community_id), e.title, concat_ws(' ', e.location_name, e.description))) END
$$;
CREATE OR REPLACE FUNCTION orbit.search_vector(t public.transactions) RETURNS tsvector
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN t.deleted_at IS NULL AND t.type IN ('expense', 'income') THEN
        orbit.scope_vector(t.community_id, orbit.search_document(orbit.search_config(t.community_id), t.description, NULL)) END
$$;
-- Ciphertext is never indexed (docs/e2e.md): the server cannot read it, and a vector of it would
-- be a copy of the plaintext's words.
CREATE OR REPLACE FUNCTION orbit.search_vector(m public.messages) RETURNS tsvector
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN m.deleted_at IS NULL AND m.content_encrypted IS NULL AND m.text IS NOT NULL THEN
        orbit.scope_vector(m.community_id, orbit.search_document(orbit.search_config(m.community_id), NULL, m.text)) END
$$;

-- The advisory lock class of a community's search language (the object is the community).
CREATE OR REPLACE FUNCTION orbit.search_lock_class() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 820 $$;

-- Keeps a row's vector as it is written: on insert, and on an update of what is indexed or of
-- the vector itself (orbit_app may update whole rows of some tables: a vector it writes is
-- replaced by the true one, so no one can rank their row first or hide it).
--
-- A community's language changing (orbit.reindex_community_search) and a row being written in
-- that community at the same moment: the writer holds a shared advisory lock on the community
-- from before it reads the language to its commit, and the re-index takes it exclusively before
-- it re-reads the rows, so the writer either waits for the new language or is re-indexed.
CREATE OR REPLACE FUNCTION orbit.index_for_search() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(orbit.search_lock_class(), hashtext(NEW.community_id::text));
    -- NEW is of the trigger's table: the call resolves to that table's orbit.search_vector.
    NEW.search_vector := orbit.search_vector(NEW);
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.index_for_search() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_posts_search ON posts;
CREATE TRIGGER trigger_posts_search BEFORE INSERT OR UPDATE OF content, content_encrypted, poll_data, deleted_at, search_vector ON posts
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_comments_search ON comments;
CREATE TRIGGER trigger_comments_search BEFORE INSERT OR UPDATE OF content, content_encrypted, deleted_at, search_vector ON comments
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_events_search ON events;
CREATE TRIGGER trigger_events_search BEFORE INSERT OR UPDATE OF title, description, location_name, deleted_at, search_vector ON events
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_transactions_search ON transactions;
CREATE TRIGGER trigger_transactions_search BEFORE INSERT OR UPDATE OF description, type, deleted_at, search_vector ON transactions
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();
DROP TRIGGER IF EXISTS trigger_messages_search ON messages;
CREATE TRIGGER trigger_messages_search BEFORE INSERT OR UPDATE OF text, content_encrypted, deleted_at, search_vector ON messages
    FOR EACH ROW EXECUTE FUNCTION orbit.index_for_search();

-- A post's comments go with it: deleted, none is found; restored, they are again.
CREATE OR REPLACE FUNCTION orbit.index_post_comments() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- NULL: the trigger (UPDATE OF search_vector) writes the true vector, computed once.
    UPDATE public.comments c SET search_vector = NULL
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
    -- Each row whose vector is not what it should be; NULL: the trigger (UPDATE OF search_vector)
    -- writes the true one, so it is computed once more, not twice.
    UPDATE public.posts r SET search_vector = NULL
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.comments r SET search_vector = NULL
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.events r SET search_vector = NULL
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.transactions r SET search_vector = NULL
    WHERE (r.community_id = community OR (community IS NULL AND r.search_vector IS NULL))
      AND r.search_vector IS DISTINCT FROM orbit.search_vector(r);
    UPDATE public.messages r SET search_vector = NULL
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
    PERFORM pg_advisory_xact_lock(orbit.search_lock_class(), hashtext(NEW.id::text));
    PERFORM orbit.reindex_search(NEW.id);
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.reindex_community_search() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_communities_search_language ON communities;
CREATE TRIGGER trigger_communities_search_language AFTER UPDATE OF settings ON communities
    FOR EACH ROW WHEN ((OLD.settings ->> 'language') IS DISTINCT FROM (NEW.settings ->> 'language'))
    EXECUTE FUNCTION orbit.reindex_community_search();

-- What matches a scoped query in `community`, with its rank: the index's answer, before row-level
-- security. SECURITY DEFINER, because under row-level security PostgreSQL may not use `@@` as an
-- index condition at all (the operator is not leakproof: a policy's filter must run first), and
-- the policies' own community filter then reads every row of the caller's communities (10,000
-- posts in the benchmark's busiest one: 35 ms). So this function asks the index as orbit_admin,
-- but only in a community the caller is a member of, and for messages only in the caller's
-- conversations; orbit.search then reads each row it returns as the caller, under row-level
-- security, which has the last word. The query is EXECUTEd with its values as parameters, so it
-- is planned for them (how few entries the words have).
CREATE OR REPLACE FUNCTION orbit.search_matches(community uuid, scoped tsquery)
RETURNS TABLE (kind text, id uuid, rank float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF community IS NULL OR NOT coalesce(community = ANY (orbit.member_community_ids()), false) THEN
        RETURN;
    END IF;
    -- A query of excluded words only ("-away") names nothing to find: it finds nothing, rather
    -- than every row of the community through a scan of the whole index.
    IF querytree(scoped) = 'T' THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE $query$
        SELECT 'post', p.id, ts_rank_cd(p.search_vector, $2, 1)::float8
        FROM public.posts p WHERE p.search_vector @@ $2 AND p.community_id = $1
        UNION ALL
        SELECT 'comment', c.id, ts_rank_cd(c.search_vector, $2, 1)::float8
        FROM public.comments c WHERE c.search_vector @@ $2 AND c.community_id = $1
        UNION ALL
        SELECT 'event', e.id, ts_rank_cd(e.search_vector, $2, 1)::float8
        FROM public.events e WHERE e.search_vector @@ $2 AND e.community_id = $1
        UNION ALL
        SELECT 'expense', t.id, ts_rank_cd(t.search_vector, $2, 1)::float8
        FROM public.transactions t WHERE t.search_vector @@ $2 AND t.community_id = $1
        UNION ALL
        SELECT 'message', m.id, ts_rank_cd(m.search_vector, $2, 1)::float8
        FROM public.messages m
        WHERE m.search_vector @@ $2 AND m.community_id = $1 AND m.conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[])
    $query$
    USING community, scoped;
END
$function$;
ALTER FUNCTION orbit.search_matches(uuid, tsquery) OWNER TO orbit_admin;

-- The search (OrbitCore's SearchService; docs/search.md): `community`'s rows matching `text`
-- (web search syntax) that the caller may read, best first, after the cursor (`after_rank`,
-- `after_id`, `after_kind`: ids are unique in a table, not across them), at most `lim`, each with a snippet whose matches are between chr(2) and chr(3).
-- SECURITY INVOKER: it reads every match orbit.search_matches found as the caller, orbit_app, so
-- each table's row-level security decides what is found.
CREATE OR REPLACE FUNCTION orbit.search(community uuid, text text, after_rank float8, after_id uuid, after_kind text, lim integer)
RETURNS TABLE (kind text, id uuid, link_id uuid, created_at timestamptz, rank float8, snippet text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- PL/pgSQL keeps this statement's plan for the session (it reads rows by id, whatever the
    -- values); the plan that depends on them is orbit.search_matches'.
    RETURN QUERY
    WITH query AS MATERIALIZED (
        SELECT c.config, q.query, orbit.scope_query(community, q.query) AS scoped
        FROM (SELECT orbit.search_config(community) AS config) AS c, LATERAL (SELECT websearch_to_tsquery(c.config, text) AS query) AS q
    ), matches AS MATERIALIZED (
        SELECT s.* FROM query, orbit.search_matches(community, query.scoped) AS s
    ), page AS (
        -- Best first, each match read as the caller (row-level security) until `lim` are found:
        -- a match the caller may not read is skipped, and no row past the page is read.
        SELECT s.kind, h.id, h.link_id, h.created_at, s.rank, h.body
        FROM (
            SELECT * FROM matches
            WHERE after_rank IS NULL OR (matches.rank, matches.id, matches.kind) < (after_rank, after_id, after_kind)
            ORDER BY matches.rank DESC, matches.id DESC, matches.kind DESC
        ) AS s
        CROSS JOIN LATERAL (
            SELECT p.id, p.id AS link_id, p.created_at, concat_ws(' ', p.poll_data ->> 'question', p.content) AS body
            FROM public.posts p WHERE s.kind = 'post' AND p.id = s.id
            UNION ALL
            SELECT c.id, c.post_id, c.created_at, c.content
            FROM public.comments c WHERE s.kind = 'comment' AND c.id = s.id
            UNION ALL
            SELECT e.id, e.id, e.created_at, concat_ws(' ', e.title, e.location_name, e.description)
            FROM public.events e WHERE s.kind = 'event' AND e.id = s.id
            UNION ALL
            SELECT t.id, t.id, t.created_at, t.description
            FROM public.transactions t WHERE s.kind = 'expense' AND t.id = s.id
            UNION ALL
            SELECT m.id, m.conversation_id, m.created_at, m.text
            FROM public.messages m WHERE s.kind = 'message' AND m.id = s.id
        ) AS h
        LIMIT lim
    )
    SELECT page.kind, page.id, page.link_id, page.created_at, page.rank,
        ts_headline(query.config, translate(page.body, chr(2) || chr(3), ''), query.query,
            'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxWords=24, MinWords=12, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "')
    FROM page, query
    ORDER BY page.rank DESC, page.id DESC, page.kind DESC;
END
$function$;

-- Rights (sql/README.md, "Rights"): the search (as orbit_app) asks for its community's
-- configuration; the rest runs in triggers, as orbit_admin. orbit_admin's EXECUTE is revoked too
-- on the functions the migrating role owns (those that are not SECURITY DEFINER), then granted.
REVOKE ALL ON FUNCTION
    orbit.search_config(uuid), orbit.search_document(regconfig, text, text), orbit.scope_vector(uuid, tsvector),
    orbit.scope_query(uuid, tsquery), orbit.search_lock_class(), orbit.search_vector(public.posts), orbit.search_vector(public.comments),
    orbit.search_vector(public.events), orbit.search_vector(public.transactions), orbit.search_vector(public.messages),
    orbit.search(uuid, text, float8, uuid, text, integer)
FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.search_matches(uuid, tsquery), orbit.index_for_search(), orbit.index_post_comments(), orbit.reindex_search(uuid),
    orbit.reindex_community_search()
FROM PUBLIC, orbit_app;
-- The search as its caller: orbit_app needs what it calls too (the configuration, the scoping).
GRANT EXECUTE ON FUNCTION
    orbit.search(uuid, text, float8, uuid, text, integer), orbit.search_matches(uuid, tsquery), orbit.search_config(uuid),
    orbit.scope_query(uuid, tsquery)
TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.search(uuid, text, float8, uuid, text, integer), orbit.search_matches(uuid, tsquery), orbit.scope_vector(uuid, tsvector),
    orbit.scope_query(uuid, tsquery), orbit.search_lock_class(),
    orbit.search_config(uuid), orbit.search_document(regconfig, text, text), orbit.search_vector(public.posts),
    orbit.search_vector(public.comments), orbit.search_vector(public.events), orbit.search_vector(public.transactions),
    orbit.search_vector(public.messages), orbit.index_for_search(), orbit.index_post_comments(), orbit.reindex_search(uuid),
    orbit.reindex_community_search()
TO orbit_admin;

-- Rows written before this file (an upgrade from before migration 0040) get their vectors (after
-- the rights: orbit_admin, whose functions these are, runs them).
DO $$ BEGIN PERFORM orbit.reindex_search(NULL); END $$;
