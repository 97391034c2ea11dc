-- Guests (sql/README.md; migrations/0055, docs/money.md "Guests"): people without an account in a
-- community's money. This file owns the functions that add, rename, remove and invite a guest
-- and set their part in new splits, the rule that a guest is a member of one community (a
-- trigger on members), and the rights on them. (Claiming a guest is redeeming their invite: sql/120_invites.sql.)
--
-- A guest is a user row nobody signs in as (users.is_guest, Apple id 'guest.' and its own id)
-- with a member row in one community. Any member may add, rename, remove and invite a guest,
-- though only admins write members and nobody writes another user's row: so each operation is a
-- SECURITY DEFINER function that checks, inside, that its caller is an active member of the
-- guest's community, as orbit.redeem_invite checks its caller.

-- Adds a guest named `guest_name` to `community`: their user row and member row. Returns the
-- member id; NULL when the caller is not an active member of a community that is not deleted.
CREATE OR REPLACE FUNCTION orbit.add_guest(community uuid, guest_name text) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me uuid := orbit.app_user_id();
    guest uuid := gen_random_uuid();
    member uuid;
BEGIN
    IF me IS NULL OR NOT EXISTS (
        SELECT FROM public.members m JOIN public.communities c ON c.id = m.community_id AND c.deleted_at IS NULL
        WHERE m.community_id = add_guest.community AND m.user_id = me AND m.left_at IS NULL
    ) THEN
        RETURN NULL;
    END IF;
    INSERT INTO public.users (id, apple_id, email, display_name, is_guest)
    VALUES (guest, 'guest.' || guest::text, '', guest_name, true);
    INSERT INTO public.members (community_id, user_id, role, invited_by)
    VALUES (add_guest.community, guest, 'member', me)
    RETURNING id INTO member;
    RETURN member;
END
$$;

-- A guest is a member of the one community that added them, whoever inserts the row (an admin
-- of another community may insert members, and could name a guest they saw elsewhere): a claim
-- closes the guest's user row, which must then be nobody's member anywhere else. Read as
-- orbit_admin: the inserting user may not see the guest's other membership.
CREATE OR REPLACE FUNCTION orbit.keep_guest_in_one_community() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM public.users u WHERE u.id = NEW.user_id AND u.is_guest)
       AND EXISTS (SELECT FROM public.members m WHERE m.user_id = NEW.user_id AND m.id <> NEW.id) THEN
        RAISE EXCEPTION 'a guest is a member of the one community that added them'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'members_guest_one_community', TABLE = 'members';
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS trigger_members_guest_one_community ON members;
CREATE TRIGGER trigger_members_guest_one_community BEFORE INSERT ON members
    FOR EACH ROW EXECUTE FUNCTION orbit.keep_guest_in_one_community();

-- The active guest of member row `guest_member` (locked), if the caller is an active member of
-- its community: the one check every operation below makes.
CREATE OR REPLACE FUNCTION orbit.guest_for_member(guest_member uuid) RETURNS public.members
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me uuid := orbit.app_user_id();
    guest public.members%ROWTYPE;
BEGIN
    SELECT g.* INTO guest FROM public.members g JOIN public.users u ON u.id = g.user_id AND u.is_guest
    WHERE g.id = guest_member AND g.left_at IS NULL
    FOR UPDATE OF g;
    IF NOT FOUND OR me IS NULL OR NOT EXISTS (
        SELECT FROM public.members m JOIN public.communities c ON c.id = m.community_id AND c.deleted_at IS NULL
        WHERE m.community_id = guest.community_id AND m.user_id = me AND m.left_at IS NULL
    ) THEN
        RETURN NULL;
    END IF;
    RETURN guest;
END
$$;

