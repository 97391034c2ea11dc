-- The feed (sql/README.md): posts, comments, reactions and polls. This file owns the polls'
-- rules, the admin-only post flags, the policies of posts, comments, reactions and poll_votes
-- and the rights on them and on its functions. (Their counters are sql/040_counters.sql's,
-- the notifications that follow their text sql/190_notifications.sql's.)

-- Poll votes (spec: poll_votes.post_id "must be poll type"; UNIQUE(post_id, user_id,
-- option_index) "depends on allowMultiple"). The draft enforced none of it.
--
-- A vote is on a poll post, for an option index inside the poll's options; it copies whether
-- the poll is single-choice into poll_votes.single_choice, where a partial unique index allows
-- one vote per user and post. A unique index, unlike a check of existing votes in a trigger,
-- also holds when two votes of the same user arrive at the same moment.
CREATE OR REPLACE FUNCTION orbit.check_poll_vote() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    post record;
BEGIN
    SELECT p.community_id, p.type, p.poll_data INTO post FROM public.posts p WHERE p.id = NEW.post_id;
    IF NOT FOUND THEN
        RETURN NEW; -- the foreign key reports the missing post
    END IF;
    IF post.type <> 'poll' THEN
        RAISE EXCEPTION 'votes are only accepted on poll posts'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'poll_votes_poll_post', TABLE = 'poll_votes';
    END IF;
    IF NEW.option_index < 0 OR NEW.option_index >= jsonb_array_length(post.poll_data -> 'options') THEN
        RAISE EXCEPTION 'option % is not an option of this poll', NEW.option_index
            USING ERRCODE = 'check_violation', CONSTRAINT = 'poll_votes_option_index', TABLE = 'poll_votes';
    END IF;
    NEW.community_id := coalesce(NEW.community_id, post.community_id);
    NEW.single_choice := (post.poll_data -> 'allowMultiple') IS DISTINCT FROM 'true'::jsonb;
    RETURN NEW;
END
$$;

ALTER FUNCTION orbit.check_poll_vote() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_poll_votes_check ON poll_votes;
CREATE TRIGGER trigger_poll_votes_check BEFORE INSERT OR UPDATE OF option_index ON poll_votes
    FOR EACH ROW EXECUTE FUNCTION orbit.check_poll_vote();

-- A poll's options and single/multiple choice are fixed once someone has voted: changing them
-- would re-target or invalidate cast votes.
CREATE OR REPLACE FUNCTION orbit.freeze_voted_poll() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF ((NEW.poll_data -> 'options') IS DISTINCT FROM (OLD.poll_data -> 'options')
        OR (NEW.poll_data -> 'allowMultiple') IS DISTINCT FROM (OLD.poll_data -> 'allowMultiple')
        OR NEW.type IS DISTINCT FROM OLD.type)
       AND EXISTS (SELECT FROM public.poll_votes v WHERE v.post_id = NEW.id) THEN
        RAISE EXCEPTION 'a poll''s options cannot change once it has votes'
            USING ERRCODE = 'restrict_violation', CONSTRAINT = 'posts_poll_frozen', TABLE = 'posts';
    END IF;
    RETURN NEW;
END
$$;

ALTER FUNCTION orbit.freeze_voted_poll() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_posts_poll_frozen ON posts;
CREATE TRIGGER trigger_posts_poll_frozen BEFORE UPDATE OF poll_data, type ON posts
    FOR EACH ROW EXECUTE FUNCTION orbit.freeze_voted_poll();

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

-- Policies. This file owns every policy on posts, comments, reactions and poll_votes: it drops them
-- all and recreates the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('posts', 'comments', 'reactions', 'poll_votes')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- posts: members post when the community allows it; announcements and pins are for admins.
CREATE POLICY posts_select ON posts FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY posts_insert ON posts FOR INSERT TO orbit_app
    WITH CHECK (
        author_id = (SELECT orbit.app_user_id())
        AND (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
             OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
                 AND type <> 'announcement' AND NOT is_announcement AND NOT is_pinned
                 AND orbit.community_allows(community_id, 'allowMemberPosts')))
    );
CREATE POLICY posts_update ON posts FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND author_id = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- reactions and poll votes: one's own.
CREATE POLICY reactions_select ON reactions FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY reactions_write ON reactions FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()));
CREATE POLICY poll_votes_select ON poll_votes FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY poll_votes_write ON poll_votes FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()));

-- comments: members comment as themselves; the author or an admin edits (soft-deletes).
CREATE POLICY comments_select ON comments FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY comments_insert ON comments FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND author_id = (SELECT orbit.app_user_id()));
CREATE POLICY comments_update ON comments FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND author_id = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON posts, comments, reactions, poll_votes FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT ON posts TO orbit_app;
GRANT UPDATE (type, content, media_urls, is_pinned, is_announcement, linked_event_id, poll_data, deleted_at, mentioned_user_ids,
    content_encrypted, encryption_version)
    ON posts TO orbit_app;
GRANT SELECT, INSERT, UPDATE ON comments TO orbit_app;
-- Un-react, withdraw a vote: hard deletes.
GRANT SELECT, INSERT, UPDATE, DELETE ON reactions, poll_votes TO orbit_app;
GRANT ALL ON posts, comments, reactions, poll_votes TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.guard_post_flags() FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION orbit.check_poll_vote(), orbit.freeze_voted_poll() FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.check_poll_vote(), orbit.freeze_voted_poll(), orbit.guard_post_flags() TO orbit_admin;
