-- Changes and sync (sql/README.md): the change feed's log. This file owns the log's triggers on
-- every synced table (of every domain: it runs after them all), their functions, the policies
-- of changes, and the rights on changes, orbit_private.change_horizon and its functions.
--
-- The change feed's log (migrations/0019_changes.sql): a trigger per synced table appends which
-- entity of which community changed, as the writing transaction. SECURITY DEFINER (owner
-- orbit_admin): orbit_app has no right to write the log itself.
--
-- Live updates (GET /live) of everything but chat come from each server reading the log
-- (LiveListener polls it by snapshot), not from NOTIFY: a transaction that notifies holds a lock
-- of the whole database from its commit's start to its end, and cost an expense 15% alone
-- (issue 38; docs/benchmarks.md). Chat still notifies `orbit_chat` (its events carry what the
-- log does not: a receipt's reader).
--
-- trigger arguments: the entity, how to find the community ('self' for communities, a column
-- of the row, or a parent: 'event', 'post', 'transaction', 'dues'), and the column naming the
-- entity (default 'id': the row itself; a parent's id folds a child's change into its parent,
-- as an expense's splits and a post's poll votes are part of their JSON), and for chat the column
-- naming the conversation: only its participants see the change (the policies below), and live
-- updates go to them alone, on `orbit_chat` as '<conversation> <message|participant|conversation> <id>'.
CREATE OR REPLACE FUNCTION orbit.record_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r jsonb := to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END);
    entity text := TG_ARGV[0];
    parent text := TG_ARGV[1];
    id_column text := coalesce(TG_ARGV[2], 'id');
    conversation uuid := (r ->> TG_ARGV[3])::uuid;
    community uuid;
    op text := 'upsert';
