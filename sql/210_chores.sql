-- Chores, rewards and points (sql/README.md, migrations/0022_chores.sql, docs/chores.md). This
-- file owns chores' invariants and notifications, the policies of chores, chore_assignees,
-- chore_completions, rewards, reward_redemptions, points_ledger and points_accounts and the
-- rights on them and on its functions. The family it builds on, the signed-in child among them,
-- is sql/205_family.sql's; what a child's device syncs is sql/800_changes.sql's.
--
-- The invariants are kept here, whoever writes. SECURITY DEFINER (owner orbit_admin): the
-- triggers write what orbit_app may not (the ledger's credits and debits, the accounts,
-- notifications).
--
-- A holder of points is a user or a child, a family member signed in on a paired device
-- (orbit.app_child_id()). A child sees their own chores, completions, redemptions and points and
-- the rewards on offer in their parent's communities.

-- The chores assigned to the signed-in child, in the communities they reach
-- (orbit.child_community_ids()).
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
ALTER FUNCTION orbit.child_chore_ids() OWNER TO orbit_admin;

-- The chores a parent who is not an admin may change (docs/chores.md, "A parent sets chores for
-- their own children"): in the current user's communities, every assignee one of their own family
-- members; a chore they just set, before its first assignee, too.
CREATE OR REPLACE FUNCTION orbit.parent_chore_ids() RETURNS uuid[]
LANGUAGE plpgsql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(c.id), '{}') FROM public.chores c
        WHERE c.community_id = ANY (orbit.member_community_ids())
          AND NOT EXISTS (
              SELECT FROM public.chore_assignees a WHERE a.chore_id = c.id
                AND (a.family_member_id IS NULL OR NOT a.family_member_id = ANY (orbit.parent_family_member_ids()))
          )
          AND (EXISTS (SELECT FROM public.chore_assignees a WHERE a.chore_id = c.id) OR c.created_by = orbit.app_user_id())
    );
END
$$;
ALTER FUNCTION orbit.parent_chore_ids() OWNER TO orbit_admin;

-- Raises unless the holder (a user or a family member) may hold points in `community`: an
-- active member, or a family member one of whose guardians is one.
CREATE OR REPLACE FUNCTION orbit.chore_require_holder(community uuid, holder_user uuid, holder_child uuid) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (
        SELECT FROM public.members m
        WHERE m.community_id = community AND m.left_at IS NULL
          AND (m.user_id = holder_user OR m.user_id IN (
              SELECT g.user_id FROM public.family_guardians g WHERE g.family_member_id = holder_child AND g.accepted_at IS NOT NULL
          ))
    ) THEN
        RAISE EXCEPTION 'chores and points are for active members of the community and their family members'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chores_holder_in_community';
    END IF;
