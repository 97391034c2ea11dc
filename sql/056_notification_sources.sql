-- Deleted means gone (issue 37, item 5; docs/security.md). A notification copies the text of
-- what it is about into its body: a chat message's text (`chat_message`, data.message_id), a
-- post's first 140 characters (`new_post` and `mention`, data.post_id), a comment's
-- (`mention`, data.comment_id). That copy follows its source, whoever changes it:
--   deleted (deleted_at set): the notifications go too — from GET /notifications, and from the
--     change feed, which then serves their tombstones; a push not sent yet goes with them
--     (push_deliveries cascades);
--   edited: they show the new text, and a mention notification goes for someone the new text no
--     longer mentions.
-- SECURITY DEFINER (owner orbit_admin): the notifications are their recipients', not the
-- author's, and orbit_app may touch only its own.

CREATE OR REPLACE FUNCTION orbit.notifications_follow_message() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.deleted_at IS NOT NULL THEN
        DELETE FROM public.notifications n WHERE n.data ? 'message_id' AND n.data ->> 'message_id' = NEW.id::text;
    ELSE
        UPDATE public.notifications n SET body = coalesce(NEW.text, '')
        WHERE n.data ? 'message_id' AND n.data ->> 'message_id' = NEW.id::text AND n.body IS DISTINCT FROM coalesce(NEW.text, '');
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.notifications_follow_message() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_notifications_follow_message ON messages;
CREATE TRIGGER trigger_notifications_follow_message AFTER UPDATE OF text, deleted_at ON messages
    FOR EACH ROW WHEN (NEW.text IS DISTINCT FROM OLD.text OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at)
    EXECUTE FUNCTION orbit.notifications_follow_message();

-- A post's own notifications (not its comments') carry its summary: its text, else its poll's
-- question, else its type (FeedService.createPost).
CREATE OR REPLACE FUNCTION orbit.notifications_follow_post() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summary text := left(coalesce(NEW.content, NEW.poll_data ->> 'question', NEW.type::text), 140);
BEGIN
    IF NEW.deleted_at IS NOT NULL THEN
        -- The post and everything about it, its comments' mentions too.
        DELETE FROM public.notifications n WHERE n.data ? 'post_id' AND n.data ->> 'post_id' = NEW.id::text;
        RETURN NULL;
    END IF;
    UPDATE public.notifications n SET body = summary
    WHERE n.data ? 'post_id' AND n.data ->> 'post_id' = NEW.id::text AND NOT n.data ? 'comment_id' AND n.body IS DISTINCT FROM summary;
    DELETE FROM public.notifications n
    WHERE n.data ? 'post_id' AND n.data ->> 'post_id' = NEW.id::text AND NOT n.data ? 'comment_id' AND n.type = 'mention'
      AND n.user_id <> ALL (coalesce(NEW.mentioned_user_ids, '{}'));
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.notifications_follow_post() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_notifications_follow_post ON posts;
CREATE TRIGGER trigger_notifications_follow_post AFTER UPDATE OF content, poll_data, deleted_at, mentioned_user_ids ON posts
    FOR EACH ROW WHEN (
        NEW.content IS DISTINCT FROM OLD.content OR NEW.poll_data IS DISTINCT FROM OLD.poll_data
        OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at OR NEW.mentioned_user_ids IS DISTINCT FROM OLD.mentioned_user_ids)
    EXECUTE FUNCTION orbit.notifications_follow_post();

CREATE OR REPLACE FUNCTION orbit.notifications_follow_comment() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.deleted_at IS NOT NULL THEN
        DELETE FROM public.notifications n WHERE n.data ? 'comment_id' AND n.data ->> 'comment_id' = NEW.id::text;
        RETURN NULL;
    END IF;
    UPDATE public.notifications n SET body = left(NEW.content, 140)
    WHERE n.data ? 'comment_id' AND n.data ->> 'comment_id' = NEW.id::text AND n.body IS DISTINCT FROM left(NEW.content, 140);
    DELETE FROM public.notifications n
    WHERE n.data ? 'comment_id' AND n.data ->> 'comment_id' = NEW.id::text AND n.type = 'mention'
      AND n.user_id <> ALL (coalesce(NEW.mentioned_user_ids, '{}'));
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.notifications_follow_comment() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_notifications_follow_comment ON comments;
CREATE TRIGGER trigger_notifications_follow_comment AFTER UPDATE OF content, deleted_at, mentioned_user_ids ON comments
    FOR EACH ROW WHEN (
        NEW.content IS DISTINCT FROM OLD.content OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
        OR NEW.mentioned_user_ids IS DISTINCT FROM OLD.mentioned_user_ids)
    EXECUTE FUNCTION orbit.notifications_follow_comment();
