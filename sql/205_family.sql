-- The family (sql/README.md): family members, the signed-in child, PINs and paired devices.
-- This file owns the person behind a holder of points (the user, or a family member's parent:
-- their name and their notifications), the child sign-in functions, the policies of family_members,
-- child_credentials and child_devices, and the rights on them and on its functions. Chores,
-- points and rewards (sql/210_chores.sql) build on it; what a child's device syncs is
-- sql/800_changes.sql's.
--
-- Who asks — a user, or a child signed in on a paired device (orbit.app_child_id(),
-- orbit.child_community_ids(), orbit.app_child_parent_id()) — is sql/010_session.sql's.

-- A family member's avatar by upload is an image one of their guardians uploaded (their own, or
-- the child's from a paired device: media.uploaded_by is the guardian of record), whoever writes.
CREATE OR REPLACE FUNCTION orbit.check_family_avatar() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (
        SELECT FROM public.media m
        WHERE m.id = NEW.avatar_media_id AND m.type = 'image'
          AND (m.uploaded_by = NEW.user_id OR EXISTS (
              SELECT FROM public.family_guardians g
              WHERE g.family_member_id = NEW.id AND g.user_id = m.uploaded_by AND g.accepted_at IS NOT NULL
          ))
    ) THEN
        RAISE EXCEPTION 'avatar % is not an image one of the family member''s guardians uploaded', NEW.avatar_media_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'family_members_avatar_media', TABLE = 'family_members';
    END IF;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.check_family_avatar() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_family_avatar ON family_members;
-- Checked when the avatar is set, not when the guardian of record changes: an avatar set by a
-- guardian who has since left stays.
CREATE TRIGGER trigger_family_avatar BEFORE INSERT OR UPDATE OF avatar_media_id ON family_members
    FOR EACH ROW WHEN (NEW.avatar_media_id IS NOT NULL) EXECUTE FUNCTION orbit.check_family_avatar();

-- The family members the current user is a guardian of (an invitation accepted, or the one who
-- added them).
CREATE OR REPLACE FUNCTION orbit.parent_family_member_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(g.family_member_id), '{}') FROM public.family_guardians g
        WHERE g.user_id = orbit.app_user_id() AND g.accepted_at IS NOT NULL
    );
END
$$;
ALTER FUNCTION orbit.parent_family_member_ids() OWNER TO orbit_admin;

-- The family members one of whose guardians (an invitation accepted) the current user shares an
-- active community with, or is: a co-parent's household sees the child it shares with them, as it
-- sees the co-parent's own (family_members_select).
CREATE OR REPLACE FUNCTION orbit.contact_family_member_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(DISTINCT g.family_member_id), '{}') FROM public.family_guardians g
        WHERE g.user_id = ANY (orbit.contact_user_ids()) AND g.accepted_at IS NOT NULL
    );
END
$$;
ALTER FUNCTION orbit.contact_family_member_ids() OWNER TO orbit_admin;

-- Guardians (docs/chores.md, "Two parents"). The one who adds a family member is their first
-- guardian and their guardian of record (family_members.user_id); the guardian of record is
-- always one of the guardians, whoever writes, so the last guardian cannot leave and the
-- guardian of record leaves only once another is. These triggers hold it.
CREATE OR REPLACE FUNCTION orbit.family_first_guardian() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.family_guardians (family_member_id, user_id, invited_by, accepted_at)
    VALUES (NEW.id, NEW.user_id, NEW.user_id, now());
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.family_first_guardian() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_family_first_guardian ON family_members;
CREATE TRIGGER trigger_family_first_guardian AFTER INSERT ON family_members
    FOR EACH ROW EXECUTE FUNCTION orbit.family_first_guardian();

-- Every family member has their first guardian, also one added between migration 0071 and this
-- file's trigger.
INSERT INTO family_guardians (family_member_id, user_id, invited_by, created_at, accepted_at)
SELECT f.id, f.user_id, f.user_id, f.created_at, f.created_at FROM family_members f
WHERE NOT EXISTS (SELECT FROM family_guardians g WHERE g.family_member_id = f.id AND g.user_id = f.user_id)
ON CONFLICT DO NOTHING;

