-- Chores, rewards and points, and the family (sql/README.md): family members, the signed-in
-- child, PINs and paired devices. This file owns chores' invariants and notifications, the child
-- principal, the child sign-in functions, the policies of family_members, chores,
-- chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger,
-- points_accounts, child_credentials and child_devices and the rights on them and on its
-- functions. (What a child's device syncs is sql/800_changes.sql's.)
--
-- Chores, points and rewards (migrations/0022_chores.sql, docs/chores.md): their invariants are
-- kept here, whoever writes. SECURITY DEFINER (owner orbit_admin): the triggers write what
-- orbit_app may not (the ledger's credits and debits, the accounts, notifications).
--
-- Who asks: a user (orbit.app_user_id()) or a child, a family member signed in on a paired
-- device (`app.current_family_member_id`, set instead of the user). A child sees their own
-- chores, completions, redemptions and points and the rewards of their parent's communities.

CREATE OR REPLACE FUNCTION orbit.app_child_id() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('app.current_family_member_id', true), '')::uuid $$;

-- The paired device the signed-in child's token was issued on (`app.current_child_device_id`).
CREATE OR REPLACE FUNCTION orbit.app_child_device_id() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('app.current_child_device_id', true), '')::uuid $$;

-- The community the signed-in child reaches: the one their device was paired for, while the
-- device is the child's and not revoked, the child's parent is an active member of it and it is
-- not deleted. One community or none: a child paired in the household never reaches the club.
CREATE OR REPLACE FUNCTION orbit.child_community_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(d.community_id), '{}')
        FROM public.child_devices d
        JOIN public.family_members f ON f.id = d.family_member_id
        JOIN public.members m ON m.user_id = f.user_id AND m.community_id = d.community_id AND m.left_at IS NULL
        JOIN public.communities c ON c.id = d.community_id AND c.deleted_at IS NULL
        WHERE d.id = orbit.app_child_device_id() AND d.family_member_id = orbit.app_child_id()
          AND d.revoked_at IS NULL AND d.token_hash IS NOT NULL
    );
END
$$;

-- The chores assigned to the signed-in child, in those communities.
CREATE OR REPLACE FUNCTION orbit.child_chore_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(a.chore_id), '{}') FROM public.chore_assignees a
        WHERE a.family_member_id = orbit.app_child_id() AND a.community_id = ANY (orbit.child_community_ids())
    );
END
$$;

-- The family members the current user is the parent of.
CREATE OR REPLACE FUNCTION orbit.parent_family_member_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT coalesce(array_agg(f.id), '{}') FROM public.family_members f WHERE f.user_id = orbit.app_user_id());
END
$$;

ALTER FUNCTION orbit.child_community_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.child_chore_ids() OWNER TO orbit_admin;
ALTER FUNCTION orbit.parent_family_member_ids() OWNER TO orbit_admin;

-- Raises unless the holder (a user or a family member) may hold points in `community`: an
-- active member, or a family member whose parent is one.
CREATE OR REPLACE FUNCTION orbit.chore_require_holder(community uuid, holder_user uuid, holder_child uuid) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (
        SELECT FROM public.members m
        WHERE m.community_id = community AND m.left_at IS NULL
          AND m.user_id = coalesce(holder_user, (SELECT f.user_id FROM public.family_members f WHERE f.id = holder_child))
    ) THEN
        RAISE EXCEPTION 'chores and points are for active members of the community and their family members'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chores_holder_in_community';
    END IF;
END
$$;
ALTER FUNCTION orbit.chore_require_holder(uuid, uuid, uuid) OWNER TO orbit_admin;

-- Notifies the person behind a holder — the user, or a family member's parent — and, with
-- `admins`, the community's admins (once each); every one an active member, unless they switched
-- that kind off for the community (members.notification_prefs).
CREATE OR REPLACE FUNCTION orbit.chore_notify(
    community uuid, holder_user uuid, holder_child uuid, admins boolean, kind text, title text, body text, data jsonb
) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.notifications (user_id, community_id, type, title, body, data)
    SELECT m.user_id, community, kind::public.notification_type, left(title, 200), body, data
    FROM public.members m
    WHERE m.community_id = community AND m.left_at IS NULL
      AND (m.notification_prefs -> kind) IS DISTINCT FROM 'false'::jsonb
      AND ((admins AND m.role = 'admin')
           OR m.user_id = coalesce(holder_user, (SELECT f.user_id FROM public.family_members f WHERE f.id = holder_child)));
END
$$;
ALTER FUNCTION orbit.chore_notify(uuid, uuid, uuid, boolean, text, text, text, jsonb) OWNER TO orbit_admin;

-- The name of a holder, for notifications.
CREATE OR REPLACE FUNCTION orbit.holder_name(holder_user uuid, holder_child uuid) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((SELECT u.display_name FROM public.users u WHERE u.id = holder_user),
                    (SELECT f.name FROM public.family_members f WHERE f.id = holder_child), 'Someone')