BEGIN
    -- A new search vector alone (sql/820_search.sql's re-index) is no change of the row.
    IF TG_OP = 'UPDATE' AND r ? 'search_vector' THEN
        DECLARE
            old_row jsonb := to_jsonb(OLD);
        BEGIN
            IF (r -> 'search_vector') IS DISTINCT FROM (old_row -> 'search_vector')
               AND (r - 'search_vector') = (old_row - 'search_vector') THEN
                RETURN NULL;
            END IF;
        END;
    END IF;
    IF id_column = 'id' AND (TG_OP = 'DELETE' OR (r ->> 'deleted_at') IS NOT NULL OR (r ->> 'left_at') IS NOT NULL) THEN
        op := 'delete';
    END IF;
    community := CASE parent
        WHEN 'self' THEN (r ->> 'id')::uuid
        WHEN 'event' THEN (SELECT e.community_id FROM public.events e WHERE e.id = (r ->> 'event_id')::uuid)
        WHEN 'post' THEN (SELECT p.community_id FROM public.posts p WHERE p.id = (r ->> 'post_id')::uuid)
        WHEN 'transaction' THEN (SELECT t.community_id FROM public.transactions t WHERE t.id = (r ->> 'transaction_id')::uuid)
        WHEN 'dues' THEN (SELECT d.community_id FROM public.dues d WHERE d.id = (r ->> 'dues_id')::uuid)
        ELSE (r ->> parent)::uuid
    END;
    -- A notification about no community is in its user's own feed; a child whose parent is gone
    -- with the community syncs nowhere.
    IF community IS NULL AND entity = 'notification' THEN
        INSERT INTO public.changes (community_id, entity, entity_id, op, user_id)
        VALUES (NULL, entity, (r ->> 'id')::uuid, op, (r ->> 'user_id')::uuid);
    ELSIF community IS NOT NULL THEN
        INSERT INTO public.changes (community_id, entity, entity_id, op, user_id, conversation_id)
        VALUES (community, entity, (r ->> id_column)::uuid, op, CASE WHEN entity = 'notification' THEN (r ->> 'user_id')::uuid END,
                conversation);
        -- Chat's live events (GET /live): every server LISTENs; delivered at commit, once per
        -- payload per transaction (PostgreSQL folds identical notifications of a transaction).
        IF conversation IS NULL THEN
            RETURN NULL;
        ELSIF TG_TABLE_NAME = 'messages' THEN
            PERFORM pg_notify('orbit_chat', conversation::text || ' message ' || (r ->> 'id'));
        ELSIF TG_TABLE_NAME = 'conversations' AND TG_OP = 'INSERT' THEN
            PERFORM pg_notify('orbit_chat', conversation::text || ' conversation ' || conversation::text);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_change() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_change_community ON communities;
CREATE TRIGGER trigger_change_community AFTER INSERT OR UPDATE OR DELETE ON communities
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('community', 'self');
DROP TRIGGER IF EXISTS trigger_change_member ON members;
CREATE TRIGGER trigger_change_member AFTER INSERT OR DELETE ON members
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('member', 'community_id');
-- A member's pin (migrations/0051) is theirs alone and no other member's business: it is not a
-- change of the member others sync, nor activity in the community ("my groups").
DROP TRIGGER IF EXISTS trigger_change_member_update ON members;
CREATE TRIGGER trigger_change_member_update AFTER UPDATE ON members
    FOR EACH ROW WHEN (to_jsonb(OLD) - 'pinned' - 'pin_position' IS DISTINCT FROM to_jsonb(NEW) - 'pinned' - 'pin_position')
    EXECUTE FUNCTION orbit.record_change('member', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_event ON events;
CREATE TRIGGER trigger_change_event AFTER INSERT OR UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('event', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_rsvp ON rsvps;
CREATE TRIGGER trigger_change_rsvp AFTER INSERT OR UPDATE OR DELETE ON rsvps
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('rsvp', 'event');
DROP TRIGGER IF EXISTS trigger_change_post ON posts;
CREATE TRIGGER trigger_change_post AFTER INSERT OR UPDATE OR DELETE ON posts
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('post', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_comment ON comments;
CREATE TRIGGER trigger_change_comment AFTER INSERT OR UPDATE OR DELETE ON comments
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('comment', 'post');
DROP TRIGGER IF EXISTS trigger_change_expense ON transactions;
CREATE TRIGGER trigger_change_expense AFTER INSERT OR UPDATE OR DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('expense', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_media ON media;
CREATE TRIGGER trigger_change_media AFTER INSERT OR UPDATE OR DELETE ON media
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('media', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_dues ON dues;
CREATE TRIGGER trigger_change_dues AFTER INSERT OR UPDATE OR DELETE ON dues
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('dues', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_dues_payment ON dues_payments;
CREATE TRIGGER trigger_change_dues_payment AFTER INSERT OR UPDATE OR DELETE ON dues_payments
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('dues_payment', 'dues');
-- Notifications: logged once per statement (below), not row by row.
DROP TRIGGER IF EXISTS trigger_change_notification ON notifications;
DROP TRIGGER IF EXISTS trigger_change_conversation ON conversations;
CREATE TRIGGER trigger_change_conversation AFTER INSERT OR UPDATE ON conversations
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('conversation', 'community_id', 'id', 'id');
DROP TRIGGER IF EXISTS trigger_change_participant ON conversation_participants;
CREATE TRIGGER trigger_change_participant AFTER INSERT ON conversation_participants
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('conversation', 'community_id', 'conversation_id', 'conversation_id');

-- Participants' receipts and leaving, once per statement (issue 38, "delivered to all"): a
-- message marked delivered by 200 people is one UPDATE of 200 rows, which row by row logged the
-- same conversation 200 times and sent 200 notifications (10 to 16 ms a batch, and the
-- listener's backend sent the notifications past its first 8 KB only at its next command). Now:
-- the conversation once (its JSON holds the receipts), a change only they see for each who left
-- (the conversation is gone for them), and `<conversation> participants <user>,<user>,…` on
-- `orbit_chat`, 100 users a notification (payloads are limited to 8,000 bytes).
CREATE OR REPLACE FUNCTION orbit.record_participant_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    moved record;
BEGIN
    INSERT INTO public.changes (community_id, entity, entity_id, op, conversation_id)
    SELECT DISTINCT n.community_id, 'conversation', n.conversation_id, 'upsert', n.conversation_id FROM new_rows n;
    INSERT INTO public.changes (community_id, entity, entity_id, op, user_id, conversation_id)
    SELECT n.community_id, 'conversation', n.conversation_id, 'delete', n.user_id, n.conversation_id
    FROM new_rows n JOIN old_rows o ON o.conversation_id = n.conversation_id AND o.user_id = n.user_id
    WHERE n.left_at IS NOT NULL AND o.left_at IS NULL;
    FOR moved IN
        SELECT c.conversation_id, string_agg(c.user_id::text, ',') AS users
        FROM (SELECT n.conversation_id, n.user_id, (row_number() OVER (PARTITION BY n.conversation_id ORDER BY n.user_id) - 1) / 100 AS chunk
              FROM new_rows n) c
        GROUP BY c.conversation_id, c.chunk
    LOOP
        PERFORM pg_notify('orbit_chat', moved.conversation_id::text || ' participants ' || moved.users);
    END LOOP;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_participant_changes() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_change_participant_update ON conversation_participants;
CREATE TRIGGER trigger_change_participant_update AFTER UPDATE ON conversation_participants
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_participant_changes();
-- Notifications, once per statement: an expense with 10 splits notifies 9 people in one INSERT,
-- and marking everything read is one UPDATE. Row by row, each notification cost the log a
-- call of orbit.record_change (its row as JSON, the community looked up): about 60 µs apiece,
-- more than half a millisecond of an expense's (docs/benchmarks.md, "Adding an expense"). The
-- same rows as record_change's: the notification's community (NULL: its user's own feed) and
-- its user, who alone sees it.
CREATE OR REPLACE FUNCTION orbit.record_notification_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.changes (community_id, entity, entity_id, op, user_id)
    SELECT n.community_id, 'notification', n.id, CASE WHEN TG_OP = 'DELETE' THEN 'delete' ELSE 'upsert' END, n.user_id
    FROM written n;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_notification_changes() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_change_notification_insert ON notifications;
CREATE TRIGGER trigger_change_notification_insert AFTER INSERT ON notifications REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_notification_changes();
DROP TRIGGER IF EXISTS trigger_change_notification_update ON notifications;
CREATE TRIGGER trigger_change_notification_update AFTER UPDATE ON notifications REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_notification_changes();
DROP TRIGGER IF EXISTS trigger_change_notification_delete ON notifications;
CREATE TRIGGER trigger_change_notification_delete AFTER DELETE ON notifications REFERENCING OLD TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_notification_changes();
DROP TRIGGER IF EXISTS trigger_change_message ON messages;
CREATE TRIGGER trigger_change_message AFTER INSERT OR UPDATE ON messages
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('message', 'community_id', 'id', 'conversation_id');
DROP TRIGGER IF EXISTS trigger_change_chore ON chores;
CREATE TRIGGER trigger_change_chore AFTER INSERT OR UPDATE OR DELETE ON chores
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('chore', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_chore_completion ON chore_completions;
CREATE TRIGGER trigger_change_chore_completion AFTER INSERT OR UPDATE OR DELETE ON chore_completions
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('chore_completion', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_reward ON rewards;
CREATE TRIGGER trigger_change_reward AFTER INSERT OR UPDATE OR DELETE ON rewards
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('reward', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_reward_redemption ON reward_redemptions;
CREATE TRIGGER trigger_change_reward_redemption AFTER INSERT OR UPDATE OR DELETE ON reward_redemptions
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('reward_redemption', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_points ON points_accounts;
CREATE TRIGGER trigger_change_points AFTER INSERT OR UPDATE OR DELETE ON points_accounts
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('points', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_recurring_charge ON recurring_charges;
CREATE TRIGGER trigger_change_recurring_charge AFTER INSERT OR UPDATE OR DELETE ON recurring_charges
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('recurring_charge', 'community_id');
DROP TRIGGER IF EXISTS trigger_change_expense_category ON expense_categories;
CREATE TRIGGER trigger_change_expense_category AFTER INSERT OR UPDATE OR DELETE ON expense_categories
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('expense_category', 'community_id');
-- A community's own rates (the reference rates belong to no community and sync nowhere).
DROP TRIGGER IF EXISTS trigger_change_exchange_rate ON exchange_rates;
CREATE TRIGGER trigger_change_exchange_rate AFTER INSERT OR UPDATE OR DELETE ON exchange_rates
    FOR EACH ROW EXECUTE FUNCTION orbit.record_change('exchange_rate', 'community_id');

-- A row that is part of another entity's JSON (an expense's splits and payers, a post's poll
-- votes, a chore's assignees, and a completion for its chore's "done") is a change of that
-- entity: logged once per statement, not once per row (transition tables), and not at all when
-- this transaction has already logged that entity (an expense and its splits are written
-- together; the feed reads an entity as it is when pulled, so one change per transaction is
-- enough).
--
-- trigger argument: the entity.
CREATE OR REPLACE FUNCTION orbit.record_part_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    whole text := TG_ARGV[0];
    wholes uuid[];
    communities uuid[];
BEGIN
    -- Static SQL per table (each branch is planned for its table only when it runs).
    IF TG_TABLE_NAME IN ('splits', 'transaction_payers') THEN
        SELECT array_agg(p.transaction_id), array_agg(p.community_id) INTO wholes, communities FROM parts p;
    ELSIF TG_TABLE_NAME = 'poll_votes' THEN
        SELECT array_agg(p.post_id), array_agg(p.community_id) INTO wholes, communities FROM parts p;
    ELSE
        SELECT array_agg(p.chore_id), array_agg(p.community_id) INTO wholes, communities FROM parts p;
    END IF;
    INSERT INTO public.changes (community_id, entity, entity_id, op)
    SELECT DISTINCT t.community_id, whole, t.entity_id, 'upsert'
    FROM unnest(communities, wholes) AS t (community_id, entity_id)
    WHERE NOT EXISTS (
        SELECT 1 FROM public.changes l
        WHERE l.community_id = t.community_id AND l.xid = pg_current_xact_id() AND l.entity = whole AND l.entity_id = t.entity_id);
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_part_changes() OWNER TO orbit_admin;
-- PostgreSQL allows transition tables on a trigger of one event only: three triggers a table.
DROP TRIGGER IF EXISTS trigger_change_poll_vote ON poll_votes;
DROP TRIGGER IF EXISTS trigger_change_poll_vote_insert ON poll_votes;
CREATE TRIGGER trigger_change_poll_vote_insert AFTER INSERT ON poll_votes REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('post');
DROP TRIGGER IF EXISTS trigger_change_poll_vote_update ON poll_votes;
CREATE TRIGGER trigger_change_poll_vote_update AFTER UPDATE ON poll_votes REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('post');
DROP TRIGGER IF EXISTS trigger_change_poll_vote_delete ON poll_votes;
CREATE TRIGGER trigger_change_poll_vote_delete AFTER DELETE ON poll_votes REFERENCING OLD TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('post');
DROP TRIGGER IF EXISTS trigger_change_split ON splits;
DROP TRIGGER IF EXISTS trigger_change_split_insert ON splits;
CREATE TRIGGER trigger_change_split_insert AFTER INSERT ON splits REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('expense');
DROP TRIGGER IF EXISTS trigger_change_split_update ON splits;
CREATE TRIGGER trigger_change_split_update AFTER UPDATE ON splits REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('expense');
DROP TRIGGER IF EXISTS trigger_change_split_delete ON splits;
CREATE TRIGGER trigger_change_split_delete AFTER DELETE ON splits REFERENCING OLD TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('expense');
DROP TRIGGER IF EXISTS trigger_change_transaction_payer ON transaction_payers;
DROP TRIGGER IF EXISTS trigger_change_transaction_payer_insert ON transaction_payers;
CREATE TRIGGER trigger_change_transaction_payer_insert AFTER INSERT ON transaction_payers REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('expense');
DROP TRIGGER IF EXISTS trigger_change_transaction_payer_update ON transaction_payers;
CREATE TRIGGER trigger_change_transaction_payer_update AFTER UPDATE ON transaction_payers REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('expense');
DROP TRIGGER IF EXISTS trigger_change_transaction_payer_delete ON transaction_payers;
CREATE TRIGGER trigger_change_transaction_payer_delete AFTER DELETE ON transaction_payers REFERENCING OLD TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('expense');
DROP TRIGGER IF EXISTS trigger_change_chore_assignee ON chore_assignees;
DROP TRIGGER IF EXISTS trigger_change_chore_assignee_insert ON chore_assignees;
CREATE TRIGGER trigger_change_chore_assignee_insert AFTER INSERT ON chore_assignees REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('chore');
DROP TRIGGER IF EXISTS trigger_change_chore_assignee_update ON chore_assignees;
CREATE TRIGGER trigger_change_chore_assignee_update AFTER UPDATE ON chore_assignees REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('chore');
DROP TRIGGER IF EXISTS trigger_change_chore_assignee_delete ON chore_assignees;
CREATE TRIGGER trigger_change_chore_assignee_delete AFTER DELETE ON chore_assignees REFERENCING OLD TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('chore');
DROP TRIGGER IF EXISTS trigger_change_chore_done ON chore_completions;
DROP TRIGGER IF EXISTS trigger_change_chore_done_insert ON chore_completions;
CREATE TRIGGER trigger_change_chore_done_insert AFTER INSERT ON chore_completions REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('chore');
DROP TRIGGER IF EXISTS trigger_change_chore_done_update ON chore_completions;
CREATE TRIGGER trigger_change_chore_done_update AFTER UPDATE ON chore_completions REFERENCING NEW TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('chore');
DROP TRIGGER IF EXISTS trigger_change_chore_done_delete ON chore_completions;
CREATE TRIGGER trigger_change_chore_done_delete AFTER DELETE ON chore_completions REFERENCING OLD TABLE AS parts
    FOR EACH STATEMENT EXECUTE FUNCTION orbit.record_part_changes('chore');

-- A family member or a payment handle belongs to no community: it is shown in each community of
-- its owner (the parent, the user), so a change of it is a change there (and the owner joining or
-- leaving one is, below), and in the owner's own feed. trigger argument: the entity.
CREATE OR REPLACE FUNCTION orbit.record_shown_with_owner() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    entity text := TG_ARGV[0];
    member_id uuid;
    parent uuid;
BEGIN
    IF TG_OP = 'DELETE' THEN
        member_id := OLD.id;
        parent := OLD.user_id;
    ELSE
        member_id := NEW.id;
        parent := NEW.user_id;
    END IF;
    -- The parent joining or leaving a community at the same time (orbit.record_shown_elsewhere)
    -- takes this lock too: one waits for the other and then reads its memberships anew, so the
    -- change lands in every community the family member is shown in. (Without it, a rename racing
    -- a rejoin was logged for neither: the soak found it.) NO KEY UPDATE: foreign keys to the
    -- user (KEY SHARE) do not wait for it.
    -- A family member whose guardian of record changed is also a change in the former's
    -- communities (it leaves those the new one is not in). Both locked, in one order.
    PERFORM 1 FROM public.users u
    WHERE u.id IN (parent, CASE WHEN TG_OP = 'UPDATE' THEN OLD.user_id END) ORDER BY u.id FOR NO KEY UPDATE;
    INSERT INTO public.changes (community_id, entity, entity_id, op, user_id)
    SELECT DISTINCT m.community_id, entity, member_id, CASE WHEN TG_OP = 'DELETE' THEN 'delete' ELSE 'upsert' END, NULL::uuid
    FROM public.members m
    WHERE m.user_id IN (parent, CASE WHEN TG_OP = 'UPDATE' THEN OLD.user_id END) AND m.left_at IS NULL
    -- and in the owner's own feed (GET /users/me/family), communities or not: a payment handle's
    -- owner; a new family member's first guardian; a changed one's every guardian. A family
    -- member removed is a delete in each guardian's feed by orbit.record_guardian_change (their
    -- guardians go first, by their key).
    UNION ALL
    SELECT NULL, entity, member_id, CASE WHEN TG_OP = 'DELETE' THEN 'delete' ELSE 'upsert' END, parent
    WHERE entity <> 'family_member' OR TG_OP = 'INSERT'
    UNION ALL
    SELECT NULL, entity, member_id, 'upsert', g.user_id FROM public.family_guardians g
    WHERE entity = 'family_member' AND TG_OP = 'UPDATE' AND g.family_member_id = member_id AND g.accepted_at IS NOT NULL;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_shown_with_owner() OWNER TO orbit_admin;
-- A guardian's own feed has the family members they are a guardian of (docs/chores.md, "Two
-- parents"): one comes in when they accept (or are the first, written above), and goes when they
-- leave or the family member is removed.
CREATE OR REPLACE FUNCTION orbit.record_guardian_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.accepted_at IS NOT NULL THEN
            INSERT INTO public.changes (community_id, entity, entity_id, op, user_id)
            VALUES (NULL, 'family_member', OLD.family_member_id, 'delete', OLD.user_id);
        END IF;
    ELSIF NEW.accepted_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.accepted_at IS NULL)
          AND NOT EXISTS (SELECT FROM public.family_members f WHERE f.id = NEW.family_member_id AND f.user_id = NEW.user_id AND TG_OP = 'INSERT') THEN
        INSERT INTO public.changes (community_id, entity, entity_id, op, user_id)
        VALUES (NULL, 'family_member', NEW.family_member_id, 'upsert', NEW.user_id);
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_guardian_change() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_change_guardian ON family_guardians;
CREATE TRIGGER trigger_change_guardian AFTER INSERT OR UPDATE OF accepted_at OR DELETE ON family_guardians
    FOR EACH ROW EXECUTE FUNCTION orbit.record_guardian_change();
DROP TRIGGER IF EXISTS trigger_change_family_member ON family_members;
CREATE TRIGGER trigger_change_family_member AFTER INSERT OR UPDATE OR DELETE ON family_members
    FOR EACH ROW EXECUTE FUNCTION orbit.record_shown_with_owner('family_member');
DROP FUNCTION IF EXISTS orbit.record_family_member();
-- A user's payment handles (sql/159_payments.sql, docs/money.md "Getting paid back") are shown to
-- whoever shares a community with them, as their family members are: logged the same way.
DROP TRIGGER IF EXISTS trigger_change_payment_handle ON payment_handles;
CREATE TRIGGER trigger_change_payment_handle AFTER INSERT OR UPDATE OR DELETE ON payment_handles
    FOR EACH ROW EXECUTE FUNCTION orbit.record_shown_with_owner('payment_handle');

-- What other entities' JSON shows of a row (issue 38): a user's `display_name` is part of each
-- of their memberships (`member`); a family member's name is part of each expense with a split
-- for them (`for`), shown to whoever shares a community with their parent (family_members'
-- policy), so it changes with the name and when the parent joins or leaves any community. Each
-- of those is a change of the entities that show it, so followers get them as a fresh sync would.
CREATE OR REPLACE FUNCTION orbit.record_shown_elsewhere() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_TABLE_NAME = 'users' THEN
        INSERT INTO public.changes (community_id, entity, entity_id, op)
        SELECT m.community_id, 'member', m.id, 'upsert' FROM public.members m WHERE m.user_id = NEW.id AND m.left_at IS NULL;
    ELSIF TG_TABLE_NAME = 'family_members' THEN
        INSERT INTO public.changes (community_id, entity, entity_id, op)
        SELECT DISTINCT t.community_id, 'expense', t.id, 'upsert'
        FROM public.splits s JOIN public.transactions t ON t.id = s.transaction_id
        WHERE s.family_member_id = NEW.id AND t.deleted_at IS NULL;
    ELSE
        -- members: whether someone shares a community with the parent may have changed; and
        -- the parent's family members come into (or leave) this community with them (under the
        -- lock orbit.record_shown_with_owner takes, so that a rename at the same time is not lost);
        -- their payment handles likewise.
        PERFORM 1 FROM public.users u WHERE u.id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END) FOR NO KEY UPDATE;
        INSERT INTO public.changes (community_id, entity, entity_id, op)
        SELECT DISTINCT t.community_id, 'expense', t.id, 'upsert'
        FROM public.family_members f
        JOIN public.splits s ON s.family_member_id = f.id
        JOIN public.transactions t ON t.id = s.transaction_id
        WHERE f.user_id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END) AND t.deleted_at IS NULL
        UNION ALL
        SELECT (CASE WHEN TG_OP = 'DELETE' THEN OLD.community_id ELSE NEW.community_id END), 'family_member', f.id, 'upsert'
        FROM public.family_members f
        WHERE f.user_id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END)
        UNION ALL
        SELECT (CASE WHEN TG_OP = 'DELETE' THEN OLD.community_id ELSE NEW.community_id END), 'payment_handle', h.id, 'upsert'
        FROM public.payment_handles h
        WHERE h.user_id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END);
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_shown_elsewhere() OWNER TO orbit_admin;
DROP FUNCTION IF EXISTS orbit.record_rename() CASCADE;

DROP TRIGGER IF EXISTS trigger_change_user_name ON users;
CREATE TRIGGER trigger_change_user_name AFTER UPDATE OF display_name ON users
    FOR EACH ROW WHEN (OLD.display_name IS DISTINCT FROM NEW.display_name) EXECUTE FUNCTION orbit.record_shown_elsewhere();
DROP TRIGGER IF EXISTS trigger_change_family_member_name ON family_members;
CREATE TRIGGER trigger_change_family_member_name AFTER UPDATE OF name ON family_members
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION orbit.record_shown_elsewhere();
DROP TRIGGER IF EXISTS trigger_change_member_presence ON members;
CREATE TRIGGER trigger_change_member_presence AFTER UPDATE OF left_at ON members
    FOR EACH ROW WHEN (OLD.left_at IS DISTINCT FROM NEW.left_at) EXECUTE FUNCTION orbit.record_shown_elsewhere();
DROP TRIGGER IF EXISTS trigger_change_member_joined ON members;
CREATE TRIGGER trigger_change_member_joined AFTER INSERT OR DELETE ON members
    FOR EACH ROW EXECUTE FUNCTION orbit.record_shown_elsewhere();

-- How far compaction has gone, for the feed (which runs as orbit_app): the newest transaction
-- whose changes it removed. A cursor whose snapshot's xmin is not past it may lack one (410).
DROP FUNCTION IF EXISTS orbit.change_horizon();
CREATE OR REPLACE FUNCTION orbit.changes_compacted_through() RETURNS xid8
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT h.compacted_through FROM orbit_private.change_horizon h $$;
ALTER FUNCTION orbit.changes_compacted_through() OWNER TO orbit_admin;

-- A user's own feed (GET /users/me/changes): their account, their devices. A device token
-- registered again under another user moves (orbit.register_device): a delete in the old
-- owner's feed, an upsert in the new one's.
--
-- trigger arguments: the entity, and the column naming the user it belongs to.
CREATE OR REPLACE FUNCTION orbit.record_own_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    entity text := TG_ARGV[0];
    old_owner uuid := CASE WHEN TG_OP <> 'INSERT' THEN (to_jsonb(OLD) ->> TG_ARGV[1])::uuid END;
    new_owner uuid := CASE WHEN TG_OP <> 'DELETE' THEN (to_jsonb(NEW) ->> TG_ARGV[1])::uuid END;
BEGIN
    IF old_owner IS NOT NULL AND old_owner IS DISTINCT FROM new_owner THEN
        INSERT INTO public.changes (community_id, entity, entity_id, op, user_id) VALUES (NULL, entity, OLD.id, 'delete', old_owner);
    END IF;
    IF new_owner IS NOT NULL THEN
        INSERT INTO public.changes (community_id, entity, entity_id, op, user_id)
        VALUES (NULL, entity, NEW.id, CASE WHEN (to_jsonb(NEW) ->> 'deleted_at') IS NULL THEN 'upsert' ELSE 'delete' END, new_owner);
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.record_own_change() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_change_device ON devices;
CREATE TRIGGER trigger_change_device AFTER INSERT OR UPDATE OR DELETE ON devices
    FOR EACH ROW EXECUTE FUNCTION orbit.record_own_change('device', 'user_id');
DROP TRIGGER IF EXISTS trigger_change_user ON users;
CREATE TRIGGER trigger_change_user AFTER UPDATE OF apple_id, email, display_name, avatar_url, language, timezone, deleted_at ON users
    FOR EACH ROW WHEN ((OLD.apple_id, OLD.email, OLD.display_name, OLD.avatar_url, OLD.language, OLD.timezone, OLD.deleted_at)
        IS DISTINCT FROM (NEW.apple_id, NEW.email, NEW.display_name, NEW.avatar_url, NEW.language, NEW.timezone, NEW.deleted_at))
    EXECUTE FUNCTION orbit.record_own_change('user', 'id');

-- Policies. This file owns every policy on changes: it drops them all and recreates the ones below,
-- so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('changes')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- changes (the sync feed's log): the changes of one's active communities, and of entities only
-- one user may see (notifications) only that user's; chat's only the conversation's participants'
-- (and the end of one's participation, only one's own). Written only by the triggers above.
CREATE POLICY changes_select ON changes FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        AND (user_id IS NULL OR user_id = (SELECT orbit.app_user_id()))
        AND (conversation_id IS NULL OR user_id IS NOT NULL OR conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]))
    );

-- A user's own feed (no community: their account, devices, family, notifications of no
-- community): only that user.
CREATE POLICY changes_select_own ON changes FOR SELECT TO orbit_app
    USING (community_id IS NULL AND user_id = (SELECT orbit.app_user_id()));

-- A signed-in child's device syncs its chores, completions, rewards, redemptions and points
-- (issue 38; docs/sync.md): the log of those, in the one community its device reaches. Which
-- rows of each the child may read is their tables' own policies' to say.
CREATE POLICY changes_select_child ON changes FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.child_community_ids())::uuid[])
        AND entity IN ('chore', 'chore_completion', 'reward', 'reward_redemption', 'points')
        AND user_id IS NULL AND conversation_id IS NULL
    );

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON changes FROM orbit_app, orbit_admin;
-- Read-only for orbit_app: only the triggers write the log.
GRANT SELECT ON changes TO orbit_app;
GRANT ALL ON changes TO orbit_admin;
-- changes_seq_seq (the log's identity): its owner's alone, no file grants anything on it.
REVOKE ALL ON orbit_private.change_horizon FROM orbit_app, orbit_admin;
GRANT SELECT, UPDATE ON orbit_private.change_horizon TO orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.record_change(), orbit.record_participant_changes(), orbit.record_part_changes(), orbit.record_shown_with_owner(),
    orbit.record_shown_elsewhere(), orbit.record_own_change(), orbit.changes_compacted_through(), orbit.record_guardian_change(),
    orbit.record_notification_changes()
FROM PUBLIC, orbit_app;
-- What the feed (as orbit_app) checks a cursor against.
GRANT EXECUTE ON FUNCTION orbit.changes_compacted_through() TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.record_change(), orbit.record_participant_changes(), orbit.record_part_changes(), orbit.record_shown_with_owner(),
    orbit.record_shown_elsewhere(), orbit.record_own_change(), orbit.changes_compacted_through(), orbit.record_guardian_change(),
    orbit.record_notification_changes()
TO orbit_admin;
