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