END
$$;
ALTER FUNCTION orbit.chore_require_holder(uuid, uuid, uuid) OWNER TO orbit_admin;

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
        c.completion_window_days, c.requires_photo
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
    -- Photo proof: required when the chore says so; an image uploaded to the chore's community.
    IF chore.requires_photo AND NEW.photo_media_id IS NULL THEN
        RAISE EXCEPTION 'the chore needs a photo' USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_photo_required';
    END IF;
    IF NEW.photo_media_id IS NOT NULL AND NOT EXISTS (
        SELECT FROM public.media m WHERE m.id = NEW.photo_media_id AND m.community_id = NEW.community_id AND m.type = 'image'
    ) THEN
        RAISE EXCEPTION 'photo % is not an image uploaded to this community', NEW.photo_media_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'chore_completions_photo_media';
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
    IF (NEW.chore_id, NEW.occurrence_at, NEW.user_id, NEW.family_member_id, NEW.points, NEW.community_id, NEW.photo_media_id)
       IS DISTINCT FROM (OLD.chore_id, OLD.occurrence_at, OLD.user_id, OLD.family_member_id, OLD.points, OLD.community_id, OLD.photo_media_id) THEN
        RAISE EXCEPTION 'a completion''s chore, occurrence, doer, points and photo do not change'
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
    SELECT r.community_id, r.points_cost, r.available, r.stock, r.archived_at, r.family_of INTO reward
    FROM public.rewards r WHERE r.id = NEW.reward_id FOR UPDATE;
    NEW.community_id := reward.community_id;
    NEW.points_cost := reward.points_cost;
    NEW.status := 'requested';
    NEW.resolved_by := NULL;
    NEW.resolved_at := NULL;
    IF reward.archived_at IS NOT NULL THEN
        RAISE EXCEPTION 'the reward is archived' USING ERRCODE = 'check_violation', CONSTRAINT = 'reward_redemptions_live_reward';
    END IF;
    IF NOT reward.available THEN
        RAISE EXCEPTION 'the reward is not available' USING ERRCODE = 'check_violation', CONSTRAINT = 'reward_redemptions_available';
    END IF;
    -- A parent's reward for their own children: theirs alone to redeem (the children the parent
    -- is a guardian of).
    IF reward.family_of IS NOT NULL AND NOT EXISTS (
        SELECT FROM public.family_guardians g
        WHERE g.family_member_id = NEW.family_member_id AND g.user_id = reward.family_of AND g.accepted_at IS NOT NULL
    ) THEN
        RAISE EXCEPTION 'the reward is for another family''s children'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'reward_redemptions_for_family';
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

-- Policies. This file owns every policy on chores, chore_assignees, chore_completions, rewards,
-- reward_redemptions, points_ledger and points_accounts: it drops them all and recreates the ones
-- below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN (
            'chores', 'chore_assignees', 'chore_completions', 'rewards', 'reward_redemptions', 'points_ledger',
            'points_accounts'
        )
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- chores, rewards and points: a community's members see its chores,
-- completions, rewards, redemptions and points; a signed-in child (orbit.app_child_id()) sees the
-- chores assigned to them, their own completions, redemptions, ledger and account, and the
-- rewards of their parent's communities. Admins (parents) write chores, their assignees and
-- rewards, review completions, resolve redemptions and adjust points; a parent who is not an admin
-- writes the chores of their own children and reviews and resolves their children's. A completion or a
-- redemption is recorded by its holder (the user, or the child on their device), by the child's
-- parent, or by an admin for a family member.
CREATE POLICY chores_select ON chores FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) OR id = ANY ((SELECT orbit.child_chore_ids())::uuid[]));
-- Admins set anyone's chores; a parent who is not an admin sets, changes and reviews their own
-- children's (orbit.parent_chore_ids(): every assignee their child).
CREATE POLICY chores_insert ON chores FOR INSERT TO orbit_app
    WITH CHECK (
        created_by = (SELECT orbit.app_user_id())
        AND (
            community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
            OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND (SELECT orbit.parent_family_member_ids()) <> '{}')
        )
    );
CREATE POLICY chores_update ON chores FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR id = ANY ((SELECT orbit.parent_chore_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR id = ANY ((SELECT orbit.parent_chore_ids())::uuid[]));
-- A chore nobody has done yet is deleted by an admin (or the parent of all its assignees); one with
-- a completion is archived instead, so that its points keep their cause.
CREATE POLICY chores_delete ON chores FOR DELETE TO orbit_app
    USING ((community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR id = ANY ((SELECT orbit.parent_chore_ids())::uuid[]))
           AND NOT EXISTS (SELECT FROM chore_completions d WHERE d.chore_id = chores.id));
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
    WITH CHECK (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[]) AND chore_id = ANY ((SELECT orbit.parent_chore_ids())::uuid[]))
    );
CREATE POLICY chore_assignees_delete ON chore_assignees FOR DELETE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR chore_id = ANY ((SELECT orbit.parent_chore_ids())::uuid[]));
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
-- A review and a redemption's resolution: by an admin, or by the parent of the child whose it is.
CREATE POLICY chore_completions_update ON chore_completions FOR UPDATE TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[]))
    )
    WITH CHECK (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[]))
    );