$$;
ALTER FUNCTION orbit.holder_name(uuid, uuid) OWNER TO orbit_admin;

-- An assignee belongs to the chore's community; they hear of it.
CREATE OR REPLACE FUNCTION orbit.chore_check_assignee() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    chore record;
BEGIN
    SELECT c.community_id, c.title, c.points INTO chore FROM public.chores c WHERE c.id = NEW.chore_id;
    NEW.community_id := chore.community_id;
    PERFORM orbit.chore_require_holder(NEW.community_id, NEW.user_id, NEW.family_member_id);
    PERFORM orbit.chore_notify(
        NEW.community_id, NEW.user_id, NEW.family_member_id, false, 'chore_assigned',
        'New chore for ' || orbit.holder_name(NEW.user_id, NEW.family_member_id) || ': ' || chore.title,
        chore.points || ' points', jsonb_build_object('chore_id', NEW.chore_id)
    );
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.chore_check_assignee() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chore_check_assignee ON chore_assignees;
CREATE TRIGGER trigger_chore_check_assignee BEFORE INSERT ON chore_assignees
    FOR EACH ROW EXECUTE FUNCTION orbit.chore_check_assignee();

-- A completion: of an assignee, of a live chore, of one of its occurrences (a one-off chore has
-- one: its due time, or its creation without one; a recurring chore's are checked against its
-- rule by the service, here only that it is not before the first). It takes the chore's points
-- and is approved at once when the chore needs no approval. The partial unique index
-- chore_completions_one_per_occurrence refuses a second completion of the same occurrence.
CREATE OR REPLACE FUNCTION orbit.chore_check_completion() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    chore record;
BEGIN
    SELECT c.community_id, c.points, c.due_at, c.recurrence_rule, c.requires_approval, c.archived_at, c.created_at, c.title,
        c.completion_window_days
    INTO chore FROM public.chores c WHERE c.id = NEW.chore_id;
    NEW.community_id := chore.community_id;
    NEW.points := chore.points;
    NEW.status := CASE WHEN chore.requires_approval THEN 'pending' ELSE 'approved' END;
    NEW.reviewed_by := NULL;
    NEW.reviewed_at := CASE WHEN chore.requires_approval THEN NULL ELSE NEW.completed_at END;
    IF chore.archived_at IS NOT NULL THEN
        RAISE EXCEPTION 'the chore is archived' USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_live_chore';
    END IF;
    IF NOT EXISTS (SELECT FROM public.chore_assignees a WHERE a.chore_id = NEW.chore_id AND a.holder_id = coalesce(NEW.user_id, NEW.family_member_id)) THEN
        RAISE EXCEPTION 'only an assignee of the chore completes it'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_by_assignee';
    END IF;
    IF (chore.recurrence_rule IS NULL AND NEW.occurrence_at <> coalesce(chore.due_at, chore.created_at))
       OR (chore.recurrence_rule IS NOT NULL AND NEW.occurrence_at < chore.due_at) THEN
        RAISE EXCEPTION 'not an occurrence of the chore'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_occurrence';
    END IF;
    -- No free points from the past (issue 37, item 8): an occurrence is done within the chore's
    -- window of when it is recorded (the service holds the exact rule, by days in the chore's
    -- zone; this allows a day more, for any zone). A one-off chore without a due time has none.
    IF (chore.recurrence_rule IS NOT NULL OR chore.due_at IS NOT NULL)
       AND NEW.occurrence_at < NEW.completed_at - make_interval(days => chore.completion_window_days + 1) THEN
        RAISE EXCEPTION 'the occurrence is older than the chore''s completion window of % days', chore.completion_window_days
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_within_window';
    END IF;
    PERFORM orbit.chore_require_holder(NEW.community_id, NEW.user_id, NEW.family_member_id);
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.chore_check_completion() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chore_check_completion ON chore_completions;
CREATE TRIGGER trigger_chore_check_completion BEFORE INSERT ON chore_completions
    FOR EACH ROW EXECUTE FUNCTION orbit.chore_check_completion();

-- A chore's last occurrence (recurrence_ends_at) holds for its rule, start and zone: a change
-- of any clears it, and the services compute it again.
CREATE OR REPLACE FUNCTION orbit.chore_clear_recurrence_end() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (NEW.recurrence_rule, NEW.due_at, NEW.recurrence_timezone) IS DISTINCT FROM (OLD.recurrence_rule, OLD.due_at, OLD.recurrence_timezone)
       AND NEW.recurrence_ends_at IS NOT DISTINCT FROM OLD.recurrence_ends_at THEN
        NEW.recurrence_ends_at := NULL;
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS trigger_chore_clear_recurrence_end ON chores;
CREATE TRIGGER trigger_chore_clear_recurrence_end BEFORE UPDATE ON chores
    FOR EACH ROW EXECUTE FUNCTION orbit.chore_clear_recurrence_end();

