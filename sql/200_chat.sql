-- Chat (sql/README.md): conversations, participants, messages and presence. This file owns
-- chat's invariants and helpers, the policies of conversations, conversation_participants,
-- messages and live_connections and the rights on them and on its functions. (Chat's change
-- log and live notifications are sql/800_changes.sql's, a message's notifications
-- sql/190_notifications.sql's.)
--
-- Chat's invariants (migrations/0020_chat.sql, docs/chat.md), kept by the database whoever
-- writes. SECURITY DEFINER (owner orbit_admin): they write what orbit_app may not (the
-- conversation's position and last message, participants of the community conversation).

-- Every community has its conversation from the start.
CREATE OR REPLACE FUNCTION orbit.chat_community_conversation() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.conversations (community_id, kind, created_by) VALUES (NEW.id, 'community', NEW.created_by)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.chat_community_conversation() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chat_community_conversation ON communities;
CREATE TRIGGER trigger_chat_community_conversation AFTER INSERT ON communities
    FOR EACH ROW EXECUTE FUNCTION orbit.chat_community_conversation();

-- Active members take part in the community conversation; leaving (or being removed from) the
-- community ends every participation in its conversations at once. Rejoining brings back the
-- community conversation, not the groups and direct conversations.
CREATE OR REPLACE FUNCTION orbit.chat_follow_membership() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.left_at IS NULL THEN
        INSERT INTO public.conversation_participants (conversation_id, user_id, community_id)
        SELECT c.id, NEW.user_id, NEW.community_id FROM public.conversations c
        WHERE c.community_id = NEW.community_id AND c.kind = 'community'
        ON CONFLICT (conversation_id, user_id) DO UPDATE SET left_at = NULL, joined_at = now()
            WHERE conversation_participants.left_at IS NOT NULL;
    ELSIF TG_OP = 'UPDATE' AND OLD.left_at IS NULL THEN
        UPDATE public.conversation_participants SET left_at = now()
        WHERE community_id = NEW.community_id AND user_id = NEW.user_id AND left_at IS NULL;
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.chat_follow_membership() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chat_follow_membership ON members;
CREATE TRIGGER trigger_chat_follow_membership AFTER INSERT OR UPDATE OF left_at ON members
    FOR EACH ROW EXECUTE FUNCTION orbit.chat_follow_membership();

-- A participant is an active member of the conversation's community; a group has at most 256
-- active participants, a direct conversation its two.
CREATE OR REPLACE FUNCTION orbit.chat_check_participant() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conversation record;
BEGIN
    -- The conversation's row lock orders concurrent additions, so the cap holds under races.
    SELECT c.community_id, c.kind, c.direct_user_low, c.direct_user_high INTO conversation
    FROM public.conversations c WHERE c.id = NEW.conversation_id FOR UPDATE;
    NEW.community_id := conversation.community_id;
    IF NEW.left_at IS NOT NULL THEN
        RETURN NEW;
    END IF;
    IF NOT EXISTS (
        SELECT FROM public.members m WHERE m.community_id = NEW.community_id AND m.user_id = NEW.user_id AND m.left_at IS NULL
    ) THEN
        RAISE EXCEPTION 'a participant must be an active member of the community'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'conversation_participants_members', TABLE = 'conversation_participants';
    END IF;
    IF conversation.kind = 'direct' AND NEW.user_id NOT IN (conversation.direct_user_low, conversation.direct_user_high) THEN
        RAISE EXCEPTION 'a direct conversation is between its two members'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'conversation_participants_direct', TABLE = 'conversation_participants';
    END IF;
    IF conversation.kind = 'group' AND (
        SELECT count(*) FROM public.conversation_participants p
        WHERE p.conversation_id = NEW.conversation_id AND p.left_at IS NULL AND p.user_id <> NEW.user_id
    ) >= 256 THEN
        RAISE EXCEPTION 'a group has at most 256 participants'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'conversation_participants_group_size', TABLE = 'conversation_participants';
    END IF;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.chat_check_participant() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chat_check_participant ON conversation_participants;
CREATE TRIGGER trigger_chat_check_participant BEFORE INSERT OR UPDATE OF left_at ON conversation_participants
    FOR EACH ROW EXECUTE FUNCTION orbit.chat_check_participant();

-- A new message: under the conversation's row lock, a resend (same sender and
-- client_message_id) stores nothing; otherwise the message takes the next position and becomes
-- the conversation's last message.
CREATE OR REPLACE FUNCTION orbit.chat_store_message() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    conversation_community uuid;
BEGIN
    SELECT c.community_id INTO conversation_community FROM public.conversations c WHERE c.id = NEW.conversation_id FOR UPDATE;
    -- Read after the lock: a resend that waited for the first sees it committed.
    IF NEW.client_message_id IS NOT NULL AND EXISTS (
        SELECT FROM public.messages m WHERE m.sender_id = NEW.sender_id AND m.client_message_id = NEW.client_message_id
    ) THEN
        RETURN NULL;
    END IF;
    NEW.community_id := conversation_community;
    UPDATE public.conversations SET
        last_position = last_position + 1, last_message_id = NEW.id, last_message_sender_id = NEW.sender_id,
        last_message_text = NEW.text, last_message_at = NEW.created_at
    WHERE id = NEW.conversation_id
    RETURNING last_position INTO NEW.position;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.chat_store_message() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chat_store_message ON messages;
CREATE TRIGGER trigger_chat_store_message BEFORE INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION orbit.chat_store_message();

-- An edit or a deletion of the conversation's last message shows in its preview.
CREATE OR REPLACE FUNCTION orbit.chat_refresh_last_message() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE public.conversations SET last_message_text = CASE WHEN NEW.deleted_at IS NULL THEN NEW.text END
    WHERE id = NEW.conversation_id AND last_message_id = NEW.id;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.chat_refresh_last_message() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chat_refresh_last_message ON messages;
CREATE TRIGGER trigger_chat_refresh_last_message AFTER UPDATE OF text, deleted_at ON messages
    FOR EACH ROW EXECUTE FUNCTION orbit.chat_refresh_last_message();

-- The conversations the current user takes part in now: an active participant and an active
-- member of a community that is not deleted (row-level security of chat, the policies below).
CREATE OR REPLACE FUNCTION orbit.conversation_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(p.conversation_id), '{}')
        FROM public.conversation_participants p
        JOIN public.members m ON m.community_id = p.community_id AND m.user_id = p.user_id AND m.left_at IS NULL
        JOIN public.communities c ON c.id = p.community_id AND c.deleted_at IS NULL
        WHERE p.user_id = orbit.app_user_id() AND p.left_at IS NULL
    );