-- A new guardian of record is one of the guardians.
CREATE OR REPLACE FUNCTION orbit.family_guardian_of_record() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- FOR SHARE: the guardian does not leave until this commits (orbit.family_guardian_stays).
    IF NOT EXISTS (
        SELECT FROM public.family_guardians g
        WHERE g.family_member_id = NEW.id AND g.user_id = NEW.user_id AND g.accepted_at IS NOT NULL
        FOR SHARE
    ) THEN
        RAISE EXCEPTION 'the guardian of record is one of the family member''s guardians'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'family_members_guardian_of_record', TABLE = 'family_members';
    END IF;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.family_guardian_of_record() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_family_guardian_of_record ON family_members;
CREATE TRIGGER trigger_family_guardian_of_record BEFORE UPDATE OF user_id ON family_members
    FOR EACH ROW WHEN (NEW.user_id IS DISTINCT FROM OLD.user_id) EXECUTE FUNCTION orbit.family_guardian_of_record();

-- The child's answers to events are the guardian of record's (one answer per child: the RSVP
-- service writes them as the guardian of record): they move with the record, so that the new one
-- changes them and the child is never counted twice. An answer's author is fixed
-- (trigger_rsvps_fixed), so each is written anew under the new one and the old one goes. (Shares
-- in expenses do not move: money owed stays with whom it was written.)
CREATE OR REPLACE FUNCTION orbit.family_record_moves_answers() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.rsvps (event_id, user_id, family_member_id, status, plus_ones, note, responded_at, community_id)
    SELECT r.event_id, NEW.user_id, r.family_member_id, r.status, r.plus_ones, r.note, r.responded_at, r.community_id
    FROM public.rsvps r WHERE r.family_member_id = NEW.id AND r.user_id = OLD.user_id
    ON CONFLICT ON CONSTRAINT rsvps_event_id_user_id_family_member_id_key DO NOTHING;
    DELETE FROM public.rsvps r WHERE r.family_member_id = NEW.id AND r.user_id = OLD.user_id;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.family_record_moves_answers() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_family_record_moves_answers ON family_members;
CREATE TRIGGER trigger_family_record_moves_answers AFTER UPDATE OF user_id ON family_members
    FOR EACH ROW WHEN (NEW.user_id IS DISTINCT FROM OLD.user_id) EXECUTE FUNCTION orbit.family_record_moves_answers();

-- A family member with other guardians is not removed: removing them would end the others'
-- guardianship, and one guardian does not remove another. The others leave first.
CREATE OR REPLACE FUNCTION orbit.family_member_removable() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (
        SELECT FROM public.family_guardians g
        WHERE g.family_member_id = OLD.id AND g.user_id <> OLD.user_id AND g.accepted_at IS NOT NULL
    ) THEN
        RAISE EXCEPTION 'the family member has other guardians: they leave first'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'family_members_other_guardians', TABLE = 'family_members';
    END IF;
    RETURN OLD;
END
$$;
ALTER FUNCTION orbit.family_member_removable() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_family_member_removable ON family_members;
CREATE TRIGGER trigger_family_member_removable BEFORE DELETE ON family_members
    FOR EACH ROW EXECUTE FUNCTION orbit.family_member_removable();

-- The guardian of record does not leave (nor becomes an invitation again): another guardian
-- becomes the guardian of record first, and the last guardian cannot leave at all. A family
-- member removed takes their guardians along (the family member is gone by then).
-- A change of the guardian of record and that guardian leaving at the same moment cannot both
-- commit: the change locks the guardian's row (FOR SHARE, orbit.family_guardian_of_record), which
-- the leaving deletes, so whichever comes second waits and then sees the other
-- (GuardianTests.recordAndLeaveRace). One lock, not one on each side: two would meet in opposite
-- orders and deadlock.
CREATE OR REPLACE FUNCTION orbit.family_guardian_stays() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM public.family_members f WHERE f.id = OLD.family_member_id AND f.user_id = OLD.user_id)
       AND (TG_OP = 'DELETE' OR NEW.accepted_at IS NULL OR NEW.user_id <> OLD.user_id OR NEW.family_member_id <> OLD.family_member_id) THEN
        IF EXISTS (
            SELECT FROM public.family_guardians g
            WHERE g.family_member_id = OLD.family_member_id AND g.user_id <> OLD.user_id AND g.accepted_at IS NOT NULL
        ) THEN
            RAISE EXCEPTION 'the guardian of record leaves once another guardian is the guardian of record'
                USING ERRCODE = 'check_violation', CONSTRAINT = 'family_guardians_of_record', TABLE = 'family_guardians';
        END IF;
        RAISE EXCEPTION 'the last guardian cannot leave: remove the family member instead'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'family_guardians_last', TABLE = 'family_guardians';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END
