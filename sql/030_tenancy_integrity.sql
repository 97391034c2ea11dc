-- Shared: the session and tenancy core (sql/README.md). This file owns the triggers that keep
-- every community's rows in their community, on every table that has them, their functions and
-- the functions' rights.
--
-- Rows that hang off a community (docs/architecture.md, "Data integrity").
--
-- rsvps, reactions, comments, poll_votes, splits and dues_payments carry the community_id of
-- their parent for row-level security and its indexes. An INSERT that names only the spec's
-- columns still works: these triggers fill community_id from the parent. A community_id that
-- disagrees with the parent's is rejected by the (parent_id, community_id) foreign keys of the
-- migrations, and the columns that tie a row to its parent or its community never change, so a
-- row can never point at a parent in another community.
--
-- The functions are SECURITY DEFINER (owner orbit_admin): they read the parent whatever the
-- caller may see; the caller's own row-level security still decides whether the write passes.

-- One function for the children whose only check is the parent's community (splits and
-- poll votes need more and have their own): it picks the parent by the table it fires on.
CREATE OR REPLACE FUNCTION orbit.fill_community_from_parent() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.community_id IS NULL THEN
        CASE TG_TABLE_NAME
            WHEN 'rsvps' THEN NEW.community_id := (SELECT e.community_id FROM public.events e WHERE e.id = NEW.event_id);
            WHEN 'reactions', 'comments' THEN NEW.community_id := (SELECT p.community_id FROM public.posts p WHERE p.id = NEW.post_id);
            WHEN 'dues_payments' THEN NEW.community_id := (SELECT d.community_id FROM public.dues d WHERE d.id = NEW.dues_id);
        END CASE;
    END IF;
    RETURN NEW;
END
$$;

-- Splits and payer rows (transaction_payers): fill community_id, then require that the row's
-- user is or was a member of the transaction's community (someone who left still owes what they
-- owed, and is still owed what they paid).
CREATE OR REPLACE FUNCTION orbit.check_split() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.community_id IS NULL THEN
        NEW.community_id := (SELECT t.community_id FROM public.transactions t WHERE t.id = NEW.transaction_id);
    END IF;
    IF NEW.community_id IS NOT NULL AND NOT EXISTS (
        SELECT FROM public.members m WHERE m.community_id = NEW.community_id AND m.user_id = NEW.user_id
    ) THEN
        IF TG_TABLE_NAME = 'transaction_payers' THEN
            RAISE EXCEPTION 'a payer of a transaction must be a member of its community'
                USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'transaction_payers_user_member', TABLE = 'transaction_payers';
        END IF;
        RAISE EXCEPTION 'the user of a split must be a member of the transaction''s community'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'splits_user_member', TABLE = 'splits';
    END IF;
    RETURN NEW;
END
$$;

-- Transactions: the payer is or was a member of the community.
CREATE OR REPLACE FUNCTION orbit.check_transaction_payer() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (
        SELECT FROM public.members m WHERE m.community_id = NEW.community_id AND m.user_id = NEW.paid_by
    ) THEN
        RAISE EXCEPTION 'the payer of a transaction must be a member of its community'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'transactions_payer_member', TABLE = 'transactions';
    END IF;
    RETURN NEW;
END
$$;

-- The columns that tie a row to its parent, its community or its author are fixed at INSERT.
CREATE OR REPLACE FUNCTION orbit.reject_reparenting() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION '%.% cannot be changed', TG_TABLE_NAME, TG_ARGV[0]
        USING ERRCODE = 'restrict_violation', TABLE = TG_TABLE_NAME,
              HINT = 'Create a new row instead.';
END
$$;

ALTER FUNCTION orbit.fill_community_from_parent() OWNER TO orbit_admin;
ALTER FUNCTION orbit.check_split() OWNER TO orbit_admin;
ALTER FUNCTION orbit.check_transaction_payer() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_rsvps_community ON rsvps;
CREATE TRIGGER trigger_rsvps_community BEFORE INSERT ON rsvps
    FOR EACH ROW EXECUTE FUNCTION orbit.fill_community_from_parent();
DROP TRIGGER IF EXISTS trigger_reactions_community ON reactions;
CREATE TRIGGER trigger_reactions_community BEFORE INSERT ON reactions
    FOR EACH ROW EXECUTE FUNCTION orbit.fill_community_from_parent();
DROP TRIGGER IF EXISTS trigger_comments_community ON comments;
CREATE TRIGGER trigger_comments_community BEFORE INSERT ON comments
    FOR EACH ROW EXECUTE FUNCTION orbit.fill_community_from_parent();
-- poll_votes are filled by orbit.check_poll_vote (sql/140_feed.sql), which needs the post anyway.
DROP TRIGGER IF EXISTS trigger_dues_payments_community ON dues_payments;
CREATE TRIGGER trigger_dues_payments_community BEFORE INSERT ON dues_payments
    FOR EACH ROW EXECUTE FUNCTION orbit.fill_community_from_parent();
DROP TRIGGER IF EXISTS trigger_splits_check ON splits;
CREATE TRIGGER trigger_splits_check BEFORE INSERT OR UPDATE OF user_id ON splits
    FOR EACH ROW EXECUTE FUNCTION orbit.check_split();
DROP TRIGGER IF EXISTS trigger_transaction_payers_check ON transaction_payers;
CREATE TRIGGER trigger_transaction_payers_check BEFORE INSERT OR UPDATE OF user_id ON transaction_payers
    FOR EACH ROW EXECUTE FUNCTION orbit.check_split();
DROP TRIGGER IF EXISTS trigger_transactions_payer ON transactions;
CREATE TRIGGER trigger_transactions_payer BEFORE INSERT OR UPDATE OF paid_by ON transactions
    FOR EACH ROW EXECUTE FUNCTION orbit.check_transaction_payer();

