-- Shared: the session and tenancy core (sql/README.md). It runs first. This file owns the
-- schemas' USAGE rights and the helpers that say who is asking and what they belong to, which
-- every domain's policies call, with their rights.
--
-- Row-level security policies (docs/architecture.md, "Tenancy and security"). They apply to orbit_app;
-- orbit_admin bypasses them, and any other role has no table rights at all. Each domain's file
-- holds the policies of its tables and the rights on them.
--
-- For user U (orbit.app_user_id()):
-- * community data (communities, members, events, posts, transactions, dues, media and the
--   rows hanging off them) is visible in communities where U is an active member and that
--   are not deleted;
-- * invites and audit_log: admins of the community; users: U and people U shares a community
--   with; family_members: U's own and those of people U shares a community with;
--   notifications and refresh_tokens: U's own.
-- Writes (WITH CHECK): nothing is written into, or moved into, a community U is not an active
-- member of; admin-only tables (invites, dues, dues_payments) take admins' writes only;
-- authored rows (author_id, created_by, user_id of an RSVP, vote or reaction) must be U.
-- A missing or empty app.current_user_id makes every helper return nothing: no rows, no error.
--
-- What each role may touch (docs/architecture.md, "Tenancy and security"). Each domain's file owns
-- orbit_app's and orbit_admin's rights on its tables and functions: it revokes them all and grants
-- exactly its list.
--
-- orbit_app gets what the service layer needs and nothing more: no DELETE where the spec soft
-- deletes (hard deletes are retention jobs, run as orbit_admin), no UPDATE of denormalized
-- counters or of who created what, nothing on schema_migrations or orbit_private.
--
-- Hard deletes the product has: un-RSVP, un-react, withdraw a vote, replace an expense's
-- splits, revoke an invite, remove a family member, media or a payment record, clear
-- notifications, sign out, unassign a chore.

-- Who is asking, and which communities they belong to (docs/architecture.md, "Tenancy and security").
--
-- A request runs as orbit_app with `set_config('app.current_user_id', <uuid>, true)`.
-- current_setting(..., true) returns NULL when the setting was never made and '' after a
-- transaction that made it has ended; both mean "nobody", who sees nothing.

CREATE OR REPLACE FUNCTION orbit.app_user_id() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('app.current_user_id', true), '')::uuid $$;

-- The membership helpers below are SECURITY DEFINER (owned by orbit_admin, which bypasses
-- row-level security) so that policies never query members through members' own policy, and
-- have a fixed search_path. They are PL/pgSQL, not SQL, because PL/pgSQL keeps its query plans
-- for the session while a non-inlined SQL function is planned again at every call (measured
-- with `orbit-bench schema`: the feed query as orbit_app went from 0.34x to 0.81x of the
-- owner's rate). Policies call them as `(SELECT orbit.f())`: an uncorrelated sub-select is an
-- InitPlan, evaluated once per statement, and the array it yields is compared with `= ANY`,
-- which an index on the filtered column can serve.

-- Communities the current user is an active member of (left_at IS NULL) and that are not
-- deleted: a soft-deleted community disappears for its members.
CREATE OR REPLACE FUNCTION orbit.member_community_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(m.community_id), '{}')
        FROM public.members m
        JOIN public.communities c ON c.id = m.community_id
        WHERE m.user_id = orbit.app_user_id() AND m.left_at IS NULL AND c.deleted_at IS NULL
    );
END
$$;

-- The subset of those where the current user is an admin.
CREATE OR REPLACE FUNCTION orbit.admin_community_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(m.community_id), '{}')
        FROM public.members m
        JOIN public.communities c ON c.id = m.community_id
        WHERE m.user_id = orbit.app_user_id() AND m.left_at IS NULL AND m.role = 'admin'
          AND c.deleted_at IS NULL
    );
END
$$;

-- Every community the current user has ever joined, including ones left since (an audit
-- entry about leaving is written after the leave).
CREATE OR REPLACE FUNCTION orbit.joined_community_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(m.community_id), '{}')
        FROM public.members m
        WHERE m.user_id = orbit.app_user_id()
    );
END
$$;

-- The current user and everyone who shares an active, non-deleted community with them.
CREATE OR REPLACE FUNCTION orbit.contact_user_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(DISTINCT u.user_id), '{}')
        FROM (
            SELECT orbit.app_user_id() AS user_id
            UNION ALL
            SELECT other.user_id
            FROM public.members me
            JOIN public.communities c ON c.id = me.community_id AND c.deleted_at IS NULL
            JOIN public.members other ON other.community_id = me.community_id AND other.left_at IS NULL
            WHERE me.user_id = orbit.app_user_id() AND me.left_at IS NULL
        ) u
        WHERE u.user_id IS NOT NULL
    );
END
$$;

