-- Events and their instances, and RSVPs (sql/README.md). This file owns the materialization
-- of an occurrence, the policies of events and rsvps and the rights on them and on its function.

-- Materializing one occurrence of a recurring event: the first time an occurrence is
-- modified, answered (RSVP) or cancelled, it becomes an events row of its own, with
-- recurrence_parent_id and original_starts_at, copied from its series.
--
-- Any active member may cause this (answering an RSVP is not creating an event), so the row is
-- written by this SECURITY DEFINER function rather than under the events INSERT policy, which
-- requires created_by = the caller. The caller must be an active member of the series'
-- community; the service checks that `occurrence` is an occurrence of the rule (RRULE expansion
-- lives in Swift). Returns the instance's id, creating it only if it does not exist yet.
CREATE OR REPLACE FUNCTION orbit.materialize_occurrence(series uuid, occurrence timestamptz)
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    parent public.events%ROWTYPE;
    instance uuid;
BEGIN
    SELECT * INTO parent FROM public.events e
    WHERE e.id = series AND e.recurrence_rule IS NOT NULL AND e.deleted_at IS NULL
      AND e.community_id = ANY (orbit.member_community_ids());
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no such recurring event' USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO public.events (
        community_id, created_by, title, description, starts_at, ends_at, all_day, location_name, location_lat,
        location_lng, location_address, category, recurrence_parent_id, attachments, rsvp_deadline, original_starts_at
    )
    VALUES (
        parent.community_id, parent.created_by, parent.title, parent.description, occurrence,
        occurrence + (parent.ends_at - parent.starts_at), parent.all_day, parent.location_name, parent.location_lat,
        parent.location_lng, parent.location_address, parent.category, parent.id, parent.attachments,
        occurrence + (parent.rsvp_deadline - parent.starts_at), occurrence
    )
    ON CONFLICT (recurrence_parent_id, original_starts_at) WHERE recurrence_parent_id IS NOT NULL DO NOTHING
    RETURNING id INTO instance;
    IF instance IS NULL THEN
        SELECT e.id INTO instance FROM public.events e WHERE e.recurrence_parent_id = series AND e.original_starts_at = occurrence;
    END IF;
    RETURN instance;
END
$$;

ALTER FUNCTION orbit.materialize_occurrence(uuid, timestamptz) OWNER TO orbit_admin;

-- Policies. This file owns every policy on events and rsvps: it drops them all and recreates the
-- ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('events', 'rsvps')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- events: members create them when the community allows it (admins always); the creator or
-- an admin edits them.
CREATE POLICY events_select ON events FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY events_insert ON events FOR INSERT TO orbit_app
    WITH CHECK (
        created_by = (SELECT orbit.app_user_id())
        AND (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
             OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
                 AND orbit.community_allows(community_id, 'allowMemberEvents')))
    );
CREATE POLICY events_update ON events FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- rsvps: one's own (for oneself or one's family members, see the foreign key).
CREATE POLICY rsvps_select ON rsvps FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY rsvps_write ON rsvps FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON events, rsvps FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT, UPDATE ON events TO orbit_app;
-- Un-RSVP: a hard delete.
GRANT SELECT, INSERT, UPDATE, DELETE ON rsvps TO orbit_app;
GRANT ALL ON events, rsvps TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.materialize_occurrence(uuid, timestamptz) FROM PUBLIC, orbit_app;
-- An operation any member may cause (answering an RSVP), checked inside the function.
GRANT EXECUTE ON FUNCTION orbit.materialize_occurrence(uuid, timestamptz) TO orbit_app, orbit_admin;