-- A child sees the rewards on offer: not hidden (available), not archived.
CREATE POLICY rewards_select ON rewards FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR (
            community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]) AND available AND archived_at IS NULL
            AND (family_of IS NULL OR family_of = ANY ((SELECT orbit.app_child_guardian_ids())::uuid[]))
        )
    );
-- Admins set rewards for everyone; a parent who is not an admin, for their own children
-- (family_of: themselves), and changes those.
CREATE POLICY rewards_insert ON rewards FOR INSERT TO orbit_app
    WITH CHECK (
        created_by = (SELECT orbit.app_user_id())
        AND (
            community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
            OR (
                community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND family_of = (SELECT orbit.app_user_id())
                AND (SELECT orbit.parent_family_member_ids()) <> '{}'
            )
        )
    );
CREATE POLICY rewards_update ON rewards FOR UPDATE TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND family_of = (SELECT orbit.app_user_id()))
    )
    WITH CHECK (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND family_of = (SELECT orbit.app_user_id()))
    );
CREATE POLICY reward_redemptions_update ON reward_redemptions FOR UPDATE TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[]))
    )
    WITH CHECK (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[]))
    );
CREATE POLICY points_ledger_insert ON points_ledger FOR INSERT TO orbit_app
    WITH CHECK (
        kind = 'adjustment' AND community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        AND created_by = (SELECT orbit.app_user_id())
    );

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger, points_accounts
FROM orbit_app, orbit_admin;
-- Unassign a chore: a hard delete.
GRANT SELECT, INSERT ON chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger TO orbit_app;
GRANT DELETE ON chore_assignees, chores TO orbit_app;
GRANT SELECT ON points_accounts TO orbit_app;
GRANT UPDATE (title, description, points, difficulty, category, due_at, recurrence_rule, recurrence_timezone, requires_approval, archived_at,
    completion_window_days, recurrence_ends_at, requires_photo)
    ON chores TO orbit_app;
GRANT UPDATE (status, reviewed_by, reviewed_at) ON chore_completions TO orbit_app;
GRANT UPDATE (title, description, points_cost, available, stock, archived_at) ON rewards TO orbit_app;
GRANT UPDATE (status, resolved_by, resolved_at) ON reward_redemptions TO orbit_app;
GRANT ALL ON chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger, points_accounts TO orbit_admin;
REVOKE ALL ON SEQUENCE points_ledger_seq_seq FROM orbit_app, orbit_admin;
-- The ledger's order (points_ledger.seq): adjustments are inserted as orbit_app.
GRANT USAGE ON SEQUENCE points_ledger_seq_seq TO orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION orbit.chore_clear_recurrence_end(), orbit.points_ledger_immutable(), orbit.points_account_check()
FROM PUBLIC, orbit_app, orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.child_chore_ids(), orbit.parent_chore_ids(), orbit.chore_require_holder(uuid, uuid, uuid), orbit.chore_check_assignee(), orbit.chore_check_completion(),
    orbit.chore_check_review(), orbit.chore_after_completion(), orbit.reward_check_redemption(), orbit.reward_check_resolution(),
    orbit.reward_after_redemption(), orbit.points_apply_entry()
FROM PUBLIC, orbit_app;
-- The signed-in child's chores, and the chores a parent sets for their own children, read by the
-- policies as the querying role.
GRANT EXECUTE ON FUNCTION orbit.child_chore_ids(), orbit.parent_chore_ids() TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.chore_clear_recurrence_end(), orbit.points_ledger_immutable(), orbit.points_account_check() TO orbit_admin;
GRANT EXECUTE ON FUNCTION
    orbit.child_chore_ids(), orbit.parent_chore_ids(), orbit.chore_require_holder(uuid, uuid, uuid), orbit.chore_check_assignee(), orbit.chore_check_completion(),
    orbit.chore_check_review(), orbit.chore_after_completion(), orbit.reward_check_redemption(), orbit.reward_check_resolution(),
    orbit.reward_after_redemption(), orbit.points_apply_entry()
TO orbit_admin;
