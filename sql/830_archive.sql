-- Archived communities (sql/README.md; docs/api.md, "Archived communities"): an archived
-- community is read-only. This file owns the trigger on every table members write in a
-- community that refuses a write while its community is archived, for every writer (the
-- services as orbit_app, the jobs, an operator), and the rule that an archived community's own
-- row changes only to be unarchived or deleted.
--
-- The check runs after the row has its community (sql/030_tenancy_integrity.sql fills a child's
-- from its parent in a BEFORE trigger whose name sorts first). A row deleted with its community
-- (ON DELETE CASCADE) finds the community gone, and passes: deleting an archived community
-- deletes everything in it.
--
-- Left writable, each for its reason: a member's own row beyond joining (leaving, one's pin and
-- notification preferences, an admin's roles: who may unarchive stays in the admins' hands);
-- notifications and push deliveries (the user's, not the community's); the balances' journal and
-- snapshots (kept by triggers of the tables above and by the refresh); splits' and payers' rows
-- other than a settled mark (written only with their transaction, which is refused first).
CREATE OR REPLACE FUNCTION orbit.refuse_write_when_archived() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    community uuid;
BEGIN
    IF TG_OP = 'DELETE' THEN
        community := OLD.community_id;
    ELSE
        community := NEW.community_id;
    END IF;
    IF EXISTS (SELECT FROM public.communities c WHERE c.id = community AND c.archived_at IS NOT NULL) THEN
        RAISE EXCEPTION 'community % is archived: it is read-only until an admin unarchives it', community
            USING ERRCODE = 'check_violation', CONSTRAINT = 'community_archived', TABLE = TG_TABLE_NAME;
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

ALTER FUNCTION orbit.refuse_write_when_archived() OWNER TO orbit_admin;

-- Every table members write in a community, with what they write there.
DO $$
DECLARE
    target record;
BEGIN
    FOR target IN
        SELECT * FROM (VALUES
            ('transactions', 'INSERT OR UPDATE OR DELETE'), ('splits', 'UPDATE'), ('dues', 'INSERT OR UPDATE OR DELETE'),
            ('dues_payments', 'INSERT OR UPDATE OR DELETE'), ('recurring_charges', 'INSERT OR UPDATE'),
            ('exchange_rates', 'INSERT OR UPDATE OR DELETE'), ('expense_categories', 'INSERT OR UPDATE'),
            ('events', 'INSERT OR UPDATE OR DELETE'), ('rsvps', 'INSERT OR UPDATE OR DELETE'), ('posts', 'INSERT OR UPDATE OR DELETE'),
            ('comments', 'INSERT OR UPDATE OR DELETE'), ('reactions', 'INSERT OR UPDATE OR DELETE'),
            ('poll_votes', 'INSERT OR UPDATE OR DELETE'), ('media', 'INSERT OR DELETE'), ('invites', 'INSERT OR UPDATE'),
            ('members', 'INSERT'), ('conversations', 'INSERT'), ('messages', 'INSERT OR UPDATE OR DELETE'),
            ('chores', 'INSERT OR UPDATE OR DELETE'), ('chore_completions', 'INSERT OR UPDATE'), ('rewards', 'INSERT OR UPDATE'),
            ('reward_redemptions', 'INSERT OR UPDATE'), ('points_ledger', 'INSERT'), ('nudges', 'INSERT')
        ) AS t (name, events)
    LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON public.%I', 'trigger_' || target.name || '_read_only_when_archived', target.name);
        EXECUTE format(
            'CREATE TRIGGER %I BEFORE %s ON public.%I FOR EACH ROW EXECUTE FUNCTION orbit.refuse_write_when_archived()',
            'trigger_' || target.name || '_read_only_when_archived', target.events, target.name);
    END LOOP;
END
$$;

-- An archived community's row: only archived_at (unarchiving), deleted_at (deleting it), what the
-- database keeps itself (member_count as members leave, updated_at) and what the payment
-- providers say (the subscription: a renewal or a lapse still arrives) change.
CREATE OR REPLACE FUNCTION orbit.keep_archived_community() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (to_jsonb(NEW) - ARRAY['archived_at', 'deleted_at', 'member_count', 'updated_at', 'subscription_status', 'subscription_expires_at'])
       IS DISTINCT FROM (to_jsonb(OLD) - ARRAY['archived_at', 'deleted_at', 'member_count', 'updated_at', 'subscription_status', 'subscription_expires_at'])
    THEN
        RAISE EXCEPTION 'community % is archived: it is read-only until an admin unarchives it', OLD.id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'community_archived', TABLE = 'communities';
    END IF;
    RETURN NEW;
END
$$;

ALTER FUNCTION orbit.keep_archived_community() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_communities_read_only_when_archived ON communities;
CREATE TRIGGER trigger_communities_read_only_when_archived BEFORE UPDATE ON communities
    FOR EACH ROW WHEN (OLD.archived_at IS NOT NULL AND NEW.archived_at IS NOT NULL) EXECUTE FUNCTION orbit.keep_archived_community();

-- Rights (sql/README.md, "Rights"): trigger functions only.
REVOKE ALL ON FUNCTION orbit.refuse_write_when_archived(), orbit.keep_archived_community() FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.refuse_write_when_archived(), orbit.keep_archived_community() TO orbit_admin;
