-- Search (issue 40, docs/search.md): a stored tsvector per row of what a member can search —
-- posts, comments, events, expenses and chat messages — in a GIN index. Each lexeme carries its
-- community (sql/820_search.sql, orbit.scope_vector), so that a search reads only its
-- community's entries: a word's posting list in the index is one community's, not every
-- community's. sql/820_search.sql keeps the vectors (a trigger per table, the community's
-- language) and fills those of existing rows.
--
-- Accent-insensitive: every configuration `orbit.<language>` is PostgreSQL's own `<language>`
-- with `unaccent` before its stemmer ("café" and "cafe" are one word). The extension is trusted
-- (PostgreSQL 13+): the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA orbit_private;

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
        -- Words of letters and digits ("café1") are not stemmed, but their accents fold too.
        EXECUTE format(
            'ALTER TEXT SEARCH CONFIGURATION orbit.%I ALTER MAPPING FOR numword, numhword, hword_numpart WITH orbit_private.unaccent, pg_catalog.simple',
            config.cfgname);
    END LOOP;
END
$$;

-- A GIN index buffers new entries in a pending list that every search reads through until it is
-- merged (by the insert that fills it, or autovacuum). 256 kB instead of the default 4 MB: a
-- search reads at most 32 pages of it (4,000 posts' pending entries cost a search 3 ms in the
-- benchmark), and a write still rarely pays for a merge.
ALTER TABLE posts ADD COLUMN search_vector tsvector;
ALTER TABLE comments ADD COLUMN search_vector tsvector;
ALTER TABLE events ADD COLUMN search_vector tsvector;
ALTER TABLE transactions ADD COLUMN search_vector tsvector;
ALTER TABLE messages ADD COLUMN search_vector tsvector;

CREATE INDEX idx_posts_search ON posts USING gin (search_vector) WITH (gin_pending_list_limit = 256) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_comments_search ON comments USING gin (search_vector) WITH (gin_pending_list_limit = 256) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_events_search ON events USING gin (search_vector) WITH (gin_pending_list_limit = 256) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_transactions_search ON transactions USING gin (search_vector) WITH (gin_pending_list_limit = 256) WHERE search_vector IS NOT NULL;
CREATE INDEX idx_messages_search ON messages USING gin (search_vector) WITH (gin_pending_list_limit = 256) WHERE search_vector IS NOT NULL;