-- Renames a guest. False when there is no such guest for the caller.
CREATE OR REPLACE FUNCTION orbit.rename_guest(guest_member uuid, guest_name text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    guest public.members%ROWTYPE := orbit.guest_for_member(guest_member);
BEGIN
    IF guest.id IS NULL THEN
        RETURN false;
    END IF;
    UPDATE public.users SET display_name = guest_name WHERE id = guest.user_id;
    RETURN true;
END
$$;

-- Whether a guest is in new splits among everyone, and their default weight (migrations/0057):
-- a NULL leaves it as it is. False when there is no such guest for the caller.
CREATE OR REPLACE FUNCTION orbit.set_guest_split_defaults(guest_member uuid, in_new_splits boolean, weight integer) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    guest public.members%ROWTYPE := orbit.guest_for_member(guest_member);
BEGIN
    IF guest.id IS NULL THEN
        RETURN false;
    END IF;
    UPDATE public.members SET active = coalesce(in_new_splits, active), default_weight = coalesce(weight, default_weight)
    WHERE id = guest.id;
    RETURN true;
END
$$;

-- Removes a guest who is settled: no pair of theirs owes anything in any currency (so neither
-- does their balance). Outcomes: not_found, unsettled (nothing is written), removed. Their
-- invites go; their past expenses keep them, as they keep a member who left. The guest's member
-- row is locked first, so an expense that names them and commits meanwhile is seen.
CREATE OR REPLACE FUNCTION orbit.remove_guest(guest_member uuid) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    guest public.members%ROWTYPE := orbit.guest_for_member(guest_member);
BEGIN
    IF guest.id IS NULL THEN
        RETURN 'not_found';
    END IF;
    IF EXISTS (
        SELECT FROM public.pair_balances p
        WHERE p.community_id = guest.community_id AND p.user_id = guest.user_id AND p.balance <> 0
    ) THEN
        RETURN 'unsettled';
    END IF;
    UPDATE public.members SET left_at = now() WHERE id = guest.id;
    DELETE FROM public.invites WHERE guest_member_id = guest.id;
    RETURN 'removed';
END
$$;

-- A link for a guest: an invite of one use for `guest_member`, which the user who redeems it
-- claims (sql/120_invites.sql). Returns the invite; no row when there is no such guest for the
-- caller, or the code is taken (the caller tries another).
CREATE OR REPLACE FUNCTION orbit.invite_guest(guest_member uuid, invite_code text, expires timestamptz)
RETURNS SETOF public.invites
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    guest public.members%ROWTYPE := orbit.guest_for_member(guest_member);
BEGIN
    IF guest.id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    INSERT INTO public.invites (community_id, code, created_by, uses_remaining, expires_at, guest_member_id)
    VALUES (guest.community_id, upper(invite_code), orbit.app_user_id(), 1, expires, guest.id)
    ON CONFLICT DO NOTHING
    RETURNING *;
END
$$;

ALTER FUNCTION orbit.keep_guest_in_one_community() OWNER TO orbit_admin;
ALTER FUNCTION orbit.add_guest(uuid, text) OWNER TO orbit_admin;
ALTER FUNCTION orbit.guest_for_member(uuid) OWNER TO orbit_admin;
ALTER FUNCTION orbit.rename_guest(uuid, text) OWNER TO orbit_admin;
ALTER FUNCTION orbit.remove_guest(uuid) OWNER TO orbit_admin;
ALTER FUNCTION orbit.set_guest_split_defaults(uuid, boolean, integer) OWNER TO orbit_admin;
ALTER FUNCTION orbit.invite_guest(uuid, text, timestamptz) OWNER TO orbit_admin;

-- Rights (sql/README.md, "Rights"): this file owns no table; it revokes every right on its
-- functions and grants exactly these. (orbit_admin owns them, so its EXECUTE stays where
-- sql/README.md says it does.)
REVOKE ALL ON FUNCTION orbit.add_guest(uuid, text), orbit.guest_for_member(uuid), orbit.rename_guest(uuid, text),
    orbit.set_guest_split_defaults(uuid, boolean, integer), orbit.remove_guest(uuid), orbit.invite_guest(uuid, text, timestamptz)
FROM PUBLIC, orbit_app;
-- Operations any member performs, each checked inside; guest_for_member is theirs alone.
GRANT EXECUTE ON FUNCTION orbit.add_guest(uuid, text), orbit.rename_guest(uuid, text),
    orbit.set_guest_split_defaults(uuid, boolean, integer), orbit.remove_guest(uuid), orbit.invite_guest(uuid, text, timestamptz)
TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.guest_for_member(uuid) TO orbit_admin;
-- The trigger's function: nobody calls it.
REVOKE ALL ON FUNCTION orbit.keep_guest_in_one_community() FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.keep_guest_in_one_community() TO orbit_admin;
