-- Search (issue 40, docs/search.md): a stored tsvector per row of what a member can search —
-- posts, comments, events, expenses and chat messages — in a GIN index led by the community, so
-- that a community's search reads only that community's entries. sql/820_search.sql keeps the
-- vectors (a trigger per table, the community's language) and fills those of existing rows.
--
-- Accent-insensitive: every configuration `orbit.<language>` is PostgreSQL's own `<language>`
-- with `unaccent` before its stemmer ("café" and "cafe" are one word). `btree_gin` lets one GIN
-- index hold the community's id and the vector. Both extensions are trusted (PostgreSQL 13+):
-- the database's owner may create them.
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA orbit_private;
CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA orbit_private;

DO $$
DECLARE
    config record;
BEGIN
    FOR config IN
        SELECT c.cfgname, (
            SELECT d.dictname FROM pg_catalog.pg_ts_config_map m JOIN pg_catalog.pg_ts_dict d ON d.oid = m.mapdict
            WHERE m.mapcfg = c.oid AND m.mapseqno = 1
              AND m.maptokentype = (SELECT t.tokid FROM pg_catalog.ts_token_type('default') t WHERE t.alias = 'asciiword')
        ) AS stemmer
        FROM pg_catalog.pg_ts_config c
        WHERE c.cfgnamespace = 'pg_catalog'::regnamespace
    LOOP
        EXECUTE format('CREATE TEXT SEARCH CONFIGURATION orbit.%I (COPY = pg_catalog.%I)', config.cfgname, config.cfgname);
        EXECUTE format(
            'ALTER TEXT SEARCH CONFIGURATION orbit.%I ALTER MAPPING FOR hword, hword_part, word WITH orbit_private.unaccent, pg_catalog.%I',
            config.cfgname, config.stemmer);
    END LOOP;
END
$$;

ALTER TABLE posts ADD COLUMN search_vector tsvector;
ALTER TABLE comments ADD COLUMN search_vector tsvector;
ALTER TABLE events ADD COLUMN search_vector tsvector;
ALTER TABLE transactions ADD COLUMN search_vector tsvector;
ALTER TABLE messages ADD COLUMN search_vector tsvector;

CREATE INDEX idx_posts_search ON posts USING gin (community_id, search_vector) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_comments_search ON comments USING gin (community_id, search_vector) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_events_search ON events USING gin (community_id, search_vector) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_transactions_search ON transactions USING gin (community_id, search_vector) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_messages_search ON messages USING gin (community_id, search_vector) WHERE search_vector IS NOT NULL;