$$;
ALTER FUNCTION orbit.family_guardian_stays() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_family_guardian_stays ON family_guardians;
CREATE TRIGGER trigger_family_guardian_stays BEFORE DELETE OR UPDATE ON family_guardians
    FOR EACH ROW EXECUTE FUNCTION orbit.family_guardian_stays();

-- Invites `invitee` to be a guardian of `child`: the current user is one, and the invitee shares
-- a community with them. Raises unique_violation (family_guardians_pkey) for someone who is a
-- guardian or invited already.
CREATE OR REPLACE FUNCTION orbit.invite_guardian(child uuid, invitee uuid) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT child = ANY (orbit.parent_family_member_ids()) THEN
        RAISE EXCEPTION 'only a guardian invites another' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF invitee IS NULL OR NOT invitee = ANY (orbit.contact_user_ids()) OR invitee = orbit.app_user_id() THEN
        RAISE EXCEPTION 'a guardian invites someone they share a community with'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'family_guardians_contact', TABLE = 'family_guardians';
    END IF;
    INSERT INTO public.family_guardians (family_member_id, user_id, invited_by) VALUES (child, invitee, orbit.app_user_id());
END
$$;
ALTER FUNCTION orbit.invite_guardian(uuid, uuid) OWNER TO orbit_admin;

