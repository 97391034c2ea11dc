-- Notifications, devices and push (sql/README.md). This file owns the notifications that follow
-- their source's text, the registration of a device, the policies of notifications, devices
-- and push_deliveries and the rights on them and on its functions.

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
-- question, else its type; "Encrypted post" when it is ciphertext (FeedService.createPost).
CREATE OR REPLACE FUNCTION orbit.notifications_follow_post() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    summary text := CASE WHEN NEW.content_encrypted IS NOT NULL THEN 'Encrypted post'
        ELSE left(coalesce(NEW.content, NEW.poll_data ->> 'question', NEW.type::text), 140) END;
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
CREATE TRIGGER trigger_notifications_follow_post AFTER UPDATE OF content, content_encrypted, poll_data, deleted_at, mentioned_user_ids ON posts
    FOR EACH ROW WHEN (
        NEW.content IS DISTINCT FROM OLD.content OR NEW.content_encrypted IS DISTINCT FROM OLD.content_encrypted
        OR NEW.poll_data IS DISTINCT FROM OLD.poll_data OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at OR NEW.mentioned_user_ids IS DISTINCT FROM OLD.mentioned_user_ids)
    EXECUTE FUNCTION orbit.notifications_follow_post();

CREATE OR REPLACE FUNCTION orbit.notifications_follow_comment() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.deleted_at IS NOT NULL THEN
        DELETE FROM public.notifications n WHERE n.data ? 'comment_id' AND n.data ->> 'comment_id' = NEW.id::text;
        RETURN NULL;
    END IF;
    UPDATE public.notifications n SET body = left(coalesce(NEW.content, ''), 140)
    WHERE n.data ? 'comment_id' AND n.data ->> 'comment_id' = NEW.id::text AND n.body IS DISTINCT FROM left(coalesce(NEW.content, ''), 140);
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

-- Registering an APNs device token for the current user (issue 21). A token names one app
-- install on one phone; when it arrives under another user (the phone changed hands, or another
-- account signed in on it) it moves to the caller, since pushes for the previous owner must stop
-- reaching this phone. Row-level security hides the previous owner's row from the caller, so
-- the move happens here, as the function's owner. Returns the caller's row.
CREATE OR REPLACE FUNCTION orbit.register_device(device_token text, device_environment text, device_bundle_id text, device_locale text)
RETURNS SETOF public.devices
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me uuid := orbit.app_user_id();
BEGIN
    IF me IS NULL THEN
        RAISE EXCEPTION 'registering a device needs an acting user' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
    INSERT INTO public.devices AS d (user_id, token, environment, bundle_id, locale)
    VALUES (me, lower(device_token), device_environment, device_bundle_id, device_locale)
    ON CONFLICT (token) DO UPDATE
        SET user_id = me, environment = EXCLUDED.environment, bundle_id = EXCLUDED.bundle_id, locale = EXCLUDED.locale,
            updated_at = now(),
            created_at = CASE WHEN d.user_id = me THEN d.created_at ELSE now() END
    RETURNING d.*;
END;
$$;
ALTER FUNCTION orbit.register_device(text, text, text, text) OWNER TO orbit_admin;

-- Policies. This file owns every policy on notifications, devices and push_deliveries: it drops
-- them all and recreates the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('notifications', 'devices', 'push_deliveries')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- notifications: read and mark one's own; a member may notify people of a shared community.
CREATE POLICY notifications_own ON notifications FOR SELECT TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY notifications_update ON notifications FOR UPDATE TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY notifications_delete ON notifications FOR DELETE TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY notifications_insert ON notifications FOR INSERT TO orbit_app
    WITH CHECK (
        (community_id IS NULL AND user_id = (SELECT orbit.app_user_id()))
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = ANY ((SELECT orbit.contact_user_ids())::uuid[]))
    );

-- devices (APNs tokens): one's own; registering one that another user had goes through
-- orbit.register_device.
CREATE POLICY devices_own ON devices FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- push deliveries: operators' table (migrations/0018): no policy for orbit_app, and no rights.

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON notifications, devices, push_deliveries FROM orbit_app, orbit_admin;
-- Clear notifications, remove a device: hard deletes.
GRANT SELECT, INSERT, UPDATE, DELETE ON notifications, devices TO orbit_app;
GRANT ALL ON notifications, devices, push_deliveries TO orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.notifications_follow_message(), orbit.notifications_follow_post(), orbit.notifications_follow_comment(),
    orbit.register_device(text, text, text, text)
FROM PUBLIC, orbit_app;
-- An operation checked inside the function.
GRANT EXECUTE ON FUNCTION orbit.register_device(text, text, text, text) TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.notifications_follow_message(), orbit.notifications_follow_post(), orbit.notifications_follow_comment(),
    orbit.register_device(text, text, text, text)
TO orbit_admin;
