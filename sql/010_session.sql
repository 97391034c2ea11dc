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

ALTER FUNCTION orbit.member_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.admin_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.joined_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.contact_user_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.can_found(uuid) OWNER TO orbit_admin;
ALTER FUNCTION orbit.community_allows(uuid, text) OWNER TO orbit_admin;
