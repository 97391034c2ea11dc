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
