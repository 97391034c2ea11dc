-- End-to-end encryption (sql/README.md, docs/e2e.md): community keys wrapped per member (and each
-- community's current version, community_key_versions), users' public keys, and the rule that a
-- community with `settings.endToEndEncryption` takes posts, comments and chat messages only as
-- ciphertext under its current key. This file owns the
-- policies of community_keys, user_public_keys and community_key_versions, the rights on them, and
-- the trigger on the three content tables.

-- The current key version of each community (community_key_versions), kept as versions are
-- recorded. The row's lock is what orders a re-key and the content checked against it.
CREATE OR REPLACE FUNCTION orbit.track_key_version() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.community_key_versions AS v (community_id, current_version)
    VALUES (NEW.community_id, NEW.key_version)
    ON CONFLICT (community_id) DO UPDATE SET current_version = greatest(v.current_version, excluded.current_version);
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.track_key_version() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_community_keys_version ON community_keys;
CREATE TRIGGER trigger_community_keys_version AFTER INSERT ON community_keys
    FOR EACH ROW EXECUTE FUNCTION orbit.track_key_version();

-- New or changed content in a community with end-to-end encryption on must be ciphertext under
-- the current key (so a member removed before the last re-key cannot read it); where it is off,
-- ciphertext is refused (no client could read it). Only an UPDATE of a deleted row passes (its
-- text being removed); an INSERT, even of a deleted row, and a restore (deleted_at back to NULL)
-- are checked. Polls are refused there: their question and options are counted by the server,
-- so they cannot be encrypted. The current version is read FOR SHARE (track_key_version).
CREATE OR REPLACE FUNCTION orbit.require_encryption() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    enabled boolean;
    current integer;
    row jsonb := to_jsonb(NEW);
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.deleted_at IS NOT NULL THEN
        RETURN NEW;
    END IF;
    SELECT coalesce((c.settings ->> 'endToEndEncryption')::boolean, false) INTO enabled
    FROM public.communities c WHERE c.id = NEW.community_id;
    IF NOT enabled THEN
        IF NEW.content_encrypted IS NOT NULL THEN
            RAISE EXCEPTION 'end-to-end encryption is off in this community: send plaintext'
                USING ERRCODE = 'check_violation', CONSTRAINT = 'e2e_off';
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.content_encrypted IS NULL THEN
        RAISE EXCEPTION 'end-to-end encryption is on in this community: content must arrive encrypted'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'e2e_ciphertext_required';
    END IF;
    IF TG_TABLE_NAME = 'posts' AND row -> 'poll_data' <> 'null'::jsonb THEN
        RAISE EXCEPTION 'polls cannot be end-to-end encrypted (the server counts their votes)'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'e2e_no_polls';
    END IF;
    SELECT v.current_version INTO current FROM public.community_key_versions v WHERE v.community_id = NEW.community_id FOR SHARE;
    IF current IS NULL THEN
        RAISE EXCEPTION 'the community has no key yet: an admin records one first'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'e2e_no_key';
    END IF;
    IF NEW.encryption_version IS DISTINCT FROM current THEN
        RAISE EXCEPTION 'content must be encrypted with the current key, version %', current
            USING ERRCODE = 'check_violation', CONSTRAINT = 'e2e_key_version';
    END IF;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.require_encryption() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_posts_require_encryption ON posts;
CREATE TRIGGER trigger_posts_require_encryption BEFORE INSERT OR UPDATE OF content, content_encrypted, encryption_version, poll_data, deleted_at ON posts
    FOR EACH ROW EXECUTE FUNCTION orbit.require_encryption();
DROP TRIGGER IF EXISTS trigger_comments_require_encryption ON comments;
CREATE TRIGGER trigger_comments_require_encryption BEFORE INSERT OR UPDATE OF content, content_encrypted, encryption_version, deleted_at ON comments
    FOR EACH ROW EXECUTE FUNCTION orbit.require_encryption();
DROP TRIGGER IF EXISTS trigger_messages_require_encryption ON messages;
CREATE TRIGGER trigger_messages_require_encryption BEFORE INSERT OR UPDATE OF text, content_encrypted, encryption_version, deleted_at ON messages
    FOR EACH ROW EXECUTE FUNCTION orbit.require_encryption();

-- Once on, end-to-end encryption stays on: members' clients rely on it.
CREATE OR REPLACE FUNCTION orbit.keep_encryption_on() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce((OLD.settings ->> 'endToEndEncryption')::boolean, false)
       AND NOT coalesce((NEW.settings ->> 'endToEndEncryption')::boolean, false) THEN
        RAISE EXCEPTION 'end-to-end encryption cannot be turned off once on'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'e2e_stays_on';
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS trigger_communities_keep_encryption_on ON communities;
CREATE TRIGGER trigger_communities_keep_encryption_on BEFORE UPDATE OF settings ON communities
    FOR EACH ROW EXECUTE FUNCTION orbit.keep_encryption_on();

-- Policies. This file owns every policy on community_keys and user_public_keys: it drops them
-- all and recreates the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('community_keys', 'user_public_keys', 'community_key_versions')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- community_keys: the community's members see who holds which version (each wrapped key opens
-- only with its holder's private key); admins record a version for active members only. Rows
-- are never changed or removed by the app: a re-key adds a version.
CREATE POLICY community_keys_select ON community_keys FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY community_keys_insert ON community_keys FOR INSERT TO orbit_app
    WITH CHECK (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        AND created_by = (SELECT orbit.app_user_id())
        AND EXISTS (SELECT FROM public.members m
                    WHERE m.community_id = community_keys.community_id AND m.user_id = community_keys.user_id AND m.left_at IS NULL)
    );

-- user_public_keys: one's own is written by oneself; read by oneself and one's co-members.
CREATE POLICY user_public_keys_select ON user_public_keys FOR SELECT TO orbit_app
    USING (user_id = ANY ((SELECT orbit.contact_user_ids())::uuid[]));
CREATE POLICY user_public_keys_write ON user_public_keys FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- community_key_versions: no policy; only the triggers (as orbit_admin) read and write it.

-- Rights (sql/README.md, "Rights").
REVOKE ALL ON community_keys, user_public_keys, community_key_versions FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT ON community_keys TO orbit_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON user_public_keys TO orbit_app;
GRANT ALL ON community_keys, user_public_keys, community_key_versions TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.track_key_version() FROM PUBLIC, orbit_app;
REVOKE ALL ON FUNCTION orbit.require_encryption() FROM PUBLIC, orbit_app;
REVOKE ALL ON FUNCTION orbit.keep_encryption_on() FROM PUBLIC, orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.keep_encryption_on() TO orbit_admin;