-- True while the current user may make themselves the first member (and admin) of a
-- community they have just created: they created it and it has no members yet.
CREATE OR REPLACE FUNCTION orbit.can_found(community uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (
        SELECT FROM public.communities c
        WHERE c.id = community AND c.created_by = orbit.app_user_id() AND c.deleted_at IS NULL
          AND NOT EXISTS (SELECT FROM public.members m WHERE m.community_id = community)
    )
$$;

-- A community setting that members' permissions depend on (spec, "Permission Matrix":
-- allowMemberEvents, allowMemberPosts). A missing key means allowed, as in the spec's example.
CREATE OR REPLACE FUNCTION orbit.community_allows(community uuid, setting text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(
        (SELECT (c.settings -> setting) IS DISTINCT FROM 'false'::jsonb FROM public.communities c WHERE c.id = community),
        FALSE
    )
$$;

-- Who is asking when it is a child: a family member signed in on a paired device
-- (`app.current_family_member_id`, set instead of the user; docs/chores.md), the device their
-- token was issued on, the one community it reaches, and the parent who answers for them.

CREATE OR REPLACE FUNCTION orbit.app_child_id() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('app.current_family_member_id', true), '')::uuid $$;

-- The paired device the signed-in child's token was issued on (`app.current_child_device_id`).
CREATE OR REPLACE FUNCTION orbit.app_child_device_id() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('app.current_child_device_id', true), '')::uuid $$;

-- The community the signed-in child reaches: the one their device was paired for, while the
-- device is the child's and not revoked, one of the child's guardians is an active member of it
-- and it is not deleted. One community or none: a child paired in the household never reaches the club.
CREATE OR REPLACE FUNCTION orbit.child_community_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(d.community_id), '{}')
        FROM public.child_devices d
        JOIN public.communities c ON c.id = d.community_id AND c.deleted_at IS NULL
        WHERE d.id = orbit.app_child_device_id() AND d.family_member_id = orbit.app_child_id()
          AND d.revoked_at IS NULL AND d.token_hash IS NOT NULL
          AND EXISTS (
              SELECT FROM public.family_guardians g
              JOIN public.members m ON m.user_id = g.user_id AND m.community_id = d.community_id AND m.left_at IS NULL
              WHERE g.family_member_id = d.family_member_id AND g.accepted_at IS NOT NULL
          )
    );
END
$$;

-- The signed-in child's parent, who answers for what the child uploads (media.uploaded_by).
CREATE OR REPLACE FUNCTION orbit.app_child_parent_id() RETURNS uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT f.user_id FROM public.family_members f WHERE f.id = orbit.app_child_id());
END
$$;

-- The signed-in child's guardians (family_guardians, an invitation accepted): a parent's reward
-- for their own children (rewards.family_of) is on offer to the children of any of them.
CREATE OR REPLACE FUNCTION orbit.app_child_guardian_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(g.user_id), '{}') FROM public.family_guardians g
        WHERE g.family_member_id = orbit.app_child_id() AND g.accepted_at IS NOT NULL
    );
END
$$;
ALTER FUNCTION orbit.member_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.app_child_guardian_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.child_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.app_child_parent_id() OWNER TO orbit_admin;
ALTER FUNCTION orbit.admin_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.joined_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.contact_user_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.can_found(uuid) OWNER TO orbit_admin;
ALTER FUNCTION orbit.community_allows(uuid, text) OWNER TO orbit_admin;

-- The schemas: orbit_app and orbit_admin use public and orbit (policies run as the querying
-- role); orbit_private is orbit_admin's alone (migrations/0001).
REVOKE ALL ON SCHEMA orbit_private FROM orbit_app;

GRANT USAGE ON SCHEMA public, orbit TO orbit_app, orbit_admin;
GRANT USAGE ON SCHEMA orbit_private TO orbit_admin;

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON FUNCTION orbit.app_user_id(), orbit.app_child_id(), orbit.app_child_device_id() FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.member_community_ids(), orbit.admin_community_ids(), orbit.joined_community_ids(), orbit.contact_user_ids(),
    orbit.can_found(uuid), orbit.community_allows(uuid, text), orbit.child_community_ids(), orbit.app_child_parent_id(),
    orbit.app_child_guardian_ids()
FROM PUBLIC, orbit_app;
-- Functions policies and views call as the querying role.
GRANT EXECUTE ON FUNCTION
    orbit.app_user_id(), orbit.member_community_ids(), orbit.admin_community_ids(),
    orbit.joined_community_ids(), orbit.contact_user_ids(), orbit.can_found(uuid),
    orbit.community_allows(uuid, text), orbit.app_child_id(), orbit.app_child_device_id(), orbit.child_community_ids(),
    orbit.app_child_parent_id(), orbit.app_child_guardian_ids()
TO orbit_app, orbit_admin;