-- A review decides once: pending → approved or rejected, never back, nothing else changes.
CREATE OR REPLACE FUNCTION orbit.chore_check_review() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (NEW.chore_id, NEW.occurrence_at, NEW.user_id, NEW.family_member_id, NEW.points, NEW.community_id)
       IS DISTINCT FROM (OLD.chore_id, OLD.occurrence_at, OLD.user_id, OLD.family_member_id, OLD.points, OLD.community_id) THEN
        RAISE EXCEPTION 'a completion''s chore, occurrence, doer and points do not change'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_fixed';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND OLD.status <> 'pending' THEN
        RAISE EXCEPTION 'the completion was already %', OLD.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_reviewed_once';
    END IF;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.chore_check_review() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chore_check_review ON chore_completions;
CREATE TRIGGER trigger_chore_check_review BEFORE UPDATE ON chore_completions
    FOR EACH ROW EXECUTE FUNCTION orbit.chore_check_review();

-- Done, waiting for a parent: the admins hear. Approved (at once, or by review): the points
-- are credited — once, points_ledger_one_credit — and the doer hears.
CREATE OR REPLACE FUNCTION orbit.chore_after_completion() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    title text := (SELECT c.title FROM public.chores c WHERE c.id = NEW.chore_id);
    who text := orbit.holder_name(NEW.user_id, NEW.family_member_id);
BEGIN
    IF TG_OP = 'INSERT' AND NEW.status = 'pending' THEN
        PERFORM orbit.chore_notify(
            NEW.community_id, NULL, NULL, true, 'chore_completed', who || ' did ' || title,
            'Waiting for approval: ' || NEW.points || ' points',
            jsonb_build_object('chore_id', NEW.chore_id, 'completion_id', NEW.id)
        );
    END IF;
    IF NEW.status = 'approved' AND (TG_OP = 'INSERT' OR OLD.status <> 'approved') THEN
        INSERT INTO public.points_ledger (community_id, user_id, family_member_id, delta, kind, completion_id, created_by)
        VALUES (NEW.community_id, NEW.user_id, NEW.family_member_id, NEW.points, 'chore', NEW.id, NEW.reviewed_by);
        PERFORM orbit.chore_notify(
            NEW.community_id, NEW.user_id, NEW.family_member_id, false, 'chore_approved', title || ': approved',
            who || ' earned ' || NEW.points || ' points', jsonb_build_object('chore_id', NEW.chore_id, 'completion_id', NEW.id)
        );
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.chore_after_completion() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_chore_after_completion ON chore_completions;
CREATE TRIGGER trigger_chore_after_completion AFTER INSERT OR UPDATE OF status ON chore_completions
    FOR EACH ROW EXECUTE FUNCTION orbit.chore_after_completion();

