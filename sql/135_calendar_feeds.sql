-- Calendar feeds (sql/README.md, docs/calendar-feeds.md): each user's secret feed address. This
-- file owns the policies of calendar_feeds, the rights on it and `orbit.calendar_feed_owner`.

-- Who a feed's token belongs to: the one question asked before there is a user (a phone's
-- calendar fetching the feed sends nothing but the address). The server asks with the token's
-- SHA-256 digest (the table keeps only digests, migrations/0048). Answers nothing for an unknown
-- or revoked token or a deleted account; the feed is then read as that user, under row-level
-- security, so it holds what they may read and nothing more.
CREATE OR REPLACE FUNCTION orbit.calendar_feed_owner(feed_token_hash bytea)
RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT f.user_id FROM public.calendar_feeds f JOIN public.users u ON u.id = f.user_id
    WHERE f.token_hash = feed_token_hash AND u.deleted_at IS NULL
$$;

ALTER FUNCTION orbit.calendar_feed_owner(bytea) OWNER TO orbit_admin;

-- Policies. This file owns every policy on calendar_feeds: it drops them all and recreates the
-- ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('calendar_feeds')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- One's own feed only: shown, rotated and revoked by its owner.
CREATE POLICY calendar_feeds_own ON calendar_feeds FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- Rights (sql/README.md, "Rights").
REVOKE ALL ON calendar_feeds FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON calendar_feeds TO orbit_app;
GRANT ALL ON calendar_feeds TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.calendar_feed_owner(bytea) FROM PUBLIC, orbit_app;
-- Asked by the API for a feed's request, which has no user yet.
GRANT EXECUTE ON FUNCTION orbit.calendar_feed_owner(bytea) TO orbit_app, orbit_admin;