-- The current user accepts their invitation to be `child`'s guardian. False when there is none.
CREATE OR REPLACE FUNCTION orbit.accept_guardianship(child uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE public.family_guardians g SET accepted_at = now()
    WHERE g.family_member_id = child AND g.user_id = orbit.app_user_id() AND g.accepted_at IS NULL
      -- The inviter is a guardian still.
      AND EXISTS (
          SELECT FROM public.family_guardians i
          WHERE i.family_member_id = child AND i.user_id = g.invited_by AND i.accepted_at IS NOT NULL
      );
    RETURN FOUND;
END
$$;
ALTER FUNCTION orbit.accept_guardianship(uuid) OWNER TO orbit_admin;

-- Ends `guardian`'s guardianship of `child`, or their invitation: the current user leaves (or
-- declines), or a guardian withdraws an invitation not accepted yet. One guardian does not remove
-- another who accepted. False when there is no such guardian or invitation.
CREATE OR REPLACE FUNCTION orbit.remove_guardian(child uuid, guardian uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    invitation record;
BEGIN
    IF orbit.app_user_id() IS NULL THEN
        RAISE EXCEPTION 'a user ends a guardianship' USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT g.accepted_at INTO invitation FROM public.family_guardians g
    WHERE g.family_member_id = child AND g.user_id = guardian FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF guardian IS DISTINCT FROM orbit.app_user_id() THEN
        IF NOT child = ANY (orbit.parent_family_member_ids()) THEN
            RETURN false;
        END IF;
        IF invitation.accepted_at IS NOT NULL THEN
            RAISE EXCEPTION 'a guardian leaves by themselves; one guardian does not remove another'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    DELETE FROM public.family_guardians g WHERE g.family_member_id = child AND g.user_id = guardian;
    -- A guardian who leaves takes back the invitations they sent that nobody accepted yet.
    IF invitation.accepted_at IS NOT NULL THEN
        DELETE FROM public.family_guardians g WHERE g.family_member_id = child AND g.invited_by = guardian AND g.accepted_at IS NULL;
    END IF;
    RETURN true;
END
$$;
ALTER FUNCTION orbit.remove_guardian(uuid, uuid) OWNER TO orbit_admin;

-- Notifies the people behind a holder — the user, or a family member's guardians — and, with
-- `admins`, the community's admins (once each); every one an active member, unless they switched
-- that kind off for the community (members.notification_prefs). Chores call it for their holders,
-- and the child sign-in for a locked-out child's parent; it keeps the name chores gave it.
CREATE OR REPLACE FUNCTION orbit.chore_notify(
    community uuid, holder_user uuid, holder_child uuid, admins boolean, kind text, title text, body text, data jsonb
) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.notifications (user_id, community_id, type, title, body, data)
    SELECT m.user_id, community, kind::public.notification_type, left(title, 200), body, data
    FROM public.members m
    WHERE m.community_id = community AND m.left_at IS NULL
      AND (m.notification_prefs -> kind) IS DISTINCT FROM 'false'::jsonb
      AND ((admins AND m.role = 'admin')
           OR m.user_id = holder_user
           OR m.user_id IN (SELECT g.user_id FROM public.family_guardians g WHERE g.family_member_id = holder_child AND g.accepted_at IS NOT NULL));
END
$$;
ALTER FUNCTION orbit.chore_notify(uuid, uuid, uuid, boolean, text, text, text, jsonb) OWNER TO orbit_admin;

-- The name of a holder, for notifications.
CREATE OR REPLACE FUNCTION orbit.holder_name(holder_user uuid, holder_child uuid) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((SELECT u.display_name FROM public.users u WHERE u.id = holder_user),
                    (SELECT f.name FROM public.family_members f WHERE f.id = holder_child), 'Someone')
$$;
ALTER FUNCTION orbit.holder_name(uuid, uuid) OWNER TO orbit_admin;

-- Children's sign-in. Only these functions touch
-- child_credentials and child_devices. A child belongs to their guardian, the user whose family
-- member they are: no community role reaches another family's child.

-- How long a paired device may go without signing its child in before it must be paired again.
CREATE OR REPLACE FUNCTION orbit.child_device_idle_limit() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT interval '30 days' $$;

-- How long the n-th lockout in a row lasts (n ≥ 1): 15 minutes, 1 hour, then 24 hours.
CREATE OR REPLACE FUNCTION orbit.child_lockout_duration(n integer) RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN n <= 1 THEN interval '15 minutes' WHEN n = 2 THEN interval '1 hour' ELSE interval '24 hours' END $$;

-- True when the current user may manage `child`'s sign-in from `community`: they are one of the
-- child's guardians (an invitation accepted; family_guardians) and an active member of the
-- community, which is not deleted. An admin of the community is not enough: the child is not
-- theirs; nor is an invitation not accepted yet.
CREATE OR REPLACE FUNCTION orbit.can_manage_child(child uuid, community uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (
        SELECT FROM public.family_guardians g
        JOIN public.members parent ON parent.user_id = g.user_id AND parent.community_id = community AND parent.left_at IS NULL
        JOIN public.communities c ON c.id = community AND c.deleted_at IS NULL
        WHERE g.family_member_id = child AND g.user_id = orbit.app_user_id() AND g.accepted_at IS NOT NULL
    )
$$;
ALTER FUNCTION orbit.can_manage_child(uuid, uuid) OWNER TO orbit_admin;

-- Sets (or replaces) a child's PIN: 4–6 digits, kept as a bcrypt hash; clears a lockout and
-- the count of lockouts in a row. The child's guardians only.
CREATE OR REPLACE FUNCTION orbit.set_child_pin(child uuid, community uuid, pin text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only a guardian of the child sets a PIN' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF pin IS NULL OR pin !~ '^[0-9]{4,6}$' THEN
        RAISE EXCEPTION 'a PIN is 4 to 6 digits' USING ERRCODE = 'check_violation', CONSTRAINT = 'child_credentials_pin';
    END IF;
    INSERT INTO public.child_credentials AS c (family_member_id, pin_hash)
    VALUES (child, orbit_private.crypt(pin, orbit_private.gen_salt('bf', 10)))
    ON CONFLICT (family_member_id) DO UPDATE
        SET pin_hash = EXCLUDED.pin_hash, failed_attempts = 0, lockouts_in_row = 0, locked_until = NULL, updated_at = now();
END
$$;
ALTER FUNCTION orbit.set_child_pin(uuid, uuid, text) OWNER TO orbit_admin;

-- Starts pairing a device for a child in `community` (the one community its token will reach):
-- stores the pairing code's hash, valid until `expires`. The child's guardians only.
CREATE OR REPLACE FUNCTION orbit.start_child_pairing(child uuid, community uuid, code_hash bytea, expires timestamptz) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    device uuid;
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only a guardian of the child pairs a device' USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO public.child_devices (family_member_id, community_id, pairing_code_hash, pairing_expires_at, created_by)
    VALUES (child, community, code_hash, expires, orbit.app_user_id())
    RETURNING id INTO device;
    RETURN device;
END
$$;
ALTER FUNCTION orbit.start_child_pairing(uuid, uuid, bytea, timestamptz) OWNER TO orbit_admin;

-- Uses a pairing code, once: the device gets its token (its hash is stored). The child, or
-- NULL for an unknown, used, expired or revoked code.
CREATE OR REPLACE FUNCTION orbit.finish_child_pairing(code_hash bytea, device_token_hash bytea) RETURNS uuid
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE public.child_devices SET pairing_code_hash = NULL, token_hash = device_token_hash, paired_at = now()
    WHERE pairing_code_hash = code_hash AND pairing_expires_at > now() AND revoked_at IS NULL
    RETURNING family_member_id
$$;
ALTER FUNCTION orbit.finish_child_pairing(bytea, bytea) OWNER TO orbit_admin;

-- The devices paired (or being paired) for `child` in `community`, newest first, with their
-- state: 'pending' (a pairing code not used yet), 'paired', 'expired' (a code not used in time,
-- or a device unused for orbit.child_device_idle_limit()) or 'revoked'. The guardians only.
CREATE OR REPLACE FUNCTION orbit.child_devices_of(child uuid, community uuid)
RETURNS TABLE (
    id uuid, family_member_id uuid, community_id uuid, status text, created_by uuid, created_at timestamptz,
    paired_at timestamptz, last_used_at timestamptz, expires_at timestamptz, revoked_at timestamptz, revoked_by uuid
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only a guardian of the child sees the child''s devices' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
    SELECT d.id, d.family_member_id, d.community_id,
           CASE WHEN d.revoked_at IS NOT NULL THEN 'revoked'
                WHEN d.token_hash IS NULL AND d.pairing_expires_at > now() THEN 'pending'
                WHEN d.token_hash IS NULL THEN 'expired'
                WHEN coalesce(d.last_used_at, d.paired_at) + orbit.child_device_idle_limit() <= now() THEN 'expired'
                ELSE 'paired' END,
           d.created_by, d.created_at, d.paired_at, d.last_used_at,
           CASE WHEN d.token_hash IS NULL THEN d.pairing_expires_at
                ELSE coalesce(d.last_used_at, d.paired_at) + orbit.child_device_idle_limit() END,
           d.revoked_at, d.revoked_by
    FROM public.child_devices d
    WHERE d.family_member_id = child AND d.community_id = community
    ORDER BY d.created_at DESC, d.id;
END
$$;
ALTER FUNCTION orbit.child_devices_of(uuid, uuid) OWNER TO orbit_admin;

-- Revokes one of `child`'s devices in `community` (`device`), or all of them (NULL), with any
-- pairing code not used yet: the device's token signs in no more, and the child's access tokens
-- issued on it reach nothing from now on (orbit.child_community_ids). Returns how many of the
-- named devices exist (revoked now or before), so that 0 means "no such device". A guardian
-- only.
CREATE OR REPLACE FUNCTION orbit.revoke_child_devices(child uuid, community uuid, device uuid) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    named integer;
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only a guardian of the child revokes the child''s devices' USING ERRCODE = 'insufficient_privilege';
    END IF;
    UPDATE public.child_devices d SET revoked_at = now(), revoked_by = orbit.app_user_id(), pairing_code_hash = NULL
    WHERE d.family_member_id = child AND d.community_id = community AND (device IS NULL OR d.id = device) AND d.revoked_at IS NULL;
    SELECT count(*) INTO named FROM public.child_devices d
    WHERE d.family_member_id = child AND d.community_id = community AND (device IS NULL OR d.id = device);
    RETURN named;
END
$$;
ALTER FUNCTION orbit.revoke_child_devices(uuid, uuid, uuid) OWNER TO orbit_admin;

-- A sign-in attempt on a paired device: checks the PIN of that device's child, and no other.
-- Outcomes: 'signed_in' (with the device and its community, for the child's token);
-- 'wrong_pin'; 'locked' (now, or by this fifth wrong PIN in a row: for
-- orbit.child_lockout_duration of the lockouts in a row, and the child's guardian hears);
-- 'unknown_device' (unknown or revoked); 'device_expired' (unused for
-- orbit.child_device_idle_limit()); 'no_pin'. Never raises on a wrong PIN, so the failure count
-- is committed with the answer. The credential's row lock makes concurrent attempts count one
-- after the other.
CREATE OR REPLACE FUNCTION orbit.child_sign_in(device_token_hash bytea, pin text)
RETURNS TABLE (outcome text, family_member_id uuid, device_id uuid, community_id uuid, locked_until timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    device record;
    credential record;
    lockout interval;
BEGIN
    SELECT d.id, d.family_member_id AS child, d.community_id, coalesce(d.last_used_at, d.paired_at) AS used INTO device
    FROM public.child_devices d
    WHERE d.token_hash = device_token_hash AND d.revoked_at IS NULL;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'unknown_device', NULL::uuid, NULL::uuid, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    IF device.used + orbit.child_device_idle_limit() <= now() THEN
        RETURN QUERY SELECT 'device_expired', device.child, device.id, device.community_id, NULL::timestamptz;
        RETURN;
    END IF;
    SELECT c.pin_hash, c.failed_attempts, c.lockouts_in_row, c.locked_until AS until INTO credential
    FROM public.child_credentials c WHERE c.family_member_id = device.child FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'no_pin', device.child, device.id, device.community_id, NULL::timestamptz;
        RETURN;
    END IF;
    IF credential.until > now() THEN
        RETURN QUERY SELECT 'locked', device.child, device.id, device.community_id, credential.until;
        RETURN;
    END IF;
    IF pin IS NOT NULL AND orbit_private.crypt(pin, credential.pin_hash) = credential.pin_hash THEN
        UPDATE public.child_credentials c SET failed_attempts = 0, lockouts_in_row = 0, locked_until = NULL, updated_at = now()
        WHERE c.family_member_id = device.child;
        UPDATE public.child_devices d SET last_used_at = now() WHERE d.id = device.id;
        RETURN QUERY SELECT 'signed_in', device.child, device.id, device.community_id, NULL::timestamptz;
        RETURN;
    END IF;
    IF credential.failed_attempts + 1 >= 5 THEN
        lockout := orbit.child_lockout_duration(credential.lockouts_in_row + 1);
        UPDATE public.child_credentials c
        SET failed_attempts = 0, lockouts_in_row = c.lockouts_in_row + 1, locked_until = now() + lockout, updated_at = now()
        WHERE c.family_member_id = device.child;
        PERFORM orbit.chore_notify(
            device.community_id, NULL, device.child, false, 'child_locked_out',
            orbit.holder_name(NULL, device.child) || '''s sign-in is locked',
            'Five wrong PINs: sign-in is locked for '
                || CASE credential.lockouts_in_row WHEN 0 THEN '15 minutes.' WHEN 1 THEN '1 hour (the second lockout in a row).'
                   ELSE '24 hours (lockout ' || credential.lockouts_in_row + 1 || ' in a row).' END,
            jsonb_build_object('family_member_id', device.child, 'locked_until', now() + lockout, 'lockouts_in_row', credential.lockouts_in_row + 1)
        );
        RETURN QUERY SELECT 'locked', device.child, device.id, device.community_id, now() + lockout;
        RETURN;
    END IF;
    UPDATE public.child_credentials c SET failed_attempts = c.failed_attempts + 1, updated_at = now()
    WHERE c.family_member_id = device.child;
    RETURN QUERY SELECT 'wrong_pin', device.child, device.id, device.community_id, NULL::timestamptz;
END
$$;
ALTER FUNCTION orbit.child_sign_in(bytea, text) OWNER TO orbit_admin;

-- Policies. This file owns every policy on family_members, family_guardians, child_credentials and
-- child_devices:
-- it drops them all and recreates the ones below, so a policy removed here is removed from the
-- database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('family_members', 'family_guardians', 'child_credentials', 'child_devices')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- family_members: the user's own and their contacts' (listed under the guardian of record), the
-- ones they are a guardian of or invited to be. A user adds their own; every guardian renames,
-- sets the avatar and changes the guardian of record (to another guardian:
-- trigger_family_guardian_of_record); the guardian of record removes.
CREATE POLICY family_members_select ON family_members FOR SELECT TO orbit_app
    USING (
        user_id = ANY ((SELECT orbit.contact_user_ids())::uuid[])
        OR id = ANY ((SELECT orbit.contact_family_member_ids())::uuid[])
        OR EXISTS (SELECT FROM family_guardians g WHERE g.family_member_id = family_members.id AND g.user_id = (SELECT orbit.app_user_id()))
    );
CREATE POLICY family_members_insert ON family_members FOR INSERT TO orbit_app
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY family_members_update ON family_members FOR UPDATE TO orbit_app
    USING (id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[]))
    WITH CHECK (id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[]));
CREATE POLICY family_members_delete ON family_members FOR DELETE TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()));

-- family_guardians: a user sees their own guardianships and invitations, and every guardian (and
-- invitation) of the family members they are a guardian of. Written only by the functions above
-- (and the triggers): invite, accept, leave or withdraw.
CREATE POLICY family_guardians_select ON family_guardians FOR SELECT TO orbit_app
    USING (
        user_id = (SELECT orbit.app_user_id())
        OR family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[])
    );

-- child_credentials and child_devices: no policy for orbit_app, and no rights; only the
-- SECURITY DEFINER functions above touch them (migrations/0022).

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON family_members, family_guardians, child_credentials, child_devices FROM orbit_app, orbit_admin;
-- Remove a family member: a hard delete.
GRANT SELECT, INSERT, DELETE ON family_members TO orbit_app;
-- What a guardian changes: the name, the avatar, the guardian of record.
GRANT UPDATE (name, avatar_url, avatar_media_id, user_id) ON family_members TO orbit_app;
GRANT SELECT ON family_guardians TO orbit_app;
GRANT ALL ON family_members, family_guardians, child_credentials, child_devices TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.child_device_idle_limit(), orbit.child_lockout_duration(integer) FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.check_family_avatar(), orbit.family_first_guardian(), orbit.family_guardian_of_record(), orbit.family_guardian_stays(),
    orbit.family_record_moves_answers(), orbit.family_member_removable()
FROM PUBLIC, orbit_app;
REVOKE ALL ON FUNCTION
    orbit.parent_family_member_ids(), orbit.contact_family_member_ids(),
    orbit.chore_notify(uuid, uuid, uuid, boolean, text, text, text, jsonb), orbit.holder_name(uuid, uuid),
    orbit.can_manage_child(uuid, uuid), orbit.set_child_pin(uuid, uuid, text), orbit.start_child_pairing(uuid, uuid, bytea, timestamptz),
    orbit.finish_child_pairing(bytea, bytea), orbit.child_devices_of(uuid, uuid), orbit.revoke_child_devices(uuid, uuid, uuid),
    orbit.child_sign_in(bytea, text), orbit.invite_guardian(uuid, uuid), orbit.accept_guardianship(uuid),
    orbit.remove_guardian(uuid, uuid)
FROM PUBLIC, orbit_app;
-- Who is asking, read by the policies as the querying role.
GRANT EXECUTE ON FUNCTION orbit.parent_family_member_ids(), orbit.contact_family_member_ids() TO orbit_app, orbit_admin;
-- Operations a guardian or a child's device performs, each checked inside the function.
GRANT EXECUTE ON FUNCTION
    orbit.set_child_pin(uuid, uuid, text), orbit.start_child_pairing(uuid, uuid, bytea, timestamptz),
    orbit.finish_child_pairing(bytea, bytea), orbit.child_sign_in(bytea, text), orbit.can_manage_child(uuid, uuid),
    orbit.child_devices_of(uuid, uuid), orbit.revoke_child_devices(uuid, uuid, uuid),
    orbit.invite_guardian(uuid, uuid), orbit.accept_guardianship(uuid), orbit.remove_guardian(uuid, uuid)
TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.child_device_idle_limit(), orbit.child_lockout_duration(integer), orbit.parent_family_member_ids(),
    orbit.chore_notify(uuid, uuid, uuid, boolean, text, text, text, jsonb), orbit.holder_name(uuid, uuid),
    orbit.can_manage_child(uuid, uuid), orbit.set_child_pin(uuid, uuid, text), orbit.start_child_pairing(uuid, uuid, bytea, timestamptz),
    orbit.finish_child_pairing(bytea, bytea), orbit.child_devices_of(uuid, uuid), orbit.revoke_child_devices(uuid, uuid, uuid),
    orbit.child_sign_in(bytea, text)
TO orbit_admin;