-- A redemption: of an available reward in stock (the reward's row lock orders concurrent
-- redemptions, so the stock never goes below zero), at the reward's cost, by a holder of the
-- community; debited at once (the account's CHECK refuses an overdraft), the admins hear.
CREATE OR REPLACE FUNCTION orbit.reward_check_redemption() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    reward record;
BEGIN
    SELECT r.community_id, r.points_cost, r.available, r.stock INTO reward FROM public.rewards r WHERE r.id = NEW.reward_id FOR UPDATE;
    NEW.community_id := reward.community_id;
    NEW.points_cost := reward.points_cost;
    NEW.status := 'requested';
    NEW.resolved_by := NULL;
    NEW.resolved_at := NULL;
    IF NOT reward.available THEN
        RAISE EXCEPTION 'the reward is not available' USING ERRCODE = 'check_violation', CONSTRAINT = 'reward_redemptions_available';
    END IF;
    IF reward.stock = 0 THEN
        RAISE EXCEPTION 'the reward is out of stock' USING ERRCODE = 'check_violation', CONSTRAINT = 'reward_redemptions_in_stock';
    END IF;
    PERFORM orbit.chore_require_holder(NEW.community_id, NEW.user_id, NEW.family_member_id);
    UPDATE public.rewards SET stock = stock - 1 WHERE id = NEW.reward_id AND stock IS NOT NULL;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.reward_check_redemption() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_reward_check_redemption ON reward_redemptions;
CREATE TRIGGER trigger_reward_check_redemption BEFORE INSERT ON reward_redemptions
    FOR EACH ROW EXECUTE FUNCTION orbit.reward_check_redemption();

-- A redemption is resolved once: requested → fulfilled or cancelled; nothing else changes.
CREATE OR REPLACE FUNCTION orbit.reward_check_resolution() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (NEW.reward_id, NEW.user_id, NEW.family_member_id, NEW.points_cost, NEW.community_id)
       IS DISTINCT FROM (OLD.reward_id, OLD.user_id, OLD.family_member_id, OLD.points_cost, OLD.community_id) THEN
        RAISE EXCEPTION 'a redemption''s reward, holder and cost do not change'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'reward_redemptions_fixed';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND OLD.status <> 'requested' THEN
        RAISE EXCEPTION 'the redemption was already %', OLD.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'reward_redemptions_resolved_once';
    END IF;
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.reward_check_resolution() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_reward_check_resolution ON reward_redemptions;
CREATE TRIGGER trigger_reward_check_resolution BEFORE UPDATE ON reward_redemptions
    FOR EACH ROW EXECUTE FUNCTION orbit.reward_check_resolution();

-- Requested: debited, the admins hear. Cancelled: refunded (once,
-- points_ledger_one_per_redemption) and the reward's stock given back.
CREATE OR REPLACE FUNCTION orbit.reward_after_redemption() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO public.points_ledger (community_id, user_id, family_member_id, delta, kind, redemption_id, created_by)
        VALUES (NEW.community_id, NEW.user_id, NEW.family_member_id, -NEW.points_cost, 'redemption', NEW.id, NEW.requested_by);
        PERFORM orbit.chore_notify(
            NEW.community_id, NULL, NULL, true, 'reward_redeemed',
            orbit.holder_name(NEW.user_id, NEW.family_member_id) || ' redeemed ' || (SELECT r.title FROM public.rewards r WHERE r.id = NEW.reward_id),
            NEW.points_cost || ' points', jsonb_build_object('reward_id', NEW.reward_id, 'redemption_id', NEW.id)
        );
    ELSIF NEW.status = 'cancelled' AND OLD.status <> 'cancelled' THEN
        INSERT INTO public.points_ledger (community_id, user_id, family_member_id, delta, kind, redemption_id, created_by)
        VALUES (NEW.community_id, NEW.user_id, NEW.family_member_id, NEW.points_cost, 'refund', NEW.id, NEW.resolved_by);
        UPDATE public.rewards SET stock = stock + 1 WHERE id = NEW.reward_id AND stock IS NOT NULL;
    END IF;
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.reward_after_redemption() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_reward_after_redemption ON reward_redemptions;
CREATE TRIGGER trigger_reward_after_redemption AFTER INSERT OR UPDATE OF status ON reward_redemptions
    FOR EACH ROW EXECUTE FUNCTION orbit.reward_after_redemption();

-- An adjustment is for a holder of the community. Every entry moves its holder's account under
-- the account's row lock (an UPDATE): concurrent debits are applied one
-- after the other, each to the balance the previous one left, and the account's CHECK refuses
-- the one that would go below zero. Lifetime earned counts chore credits and positive
-- adjustments.
CREATE OR REPLACE FUNCTION orbit.points_apply_entry() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    earned integer := CASE WHEN NEW.kind IN ('chore', 'adjustment') AND NEW.delta > 0 THEN NEW.delta ELSE 0 END;
BEGIN
    IF NEW.kind = 'adjustment' THEN
        PERFORM orbit.chore_require_holder(NEW.community_id, NEW.user_id, NEW.family_member_id);
    END IF;
    -- The account first, empty (a CHECK applies to an INSERT's proposed row even when it
    -- conflicts, so the delta cannot ride on the INSERT), then the delta under its row lock.
    INSERT INTO public.points_accounts (community_id, user_id, family_member_id)
    VALUES (NEW.community_id, NEW.user_id, NEW.family_member_id)
    ON CONFLICT (community_id, holder_id) DO NOTHING;
    UPDATE public.points_accounts
    SET balance = balance + NEW.delta, lifetime_earned = lifetime_earned + earned, updated_at = now()
    WHERE community_id = NEW.community_id AND holder_id = coalesce(NEW.user_id, NEW.family_member_id);
    RETURN NULL;
END
$$;
ALTER FUNCTION orbit.points_apply_entry() OWNER TO orbit_admin;
DROP TRIGGER IF EXISTS trigger_points_apply_entry ON points_ledger;
CREATE TRIGGER trigger_points_apply_entry AFTER INSERT ON points_ledger
    FOR EACH ROW EXECUTE FUNCTION orbit.points_apply_entry();

-- The ledger is history: no entry changes, whoever asks (orbit_app may not even try: no UPDATE
-- right, below).
CREATE OR REPLACE FUNCTION orbit.points_ledger_immutable() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'points_ledger is append-only' USING ERRCODE = 'check_violation', CONSTRAINT = 'points_ledger_append_only';
END
$$;
DROP TRIGGER IF EXISTS trigger_points_ledger_immutable ON points_ledger;
CREATE TRIGGER trigger_points_ledger_immutable BEFORE UPDATE ON points_ledger
    FOR EACH ROW EXECUTE FUNCTION orbit.points_ledger_immutable();

-- Lifetime earned never decreases, whoever writes the account.
CREATE OR REPLACE FUNCTION orbit.points_account_check() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.lifetime_earned < OLD.lifetime_earned THEN
        RAISE EXCEPTION 'lifetime earned never decreases'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'points_accounts_lifetime_never_decreases';
    END IF;
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS trigger_points_account_check ON points_accounts;
CREATE TRIGGER trigger_points_account_check BEFORE UPDATE ON points_accounts
    FOR EACH ROW EXECUTE FUNCTION orbit.points_account_check();

-- Children's sign-in (issue 23, item 3; issue 37, items 1–2). Only these functions touch
-- child_credentials and child_devices. A child belongs to their guardian, the user whose family
-- member they are: no community role reaches another family's child.

-- How long a paired device may go without signing its child in before it must be paired again.
CREATE OR REPLACE FUNCTION orbit.child_device_idle_limit() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT interval '30 days' $$;

-- How long the n-th lockout in a row lasts (n ≥ 1): 15 minutes, 1 hour, then 24 hours.
CREATE OR REPLACE FUNCTION orbit.child_lockout_duration(n integer) RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN n <= 1 THEN interval '15 minutes' WHEN n = 2 THEN interval '1 hour' ELSE interval '24 hours' END $$;

-- True when the current user may manage `child`'s sign-in from `community`: they are the
-- child's guardian (family_members.user_id) and an active member of the community, which is not
-- deleted. An admin of the community is not enough: the child is not theirs.
CREATE OR REPLACE FUNCTION orbit.can_manage_child(child uuid, community uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (
        SELECT FROM public.family_members f
        JOIN public.members parent ON parent.user_id = f.user_id AND parent.community_id = community AND parent.left_at IS NULL
        JOIN public.communities c ON c.id = community AND c.deleted_at IS NULL
        WHERE f.id = child AND f.user_id = orbit.app_user_id()
    )
$$;
ALTER FUNCTION orbit.can_manage_child(uuid, uuid) OWNER TO orbit_admin;

-- Sets (or replaces) a child's PIN: 4–6 digits, kept as a bcrypt hash; clears a lockout and
-- the count of lockouts in a row. The child's guardian only.
CREATE OR REPLACE FUNCTION orbit.set_child_pin(child uuid, community uuid, pin text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only the child''s parent sets a PIN' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF pin IS NULL OR pin !~ '^[0-9]{4,6}$' THEN
        RAISE EXCEPTION 'a PIN is 4 to 6 digits' USING ERRCODE = 'check_violation', CONSTRAINT = 'child_credentials_pin';
    END IF;
    INSERT INTO public.child_credentials AS c (family_member_id, pin_hash)
    VALUES (child, orbit_private.crypt(pin, orbit_private.gen_salt('bf', 10)))
    ON CONFLICT (family_member_id) DO UPDATE
        SET pin_hash = EXCLUDED.pin_hash, failed_attempts = 0, lockouts_in_row = 0, locked_until = NULL, updated_at = now();
END
$$;
ALTER FUNCTION orbit.set_child_pin(uuid, uuid, text) OWNER TO orbit_admin;

-- Starts pairing a device for a child in `community` (the one community its token will reach):
-- stores the pairing code's hash, valid until `expires`. The child's guardian only.
CREATE OR REPLACE FUNCTION orbit.start_child_pairing(child uuid, community uuid, code_hash bytea, expires timestamptz) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    device uuid;
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only the child''s parent pairs a device' USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO public.child_devices (family_member_id, community_id, pairing_code_hash, pairing_expires_at, created_by)
    VALUES (child, community, code_hash, expires, orbit.app_user_id())
    RETURNING id INTO device;
    RETURN device;
END
$$;
ALTER FUNCTION orbit.start_child_pairing(uuid, uuid, bytea, timestamptz) OWNER TO orbit_admin;

-- Uses a pairing code, once: the device gets its token (its hash is stored). The child, or
-- NULL for an unknown, used, expired or revoked code.
CREATE OR REPLACE FUNCTION orbit.finish_child_pairing(code_hash bytea, device_token_hash bytea) RETURNS uuid
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE public.child_devices SET pairing_code_hash = NULL, token_hash = device_token_hash, paired_at = now()
    WHERE pairing_code_hash = code_hash AND pairing_expires_at > now() AND revoked_at IS NULL
    RETURNING family_member_id
$$;
ALTER FUNCTION orbit.finish_child_pairing(bytea, bytea) OWNER TO orbit_admin;

-- The devices paired (or being paired) for `child` in `community`, newest first, with their
-- state: 'pending' (a pairing code not used yet), 'paired', 'expired' (a code not used in time,
-- or a device unused for orbit.child_device_idle_limit()) or 'revoked'. The guardian only.
CREATE OR REPLACE FUNCTION orbit.child_devices_of(child uuid, community uuid)
RETURNS TABLE (
    id uuid, family_member_id uuid, community_id uuid, status text, created_by uuid, created_at timestamptz,
    paired_at timestamptz, last_used_at timestamptz, expires_at timestamptz, revoked_at timestamptz, revoked_by uuid
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only the child''s parent sees the child''s devices' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
    SELECT d.id, d.family_member_id, d.community_id,
           CASE WHEN d.revoked_at IS NOT NULL THEN 'revoked'
                WHEN d.token_hash IS NULL AND d.pairing_expires_at > now() THEN 'pending'
                WHEN d.token_hash IS NULL THEN 'expired'
                WHEN coalesce(d.last_used_at, d.paired_at) + orbit.child_device_idle_limit() <= now() THEN 'expired'
                ELSE 'paired' END,
           d.created_by, d.created_at, d.paired_at, d.last_used_at,
           CASE WHEN d.token_hash IS NULL THEN d.pairing_expires_at
                ELSE coalesce(d.last_used_at, d.paired_at) + orbit.child_device_idle_limit() END,
           d.revoked_at, d.revoked_by
    FROM public.child_devices d
    WHERE d.family_member_id = child AND d.community_id = community
    ORDER BY d.created_at DESC, d.id;
END
$$;
ALTER FUNCTION orbit.child_devices_of(uuid, uuid) OWNER TO orbit_admin;

-- Revokes one of `child`'s devices in `community` (`device`), or all of them (NULL), with any
-- pairing code not used yet: the device's token signs in no more, and the child's access tokens
-- issued on it reach nothing from now on (orbit.child_community_ids). Returns how many of the
-- named devices exist (revoked now or before), so that 0 means "no such device". The guardian
-- only.
CREATE OR REPLACE FUNCTION orbit.revoke_child_devices(child uuid, community uuid, device uuid) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    named integer;
BEGIN
    IF NOT orbit.can_manage_child(child, community) THEN
        RAISE EXCEPTION 'only the child''s parent revokes the child''s devices' USING ERRCODE = 'insufficient_privilege';
    END IF;
    UPDATE public.child_devices d SET revoked_at = now(), revoked_by = orbit.app_user_id(), pairing_code_hash = NULL
    WHERE d.family_member_id = child AND d.community_id = community AND (device IS NULL OR d.id = device) AND d.revoked_at IS NULL;
    SELECT count(*) INTO named FROM public.child_devices d
    WHERE d.family_member_id = child AND d.community_id = community AND (device IS NULL OR d.id = device);
    RETURN named;
END
$$;
ALTER FUNCTION orbit.revoke_child_devices(uuid, uuid, uuid) OWNER TO orbit_admin;

-- A sign-in attempt on a paired device: checks the PIN of that device's child, and no other.
-- Outcomes: 'signed_in' (with the device and its community, for the child's token);
-- 'wrong_pin'; 'locked' (now, or by this fifth wrong PIN in a row: for
-- orbit.child_lockout_duration of the lockouts in a row, and the child's guardian hears);
-- 'unknown_device' (unknown or revoked); 'device_expired' (unused for
-- orbit.child_device_idle_limit()); 'no_pin'. Never raises on a wrong PIN, so the failure count
-- is committed with the answer. The credential's row lock makes concurrent attempts count one
-- after the other.
CREATE OR REPLACE FUNCTION orbit.child_sign_in(device_token_hash bytea, pin text)
RETURNS TABLE (outcome text, family_member_id uuid, device_id uuid, community_id uuid, locked_until timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    device record;
    credential record;
    lockout interval;
BEGIN
    SELECT d.id, d.family_member_id AS child, d.community_id, coalesce(d.last_used_at, d.paired_at) AS used INTO device
    FROM public.child_devices d
    WHERE d.token_hash = device_token_hash AND d.revoked_at IS NULL;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'unknown_device', NULL::uuid, NULL::uuid, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    IF device.used + orbit.child_device_idle_limit() <= now() THEN
        RETURN QUERY SELECT 'device_expired', device.child, device.id, device.community_id, NULL::timestamptz;
        RETURN;
    END IF;
    SELECT c.pin_hash, c.failed_attempts, c.lockouts_in_row, c.locked_until AS until INTO credential
    FROM public.child_credentials c WHERE c.family_member_id = device.child FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'no_pin', device.child, device.id, device.community_id, NULL::timestamptz;
        RETURN;
    END IF;
    IF credential.until > now() THEN
        RETURN QUERY SELECT 'locked', device.child, device.id, device.community_id, credential.until;
        RETURN;
    END IF;
    IF pin IS NOT NULL AND orbit_private.crypt(pin, credential.pin_hash) = credential.pin_hash THEN
        UPDATE public.child_credentials c SET failed_attempts = 0, lockouts_in_row = 0, locked_until = NULL, updated_at = now()
        WHERE c.family_member_id = device.child;
        UPDATE public.child_devices d SET last_used_at = now() WHERE d.id = device.id;
        RETURN QUERY SELECT 'signed_in', device.child, device.id, device.community_id, NULL::timestamptz;
        RETURN;
    END IF;
    IF credential.failed_attempts + 1 >= 5 THEN
        lockout := orbit.child_lockout_duration(credential.lockouts_in_row + 1);
        UPDATE public.child_credentials c
        SET failed_attempts = 0, lockouts_in_row = c.lockouts_in_row + 1, locked_until = now() + lockout, updated_at = now()
        WHERE c.family_member_id = device.child;
        PERFORM orbit.chore_notify(
            device.community_id, NULL, device.child, false, 'child_locked_out',
            orbit.holder_name(NULL, device.child) || '''s sign-in is locked',
            'Five wrong PINs: sign-in is locked for '
                || CASE credential.lockouts_in_row WHEN 0 THEN '15 minutes.' WHEN 1 THEN '1 hour (the second lockout in a row).'
                   ELSE '24 hours (lockout ' || credential.lockouts_in_row + 1 || ' in a row).' END,
            jsonb_build_object('family_member_id', device.child, 'locked_until', now() + lockout, 'lockouts_in_row', credential.lockouts_in_row + 1)
        );
        RETURN QUERY SELECT 'locked', device.child, device.id, device.community_id, now() + lockout;
        RETURN;
    END IF;
    UPDATE public.child_credentials c SET failed_attempts = c.failed_attempts + 1, updated_at = now()
    WHERE c.family_member_id = device.child;
    RETURN QUERY SELECT 'wrong_pin', device.child, device.id, device.community_id, NULL::timestamptz;
END
$$;
ALTER FUNCTION orbit.child_sign_in(bytea, text) OWNER TO orbit_admin;

-- Policies. This file owns every policy on family_members, chores, chore_assignees,
-- chore_completions, rewards, reward_redemptions, points_ledger, points_accounts, child_credentials
-- and child_devices: it drops them all and recreates the ones below, so a policy removed here is
-- removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN (
            'family_members', 'chores', 'chore_assignees', 'chore_completions', 'rewards',
            'reward_redemptions', 'points_ledger', 'points_accounts', 'child_credentials',
            'child_devices'
        )
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- family_members
CREATE POLICY family_members_select ON family_members FOR SELECT TO orbit_app
    USING (user_id = ANY ((SELECT orbit.contact_user_ids())::uuid[]));
CREATE POLICY family_members_write ON family_members FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- chores, rewards and points: a community's members see its chores,
-- completions, rewards, redemptions and points; a signed-in child (orbit.app_child_id()) sees the
-- chores assigned to them, their own completions, redemptions, ledger and account, and the
-- rewards of their parent's communities. Admins (parents) write chores, their assignees and
-- rewards, review completions, resolve redemptions and adjust points. A completion or a
-- redemption is recorded by its holder (the user, or the child on their device), by the child's
-- parent, or by an admin for a family member.
CREATE POLICY chores_select ON chores FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) OR id = ANY ((SELECT orbit.child_chore_ids())::uuid[]));
CREATE POLICY chores_insert ON chores FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));
CREATE POLICY chores_update ON chores FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
-- What a holder's rows are read by, one policy for each table that holds them: the community's
-- members, and the signed-in child their own.
DO $do$
DECLARE
    tablename text;
BEGIN
    FOREACH tablename IN ARRAY ARRAY['chore_assignees', 'chore_completions', 'reward_redemptions', 'points_ledger', 'points_accounts']
    LOOP
        EXECUTE format($policy$
            CREATE POLICY %1$I ON %2$I FOR SELECT TO orbit_app
            USING (
                community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
                OR (family_member_id = (SELECT orbit.app_child_id()) AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]))
            )$policy$, tablename || '_select', tablename);
    END LOOP;
END
$do$;
CREATE POLICY chore_assignees_insert ON chore_assignees FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY chore_assignees_delete ON chore_assignees FOR DELETE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
-- A completion and a redemption are recorded alike, one policy for both: by their holder (the
-- user, or the child on their device), by the child's parent, or by an admin for a family member;
-- `recorded_by` / `requested_by` names the user who did it (NULL: the child on their device).
DO $do$
DECLARE
    target record;
BEGIN
    FOR target IN
        SELECT * FROM (VALUES ('chore_completions', 'recorded_by'), ('reward_redemptions', 'requested_by')) AS t(tablename, recorder)
    LOOP
        EXECUTE format($policy$
            CREATE POLICY %1$I ON %2$I FOR INSERT TO orbit_app
            WITH CHECK (
                (
                    community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND %3$I = (SELECT orbit.app_user_id())
                    AND (
                        user_id = (SELECT orbit.app_user_id())
                        OR family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[])
                        OR (family_member_id IS NOT NULL AND community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
                    )
                )
                OR (
                    %3$I IS NULL AND family_member_id = (SELECT orbit.app_child_id())
                    AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[])
                )
            )$policy$, target.tablename || '_insert', target.tablename, target.recorder);
    END LOOP;
END
$do$;
CREATE POLICY chore_completions_update ON chore_completions FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY rewards_select ON rewards FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR community_id = ANY ((SELECT orbit.child_community_ids())::uuid[])
    );
CREATE POLICY rewards_insert ON rewards FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));
CREATE POLICY rewards_update ON rewards FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY reward_redemptions_update ON reward_redemptions FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY points_ledger_insert ON points_ledger FOR INSERT TO orbit_app
    WITH CHECK (
        kind = 'adjustment' AND community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        AND created_by = (SELECT orbit.app_user_id())
    );

-- child_credentials and child_devices: no policy for orbit_app, and no rights; only the
-- SECURITY DEFINER functions above touch them (migrations/0022).

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON
    family_members, chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger, points_accounts,
    child_credentials, child_devices
FROM orbit_app, orbit_admin;
-- Remove a family member, unassign a chore: hard deletes.
GRANT SELECT, INSERT, UPDATE, DELETE ON family_members TO orbit_app;
GRANT SELECT, INSERT ON chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger TO orbit_app;
GRANT DELETE ON chore_assignees TO orbit_app;
GRANT SELECT ON points_accounts TO orbit_app;
GRANT UPDATE (title, description, points, difficulty, category, due_at, recurrence_rule, recurrence_timezone, requires_approval, archived_at,
    completion_window_days)
    ON chores TO orbit_app;
GRANT UPDATE (status, reviewed_by, reviewed_at) ON chore_completions TO orbit_app;
GRANT UPDATE (title, description, points_cost, available, stock) ON rewards TO orbit_app;
GRANT UPDATE (status, resolved_by, resolved_at) ON reward_redemptions TO orbit_app;
GRANT ALL ON
    family_members, chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger, points_accounts,
    child_credentials, child_devices
TO orbit_admin;
REVOKE ALL ON SEQUENCE points_ledger_seq_seq FROM orbit_app, orbit_admin;
-- The ledger's order (points_ledger.seq): adjustments are inserted as orbit_app.
GRANT USAGE ON SEQUENCE points_ledger_seq_seq TO orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.app_child_id(), orbit.app_child_device_id(), orbit.chore_clear_recurrence_end(), orbit.points_ledger_immutable(),
    orbit.points_account_check(), orbit.child_device_idle_limit(), orbit.child_lockout_duration(integer)
FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.child_community_ids(), orbit.child_chore_ids(), orbit.parent_family_member_ids(),
    orbit.chore_require_holder(uuid, uuid, uuid), orbit.chore_notify(uuid, uuid, uuid, boolean, text, text, text, jsonb),
    orbit.holder_name(uuid, uuid), orbit.chore_check_assignee(), orbit.chore_check_completion(), orbit.chore_check_review(),
    orbit.chore_after_completion(), orbit.reward_check_redemption(), orbit.reward_check_resolution(),
    orbit.reward_after_redemption(), orbit.points_apply_entry(), orbit.can_manage_child(uuid, uuid),
    orbit.set_child_pin(uuid, uuid, text), orbit.start_child_pairing(uuid, uuid, bytea, timestamptz),
    orbit.finish_child_pairing(bytea, bytea), orbit.child_devices_of(uuid, uuid), orbit.revoke_child_devices(uuid, uuid, uuid),
    orbit.child_sign_in(bytea, text)
FROM PUBLIC, orbit_app;
-- Who is asking, read by the policies as the querying role.
GRANT EXECUTE ON FUNCTION
    orbit.app_child_id(), orbit.app_child_device_id(), orbit.child_community_ids(), orbit.child_chore_ids(),
    orbit.parent_family_member_ids()
TO orbit_app, orbit_admin;
-- Operations a guardian or a child's device performs, each checked inside the function.
GRANT EXECUTE ON FUNCTION
    orbit.set_child_pin(uuid, uuid, text), orbit.start_child_pairing(uuid, uuid, bytea, timestamptz),
    orbit.finish_child_pairing(bytea, bytea), orbit.child_sign_in(bytea, text), orbit.can_manage_child(uuid, uuid),
    orbit.child_devices_of(uuid, uuid), orbit.revoke_child_devices(uuid, uuid, uuid)
TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.app_child_id(), orbit.app_child_device_id(), orbit.chore_clear_recurrence_end(), orbit.points_ledger_immutable(),
    orbit.points_account_check(), orbit.child_device_idle_limit(), orbit.child_lockout_duration(integer)
TO orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.child_community_ids(), orbit.child_chore_ids(), orbit.parent_family_member_ids(),
    orbit.chore_require_holder(uuid, uuid, uuid), orbit.chore_notify(uuid, uuid, uuid, boolean, text, text, text, jsonb),
    orbit.holder_name(uuid, uuid), orbit.chore_check_assignee(), orbit.chore_check_completion(), orbit.chore_check_review(),
    orbit.chore_after_completion(), orbit.reward_check_redemption(), orbit.reward_check_resolution(),
    orbit.reward_after_redemption(), orbit.points_apply_entry(), orbit.can_manage_child(uuid, uuid),
    orbit.set_child_pin(uuid, uuid, text), orbit.start_child_pairing(uuid, uuid, bytea, timestamptz),
    orbit.finish_child_pairing(bytea, bytea), orbit.child_devices_of(uuid, uuid), orbit.revoke_child_devices(uuid, uuid, uuid),
    orbit.child_sign_in(bytea, text)
TO orbit_admin;
