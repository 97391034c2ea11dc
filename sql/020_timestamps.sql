-- Shared (sql/README.md): this file owns the timestamp triggers of every table that has them,
-- their functions and the functions' rights.
--
-- Timestamps the database owns (spec: updated_at "Last update", editable_until "24 hours after
-- creation"). The draft only gave updated_at a default, so it never changed after INSERT, and
-- computed editable_until from a nullable created_at that any UPDATE could rewrite.

CREATE OR REPLACE FUNCTION orbit.touch_updated_at() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    -- A new search vector alone (sql/820_search.sql's re-index) is no edit of the row.
    IF TG_TABLE_NAME IN ('posts', 'comments', 'events', 'transactions') THEN
        IF OLD.search_vector IS DISTINCT FROM NEW.search_vector
           AND (to_jsonb(NEW) - 'search_vector') = (to_jsonb(OLD) - 'search_vector') THEN
            RETURN NEW;
        END IF;
    END IF;
    NEW.updated_at := now();
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS trigger_users_updated_at ON users;
CREATE TRIGGER trigger_users_updated_at BEFORE UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_communities_updated_at ON communities;
CREATE TRIGGER trigger_communities_updated_at BEFORE UPDATE ON communities
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_events_updated_at ON events;
CREATE TRIGGER trigger_events_updated_at BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_rsvps_updated_at ON rsvps;
CREATE TRIGGER trigger_rsvps_updated_at BEFORE UPDATE ON rsvps
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_posts_updated_at ON posts;
CREATE TRIGGER trigger_posts_updated_at BEFORE UPDATE ON posts
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_comments_updated_at ON comments;
CREATE TRIGGER trigger_comments_updated_at BEFORE UPDATE ON comments
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_transactions_updated_at ON transactions;
CREATE TRIGGER trigger_transactions_updated_at BEFORE UPDATE ON transactions
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_splits_updated_at ON splits;
CREATE TRIGGER trigger_splits_updated_at BEFORE UPDATE ON splits
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_chores_updated_at ON chores;
CREATE TRIGGER trigger_chores_updated_at BEFORE UPDATE ON chores
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_rewards_updated_at ON rewards;
CREATE TRIGGER trigger_rewards_updated_at BEFORE UPDATE ON rewards
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();
DROP TRIGGER IF EXISTS trigger_family_members_updated_at ON family_members;
CREATE TRIGGER trigger_family_members_updated_at BEFORE UPDATE ON family_members
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();

-- editable_until = created_at + 24 h, fixed at INSERT; created_at itself never changes.
CREATE OR REPLACE FUNCTION orbit.set_post_editable_until() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        NEW.created_at := OLD.created_at;
    END IF;
    NEW.editable_until := NEW.created_at + interval '24 hours';
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS trigger_post_editable ON posts;
CREATE TRIGGER trigger_post_editable BEFORE INSERT OR UPDATE OF created_at, editable_until ON posts
    FOR EACH ROW EXECUTE FUNCTION orbit.set_post_editable_until();

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON FUNCTION orbit.touch_updated_at(), orbit.set_post_editable_until() FROM PUBLIC, orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.touch_updated_at(), orbit.set_post_editable_until() TO orbit_admin;
