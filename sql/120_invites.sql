-- Invites (sql/README.md). This file owns the redemption of a code, an invite's preview, the
-- policy of invites and the rights on them and on its functions.

-- Redeeming an invite. The person redeeming is not a member yet, so row-level
-- security hides the invite and forbids the membership insert; this SECURITY DEFINER function
-- does the whole redemption for the current user, in the caller's transaction:
--
-- * the invite row is locked (FOR UPDATE), so concurrent redemptions of one code run one
--   after the other and uses_remaining is decremented exactly once per admitted user: 20
--   concurrent redemptions of a 5-use code admit exactly 5;
-- * outcomes, checked in this order: not_found, community_deleted, expired, already_member,
--   was_member (a guest's invite, to someone who left the community), used_up (nothing is
--   written for these), joined (a new membership), rejoined (the membership row of someone who
--   left is reactivated, as a plain member) or claimed (a guest's invite: below);
-- * a join is audit-logged (member.joined, or member.guest_claimed) in the same transaction.
--
-- A guest's invite (invites.guest_member_id, migrations/0055) is claimed: the user joins, and
-- everything of the guest's money becomes theirs in this transaction. Each row is re-keyed where
-- it is, so the journal's triggers (sql/155_balances.sql) move every ledger line from the guest
-- to the user: balances and pairs are unchanged except that they carry the user. The guest's
-- member row is closed (left_at) and their user row records who claimed it (claimed_by,
-- deleted_at). A removed or claimed guest's invite is not found. Someone who left the community
-- cannot claim a guest (was_member): their old rows and the guest's would be two people's.
-- Codes are stored upper-case and matched case-insensitively.
-- (Dropped first: its result gained guest_member_id, and a function's result type is not replaced.)
DROP FUNCTION IF EXISTS orbit.redeem_invite(text);
CREATE FUNCTION orbit.redeem_invite(invite_code text)
RETURNS TABLE (outcome text, community_id uuid, member_id uuid, guest_member_id uuid)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me uuid := orbit.app_user_id();
    invite public.invites%ROWTYPE;
    community_deleted_at timestamptz;
    membership public.members%ROWTYPE;
    guest public.members%ROWTYPE;
    joined_id uuid;
    result text;
BEGIN
    IF me IS NULL THEN
        RAISE EXCEPTION 'redeeming an invite needs an acting user' USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT * INTO invite FROM public.invites i WHERE i.code = upper(invite_code) FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::uuid, NULL::uuid;
        RETURN;
    END IF;
    SELECT c.deleted_at INTO community_deleted_at FROM public.communities c WHERE c.id = invite.community_id;
    IF community_deleted_at IS NOT NULL THEN
        RETURN QUERY SELECT 'community_deleted'::text, invite.community_id, NULL::uuid, NULL::uuid;
        RETURN;
    END IF;
    IF invite.expires_at IS NOT NULL AND invite.expires_at <= now() THEN
        RETURN QUERY SELECT 'expired'::text, invite.community_id, NULL::uuid, NULL::uuid;
        RETURN;
    END IF;
    IF invite.guest_member_id IS NOT NULL THEN
        SELECT * INTO guest FROM public.members g WHERE g.id = invite.guest_member_id FOR UPDATE;
        IF NOT FOUND OR guest.left_at IS NOT NULL THEN
            RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::uuid, NULL::uuid;
            RETURN;
        END IF;
    END IF;
    SELECT * INTO membership FROM public.members m
    WHERE m.community_id = invite.community_id AND m.user_id = me FOR UPDATE;
    IF FOUND AND membership.left_at IS NULL THEN
        RETURN QUERY SELECT 'already_member'::text, invite.community_id, membership.id, NULL::uuid;
        RETURN;
    END IF;
    IF FOUND AND guest.id IS NOT NULL THEN
        RETURN QUERY SELECT 'was_member'::text, invite.community_id, NULL::uuid, NULL::uuid;
        RETURN;
    END IF;
    IF invite.uses_remaining IS NOT NULL AND invite.uses_remaining <= 0 THEN
        RETURN QUERY SELECT 'used_up'::text, invite.community_id, NULL::uuid, NULL::uuid;
        RETURN;
    END IF;

    UPDATE public.invites SET uses_remaining = uses_remaining - 1
    WHERE id = invite.id AND uses_remaining IS NOT NULL;
    IF membership.id IS NOT NULL THEN
        UPDATE public.members
        SET left_at = NULL, role = 'member', joined_at = now(), invited_by = invite.created_by
        WHERE id = membership.id;
        joined_id := membership.id;
        result := 'rejoined';
    ELSE
        INSERT INTO public.members (community_id, user_id, role, invited_by)
        VALUES (invite.community_id, me, 'member', invite.created_by)
        RETURNING id INTO joined_id;
        result := 'joined';
    END IF;
    IF guest.id IS NOT NULL THEN
        -- The guest's money becomes the user's: payers, payer rows, shares, the splits as
        -- entered and the recurring charges' templates (user ids in JSON: a UUID's text is found
        -- nowhere else in them).
        UPDATE public.transactions t SET paid_by = me WHERE t.community_id = invite.community_id AND t.paid_by = guest.user_id;
        UPDATE public.transaction_payers p SET user_id = me WHERE p.community_id = invite.community_id AND p.user_id = guest.user_id;
        UPDATE public.splits s SET user_id = me WHERE s.community_id = invite.community_id AND s.user_id = guest.user_id;
        UPDATE public.transactions t SET split_input = replace(t.split_input::text, guest.user_id::text, me::text)::jsonb
        WHERE t.community_id = invite.community_id AND strpos(t.split_input::text, guest.user_id::text) > 0;
        UPDATE public.recurring_charges r SET paid_by = me WHERE r.community_id = invite.community_id AND r.paid_by = guest.user_id;
        UPDATE public.recurring_charges r SET split = replace(r.split::text, guest.user_id::text, me::text)::jsonb
        WHERE r.community_id = invite.community_id AND strpos(r.split::text, guest.user_id::text) > 0;
        UPDATE public.members m SET left_at = now() WHERE m.id = guest.id;
        UPDATE public.users u SET claimed_by = me, deleted_at = now() WHERE u.id = guest.user_id;
        result := 'claimed';
    END IF;
    -- app.client_address: set per transaction by the service layer for API requests.
    INSERT INTO public.audit_log (community_id, user_id, action, target_type, target_id, metadata, ip_address)
    VALUES (invite.community_id, me, CASE WHEN guest.id IS NULL THEN 'member.joined' ELSE 'member.guest_claimed' END, 'member', joined_id,
            jsonb_build_object('invite_id', invite.id, 'rejoined', result = 'rejoined')
                || CASE WHEN guest.id IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object('guest_member_id', guest.id, 'guest_user_id', guest.user_id) END,
            nullif(current_setting('app.client_address', true), '')::inet);
    RETURN QUERY SELECT result, invite.community_id, joined_id, guest.id;
END
$$;

ALTER FUNCTION orbit.redeem_invite(text) OWNER TO orbit_admin;

-- What an invite shows before anyone joins (GET /invites/{code}, issue 54, item 7): whether it
-- can be redeemed, and only then the community's name, its member count and the inviter's name;
-- nothing else of the community. No user is needed: the link is opened before signing in (the
-- API limits it per client address). Outcomes: valid; not_found (no such code, a revoked
-- invite, a deleted community, a guest's invite whose guest was removed or claimed: none of them
-- is told apart); expired; used_up. A guest's invite also names the guest whose money the one
-- who joins takes over.
-- (Dropped first: its result gained guest_name, and a function's result type is not replaced.)
DROP FUNCTION IF EXISTS orbit.invite_preview(text);
CREATE FUNCTION orbit.invite_preview(invite_code text)
RETURNS TABLE (outcome text, community_name text, member_count integer, inviter_name text, expires_at timestamptz, guest_name text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    invite public.invites%ROWTYPE;
BEGIN
    SELECT * INTO invite FROM public.invites i WHERE i.code = upper(invite_code);
    IF NOT FOUND OR EXISTS (SELECT FROM public.communities c WHERE c.id = invite.community_id AND c.deleted_at IS NOT NULL)
       OR EXISTS (SELECT FROM public.members g WHERE g.id = invite.guest_member_id AND g.left_at IS NOT NULL) THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::integer, NULL::text, NULL::timestamptz, NULL::text;
    ELSIF invite.expires_at IS NOT NULL AND invite.expires_at <= now() THEN
        RETURN QUERY SELECT 'expired'::text, NULL::text, NULL::integer, NULL::text, NULL::timestamptz, NULL::text;
    ELSIF invite.uses_remaining IS NOT NULL AND invite.uses_remaining <= 0 THEN
        RETURN QUERY SELECT 'used_up'::text, NULL::text, NULL::integer, NULL::text, NULL::timestamptz, NULL::text;
    ELSE
        RETURN QUERY
        SELECT 'valid'::text, c.name::text, c.member_count, u.display_name::text, invite.expires_at,
            (SELECT gu.display_name::text FROM public.members g JOIN public.users gu ON gu.id = g.user_id WHERE g.id = invite.guest_member_id)
        FROM public.communities c LEFT JOIN public.users u ON u.id = invite.created_by AND u.deleted_at IS NULL
        WHERE c.id = invite.community_id;
    END IF;
END
$$;
ALTER FUNCTION orbit.invite_preview(text) OWNER TO orbit_admin;

-- Policies. This file owns every policy on invites: it drops them all and recreates the ones below,
-- so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('invites')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- invites: admins only.
CREATE POLICY invites_admin ON invites FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON invites FROM orbit_app, orbit_admin;
-- Revoke an invite: a hard delete.
GRANT SELECT, INSERT, UPDATE, DELETE ON invites TO orbit_app;
GRANT ALL ON invites TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.redeem_invite(text), orbit.invite_preview(text) FROM PUBLIC, orbit_app;
-- Operations a non-member must be able to perform, each checked inside the function.
GRANT EXECUTE ON FUNCTION orbit.redeem_invite(text), orbit.invite_preview(text) TO orbit_app, orbit_admin;