DROP TRIGGER IF EXISTS trigger_members_fixed ON members;
CREATE TRIGGER trigger_members_fixed BEFORE UPDATE ON members FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.user_id IS DISTINCT FROM OLD.user_id)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id or user_id');
DROP TRIGGER IF EXISTS trigger_invites_fixed ON invites;
CREATE TRIGGER trigger_invites_fixed BEFORE UPDATE ON invites FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id');
DROP TRIGGER IF EXISTS trigger_events_fixed ON events;
CREATE TRIGGER trigger_events_fixed BEFORE UPDATE ON events FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id');
DROP TRIGGER IF EXISTS trigger_rsvps_fixed ON rsvps;
CREATE TRIGGER trigger_rsvps_fixed BEFORE UPDATE ON rsvps FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.event_id IS DISTINCT FROM OLD.event_id
          OR NEW.user_id IS DISTINCT FROM OLD.user_id)
    EXECUTE FUNCTION orbit.reject_reparenting('event_id, user_id or community_id');
DROP TRIGGER IF EXISTS trigger_posts_fixed ON posts;
CREATE TRIGGER trigger_posts_fixed BEFORE UPDATE ON posts FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.author_id IS DISTINCT FROM OLD.author_id)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id or author_id');
DROP TRIGGER IF EXISTS trigger_reactions_fixed ON reactions;
CREATE TRIGGER trigger_reactions_fixed BEFORE UPDATE ON reactions FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.post_id IS DISTINCT FROM OLD.post_id
          OR NEW.user_id IS DISTINCT FROM OLD.user_id)
    EXECUTE FUNCTION orbit.reject_reparenting('post_id, user_id or community_id');
DROP TRIGGER IF EXISTS trigger_comments_fixed ON comments;
CREATE TRIGGER trigger_comments_fixed BEFORE UPDATE ON comments FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.post_id IS DISTINCT FROM OLD.post_id
          OR NEW.author_id IS DISTINCT FROM OLD.author_id OR NEW.parent_id IS DISTINCT FROM OLD.parent_id)
    EXECUTE FUNCTION orbit.reject_reparenting('post_id, parent_id, author_id or community_id');
DROP TRIGGER IF EXISTS trigger_poll_votes_fixed ON poll_votes;
CREATE TRIGGER trigger_poll_votes_fixed BEFORE UPDATE ON poll_votes FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.post_id IS DISTINCT FROM OLD.post_id
          OR NEW.user_id IS DISTINCT FROM OLD.user_id)
    EXECUTE FUNCTION orbit.reject_reparenting('post_id, user_id or community_id');
DROP TRIGGER IF EXISTS trigger_transactions_fixed ON transactions;
CREATE TRIGGER trigger_transactions_fixed BEFORE UPDATE ON transactions FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.recurring_charge_id IS DISTINCT FROM OLD.recurring_charge_id
          OR NEW.occurrence_on IS DISTINCT FROM OLD.occurrence_on)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id, recurring_charge_id or occurrence_on');
DROP TRIGGER IF EXISTS trigger_splits_fixed ON splits;
CREATE TRIGGER trigger_splits_fixed BEFORE UPDATE ON splits FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.transaction_id IS DISTINCT FROM OLD.transaction_id)
    EXECUTE FUNCTION orbit.reject_reparenting('transaction_id or community_id');
DROP TRIGGER IF EXISTS trigger_transaction_payers_fixed ON transaction_payers;
CREATE TRIGGER trigger_transaction_payers_fixed BEFORE UPDATE ON transaction_payers FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.transaction_id IS DISTINCT FROM OLD.transaction_id)
    EXECUTE FUNCTION orbit.reject_reparenting('transaction_id or community_id');
DROP TRIGGER IF EXISTS trigger_dues_fixed ON dues;
CREATE TRIGGER trigger_dues_fixed BEFORE UPDATE ON dues FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.recurring_charge_id IS DISTINCT FROM OLD.recurring_charge_id
          OR NEW.occurrence_on IS DISTINCT FROM OLD.occurrence_on)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id, recurring_charge_id or occurrence_on');
-- A recurring charge stays in its community, of its kind, with its creator and first day.
DROP TRIGGER IF EXISTS trigger_recurring_charges_fixed ON recurring_charges;
CREATE TRIGGER trigger_recurring_charges_fixed BEFORE UPDATE ON recurring_charges FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.kind IS DISTINCT FROM OLD.kind
          OR NEW.created_by IS DISTINCT FROM OLD.created_by OR NEW.starts_on IS DISTINCT FROM OLD.starts_on)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id, kind, created_by or starts_on');
DROP TRIGGER IF EXISTS trigger_dues_payments_fixed ON dues_payments;
CREATE TRIGGER trigger_dues_payments_fixed BEFORE UPDATE ON dues_payments FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id OR NEW.dues_id IS DISTINCT FROM OLD.dues_id
          OR NEW.provider_payment_id IS DISTINCT FROM OLD.provider_payment_id)
    EXECUTE FUNCTION orbit.reject_reparenting('dues_id, community_id or provider_payment_id');
DROP TRIGGER IF EXISTS trigger_media_fixed ON media;
CREATE TRIGGER trigger_media_fixed BEFORE UPDATE ON media FOR EACH ROW
    WHEN (NEW.community_id IS DISTINCT FROM OLD.community_id)
    EXECUTE FUNCTION orbit.reject_reparenting('community_id');

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON FUNCTION orbit.reject_reparenting() FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION orbit.fill_community_from_parent(), orbit.check_split(), orbit.check_transaction_payer()
FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION
    orbit.fill_community_from_parent(), orbit.check_split(), orbit.check_transaction_payer(), orbit.reject_reparenting()
TO orbit_admin;