END
$$;
ALTER FUNCTION orbit.conversation_ids() OWNER TO orbit_admin;

-- Conversations the current user started: its starter adds the people of a group or direct
-- conversation (`groups_only` false), and removes people from a group (true).
CREATE OR REPLACE FUNCTION orbit.started_conversation_ids(groups_only boolean) RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(c.id), '{}') FROM public.conversations c
        WHERE c.created_by = orbit.app_user_id() AND c.kind IN ('group', CASE WHEN groups_only THEN 'group' ELSE 'direct' END)
          AND c.community_id = ANY (orbit.member_community_ids())
    );
END
$$;
ALTER FUNCTION orbit.started_conversation_ids(boolean) OWNER TO orbit_admin;

-- Presence (issue 22, item 4): for each of `users` the current user may see — themselves, and
-- people who share an active community with them — whether they show it, whether they are
-- online (a live socket of theirs is fresh: its server refreshed it within 90 s), and when they
-- were last seen (their last socket closed, or went stale). Nothing of someone who hides it.
CREATE OR REPLACE FUNCTION orbit.presence(users uuid[])
RETURNS TABLE (user_id uuid, visible boolean, online boolean, last_seen_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT u.id, v.visible,
        v.visible AND coalesce(l.fresh, false),
        CASE WHEN v.visible THEN greatest(u.last_seen_at, l.seen) END
    FROM public.users u
    CROSS JOIN LATERAL (SELECT u.presence_visible OR u.id = orbit.app_user_id() AS visible) v
    LEFT JOIN LATERAL (
        SELECT max(c.seen_at) AS seen, bool_or(c.seen_at > now() - interval '90 seconds') AS fresh
        FROM public.live_connections c WHERE c.user_id = u.id
    ) l ON true
    WHERE u.id = ANY (users) AND u.id = ANY (orbit.contact_user_ids())
$$;
ALTER FUNCTION orbit.presence(uuid[]) OWNER TO orbit_admin;

-- Whom a new message of `conversation` is pushed to: its active participants (active members),
-- but not the current user (the sender), not those who muted it, not those with a fresh live
-- socket (it reaches them there), not those who switched chat pushes off for the community.
-- Empty unless the current user takes part in the conversation.
CREATE OR REPLACE FUNCTION orbit.chat_push_recipients(conversation uuid) RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.user_id FROM public.conversation_participants p
    JOIN public.members m ON m.community_id = p.community_id AND m.user_id = p.user_id AND m.left_at IS NULL
    WHERE p.conversation_id = conversation AND conversation = ANY (orbit.conversation_ids())
      AND p.left_at IS NULL AND p.user_id <> orbit.app_user_id()
      AND (p.muted_until IS NULL OR p.muted_until <= now())
      AND (m.notification_prefs -> 'chat_message') IS DISTINCT FROM 'false'::jsonb
      AND NOT EXISTS (
          SELECT FROM public.live_connections c WHERE c.user_id = p.user_id AND c.seen_at > now() - interval '90 seconds'
      )
$$;
ALTER FUNCTION orbit.chat_push_recipients(uuid) OWNER TO orbit_admin;

-- Policies. This file owns every policy on conversations, conversation_participants, messages and
-- live_connections: it drops them all and recreates the ones below, so a policy removed here is
-- removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN (
            'conversations', 'conversation_participants', 'messages', 'live_connections'
        )
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- chat: only the people taking part read or write a conversation — active
-- participants who are active members of its community. A group's or direct conversation's
-- starter adds (and removes) its people; everyone updates their own participation (watermarks,
-- mute, leaving); a message is written by its sender, and an admin may delete one in the
-- community conversation.
CREATE POLICY conversations_select ON conversations FOR SELECT TO orbit_app
    USING (id = ANY ((SELECT orbit.conversation_ids())::uuid[]));
CREATE POLICY conversations_insert ON conversations FOR INSERT TO orbit_app
    WITH CHECK (
        created_by = (SELECT orbit.app_user_id()) AND kind IN ('group', 'direct')
        AND community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
    );
CREATE POLICY conversations_update ON conversations FOR UPDATE TO orbit_app
    USING (id = ANY ((SELECT orbit.conversation_ids())::uuid[]) AND kind = 'group')
    WITH CHECK (id = ANY ((SELECT orbit.conversation_ids())::uuid[]) AND kind = 'group');
CREATE POLICY conversation_participants_select ON conversation_participants FOR SELECT TO orbit_app
    USING (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]));
CREATE POLICY conversation_participants_insert ON conversation_participants FOR INSERT TO orbit_app
    WITH CHECK (conversation_id = ANY ((SELECT orbit.started_conversation_ids(false))::uuid[]));
CREATE POLICY conversation_participants_update ON conversation_participants FOR UPDATE TO orbit_app
    USING (
        conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[])
        AND (user_id = (SELECT orbit.app_user_id()) OR conversation_id = ANY ((SELECT orbit.started_conversation_ids(true))::uuid[]))
    )
    WITH CHECK (user_id = (SELECT orbit.app_user_id()) OR conversation_id = ANY ((SELECT orbit.started_conversation_ids(true))::uuid[]));
CREATE POLICY messages_select ON messages FOR SELECT TO orbit_app
    USING (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]));
CREATE POLICY messages_insert ON messages FOR INSERT TO orbit_app
    WITH CHECK (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]) AND sender_id = (SELECT orbit.app_user_id()));
CREATE POLICY messages_update ON messages FOR UPDATE TO orbit_app
    USING (
        conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[])
        AND (sender_id = (SELECT orbit.app_user_id())
             OR (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
                 AND EXISTS (SELECT FROM conversations c WHERE c.id = conversation_id AND c.kind = 'community')))
    )
    WITH CHECK (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]));

-- live connections (presence): servers only (orbit_admin); people see presence through
-- orbit.presence(), which applies who may see it. No policy for orbit_app: nothing.

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON conversations, conversation_participants, messages, live_connections FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT ON conversations, conversation_participants, messages TO orbit_app;
GRANT UPDATE (title) ON conversations TO orbit_app;
GRANT UPDATE (left_at, read_position, delivered_position, muted_until) ON conversation_participants TO orbit_app;
GRANT UPDATE (text, content_encrypted, encryption_version, edited_at, deleted_at) ON messages TO orbit_app;
GRANT ALL ON conversations, conversation_participants, messages, live_connections TO orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.chat_community_conversation(), orbit.chat_follow_membership(), orbit.chat_check_participant(),
    orbit.chat_store_message(), orbit.chat_refresh_last_message(), orbit.conversation_ids(),
    orbit.started_conversation_ids(boolean), orbit.presence(uuid[]), orbit.chat_push_recipients(uuid)
FROM PUBLIC, orbit_app;
-- Functions policies call as the querying role, and operations checked inside the function.
GRANT EXECUTE ON FUNCTION
    orbit.conversation_ids(), orbit.started_conversation_ids(boolean), orbit.presence(uuid[]), orbit.chat_push_recipients(uuid)
TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.chat_community_conversation(), orbit.chat_follow_membership(), orbit.chat_check_participant(),
    orbit.chat_store_message(), orbit.chat_refresh_last_message(), orbit.conversation_ids(),
    orbit.started_conversation_ids(boolean), orbit.presence(uuid[]), orbit.chat_push_recipients(uuid)
TO orbit_admin;
