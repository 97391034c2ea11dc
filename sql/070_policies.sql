-- Row-level security policies (docs/architecture.md, "Tenancy and security"). They apply to orbit_app;
-- orbit_admin bypasses them, and any other role has no table rights at all (sql/090).
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
-- This file owns every policy on the public schema: it drops them all and recreates them, so
-- a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN SELECT policyname, tablename FROM pg_catalog.pg_policies WHERE schemaname = 'public' LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- users
CREATE POLICY users_select ON users FOR SELECT TO orbit_app
    USING (id = ANY ((SELECT orbit.contact_user_ids())::uuid[]));
CREATE POLICY users_insert ON users FOR INSERT TO orbit_app
    WITH CHECK (id = (SELECT orbit.app_user_id()));
CREATE POLICY users_update ON users FOR UPDATE TO orbit_app
    USING (id = (SELECT orbit.app_user_id()))
    WITH CHECK (id = (SELECT orbit.app_user_id()));

-- family_members
CREATE POLICY family_members_select ON family_members FOR SELECT TO orbit_app
    USING (user_id = ANY ((SELECT orbit.contact_user_ids())::uuid[]));
CREATE POLICY family_members_write ON family_members FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- communities: anyone signed in may create one (as its creator); admins update it, including
-- the soft delete (the service narrows that to the creator, per the permission matrix).
CREATE POLICY communities_select ON communities FOR SELECT TO orbit_app
    USING (id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY communities_insert ON communities FOR INSERT TO orbit_app
    WITH CHECK (created_by = (SELECT orbit.app_user_id()) AND deleted_at IS NULL);
CREATE POLICY communities_update ON communities FOR UPDATE TO orbit_app
    USING (id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));

-- members: admins add and change members; the creator of a new, still empty community adds
-- themselves as its first admin; a member edits their own row (nickname, preferences, leave).
-- Role changes by non-admins are refused by orbit.guard_member_role below.
CREATE POLICY members_select ON members FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY members_insert ON members FOR INSERT TO orbit_app
    WITH CHECK (
        community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        OR (user_id = (SELECT orbit.app_user_id()) AND role = 'admin' AND orbit.can_found(community_id))
    );
CREATE POLICY members_update ON members FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) OR user_id = (SELECT orbit.app_user_id()));

-- invites: admins only.
CREATE POLICY invites_admin ON invites FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));

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

-- posts: members post when the community allows it; announcements and pins are for admins.
CREATE POLICY posts_select ON posts FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY posts_insert ON posts FOR INSERT TO orbit_app
    WITH CHECK (
        author_id = (SELECT orbit.app_user_id())
        AND (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
             OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
                 AND type <> 'announcement' AND NOT is_announcement AND NOT is_pinned
                 AND orbit.community_allows(community_id, 'allowMemberPosts')))
    );
CREATE POLICY posts_update ON posts FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND author_id = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- reactions and poll votes: one's own.
CREATE POLICY reactions_select ON reactions FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY reactions_write ON reactions FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()));
CREATE POLICY poll_votes_select ON poll_votes FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY poll_votes_write ON poll_votes FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = (SELECT orbit.app_user_id()));

-- comments: members comment as themselves; the author or an admin edits (soft-deletes).
CREATE POLICY comments_select ON comments FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY comments_insert ON comments FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND author_id = (SELECT orbit.app_user_id()));
CREATE POLICY comments_update ON comments FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND author_id = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- transactions: members log them as themselves; the creator or an admin edits them.
CREATE POLICY transactions_select ON transactions FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY transactions_insert ON transactions FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));
CREATE POLICY transactions_update ON transactions FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- splits: written with their transaction, by members of its community.
CREATE POLICY splits_select ON splits FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY splits_write ON splits FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- money_activity (money's history): every member reads it; a member writes rows as themselves,
-- and fills in `after` only of their own rows written in this very transaction.
CREATE POLICY money_activity_select ON money_activity FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY money_activity_insert ON money_activity FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND actor_id = (SELECT orbit.app_user_id()));
CREATE POLICY money_activity_update ON money_activity FOR UPDATE TO orbit_app
    USING (actor_id = (SELECT orbit.app_user_id()) AND created_at = now())
    WITH CHECK (actor_id = (SELECT orbit.app_user_id()));

-- transaction_payers: written with their transaction, like splits.
CREATE POLICY transaction_payers_select ON transaction_payers FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY transaction_payers_write ON transaction_payers FOR ALL TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- dues and dues payments: members read, admins write.
CREATE POLICY dues_select ON dues FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY dues_insert ON dues FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));
CREATE POLICY dues_update ON dues FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY dues_payments_select ON dues_payments FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY dues_payments_insert ON dues_payments FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND recorded_by = (SELECT orbit.app_user_id()));
CREATE POLICY dues_payments_change ON dues_payments FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY dues_payments_delete ON dues_payments FOR DELETE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
-- dues_attendees (dues per attendee): members read, admins write them with the dues.
CREATE POLICY dues_attendees_select ON dues_attendees FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY dues_attendees_insert ON dues_attendees FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));

-- recurring charges: members read; a member sets up a recurring expense as themselves, an admin
-- recurring dues; its creator (while a member) or an admin pauses, skips, resumes or ends it,
-- dues' only an admin. Never deleted (ended instead): their occurrences point at them.
CREATE POLICY recurring_charges_select ON recurring_charges FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY recurring_charges_insert ON recurring_charges FOR INSERT TO orbit_app
    WITH CHECK (created_by = (SELECT orbit.app_user_id())
                AND community_id = ANY ((CASE kind WHEN 'dues' THEN (SELECT orbit.admin_community_ids())
                                                   ELSE (SELECT orbit.member_community_ids()) END)::uuid[]));
CREATE POLICY recurring_charges_update ON recurring_charges FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (kind = 'expense' AND created_by = (SELECT orbit.app_user_id())
               AND community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- exchange rates: the reference rates (community_id NULL, imported by operators) are everyone's;
-- a community's own are its members', entered by its admins as themselves.
CREATE POLICY exchange_rates_select ON exchange_rates FOR SELECT TO orbit_app
    USING (community_id IS NULL OR community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY exchange_rates_insert ON exchange_rates FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND entered_by = (SELECT orbit.app_user_id()));
CREATE POLICY exchange_rates_update ON exchange_rates FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND entered_by = (SELECT orbit.app_user_id()));

-- media: members upload as themselves; the uploader or an admin removes.
CREATE POLICY media_select ON media FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY media_insert ON media FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND uploaded_by = (SELECT orbit.app_user_id()));
CREATE POLICY media_change ON media FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND uploaded_by = (SELECT orbit.app_user_id())))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY media_delete ON media FOR DELETE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND uploaded_by = (SELECT orbit.app_user_id())));

-- notifications: read and mark one's own; a member may notify people of a shared community.
CREATE POLICY notifications_own ON notifications FOR SELECT TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY notifications_update ON notifications FOR UPDATE TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY notifications_delete ON notifications FOR DELETE TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()));
CREATE POLICY notifications_insert ON notifications FOR INSERT TO orbit_app
    WITH CHECK (
        (community_id IS NULL AND user_id = (SELECT orbit.app_user_id()))
        OR (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND user_id = ANY ((SELECT orbit.contact_user_ids())::uuid[]))
    );

-- refresh tokens: one's own.
CREATE POLICY refresh_tokens_own ON refresh_tokens FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- devices (APNs tokens): one's own; registering one that another user had goes through
-- orbit.register_device.
CREATE POLICY devices_own ON devices FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- idempotency keys: one's own.
CREATE POLICY idempotency_keys_own ON idempotency_keys FOR ALL TO orbit_app
    USING (user_id = (SELECT orbit.app_user_id()))
    WITH CHECK (user_id = (SELECT orbit.app_user_id()));

-- changes (the sync feed's log): the changes of one's active communities, and of entities only
-- one user may see (notifications) only that user's; chat's only the conversation's participants'
-- (and the end of one's participation, only one's own). Written only by the trigger (sql/085).
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

-- live connections (presence): servers only (orbit_admin); people see presence through
-- orbit.presence(), which applies who may see it. No policy for orbit_app: nothing.

-- audit log: admins read their community's; anyone records their own actions, in a community
-- they belong or belonged to (leaving is logged after the leave).
CREATE POLICY audit_log_select ON audit_log FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY audit_log_insert ON audit_log FOR INSERT TO orbit_app
    WITH CHECK (
        user_id = (SELECT orbit.app_user_id())
        AND (community_id IS NULL OR community_id = ANY ((SELECT orbit.joined_community_ids())::uuid[]))
    );

-- chat (sql/057_chat.sql): only the people taking part read or write a conversation — active
-- participants who are active members of its community. A group's or direct conversation's
-- starter adds (and removes) its people; everyone updates their own participation (watermarks,
-- mute, leaving); a message is written by its sender, and an admin may delete one in the
-- community conversation.
CREATE POLICY conversations_select ON conversations FOR SELECT TO orbit_app
    USING (id = ANY ((SELECT orbit.conversation_ids())::uuid[]));
CREATE POLICY conversations_insert ON conversations FOR INSERT TO orbit_app
    WITH CHECK (
        created_by = (SELECT orbit.app_user_id()) AND kind IN ('group', 'direct')
        AND community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
    );
CREATE POLICY conversations_update ON conversations FOR UPDATE TO orbit_app
    USING (id = ANY ((SELECT orbit.conversation_ids())::uuid[]) AND kind = 'group')
    WITH CHECK (id = ANY ((SELECT orbit.conversation_ids())::uuid[]) AND kind = 'group');
CREATE POLICY conversation_participants_select ON conversation_participants FOR SELECT TO orbit_app
    USING (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]));
CREATE POLICY conversation_participants_insert ON conversation_participants FOR INSERT TO orbit_app
    WITH CHECK (conversation_id = ANY ((SELECT orbit.started_conversation_ids(false))::uuid[]));
CREATE POLICY conversation_participants_update ON conversation_participants FOR UPDATE TO orbit_app
    USING (
        conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[])
        AND (user_id = (SELECT orbit.app_user_id()) OR conversation_id = ANY ((SELECT orbit.started_conversation_ids(true))::uuid[]))
    )
    WITH CHECK (user_id = (SELECT orbit.app_user_id()) OR conversation_id = ANY ((SELECT orbit.started_conversation_ids(true))::uuid[]));
CREATE POLICY messages_select ON messages FOR SELECT TO orbit_app
    USING (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]));
CREATE POLICY messages_insert ON messages FOR INSERT TO orbit_app
    WITH CHECK (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]) AND sender_id = (SELECT orbit.app_user_id()));
CREATE POLICY messages_update ON messages FOR UPDATE TO orbit_app
    USING (
        conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[])
        AND (sender_id = (SELECT orbit.app_user_id())
             OR (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
                 AND EXISTS (SELECT FROM conversations c WHERE c.id = conversation_id AND c.kind = 'community')))
    )
    WITH CHECK (conversation_id = ANY ((SELECT orbit.conversation_ids())::uuid[]));

-- chores, rewards and points (sql/058_chores.sql): a community's members see its chores,
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
CREATE POLICY chore_assignees_select ON chore_assignees FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR (family_member_id = (SELECT orbit.app_child_id()) AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]))
    );
CREATE POLICY chore_assignees_insert ON chore_assignees FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY chore_assignees_delete ON chore_assignees FOR DELETE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY chore_completions_select ON chore_completions FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR (family_member_id = (SELECT orbit.app_child_id()) AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]))
    );
CREATE POLICY chore_completions_insert ON chore_completions FOR INSERT TO orbit_app
    WITH CHECK (
        (
            community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND recorded_by = (SELECT orbit.app_user_id())
            AND (
                user_id = (SELECT orbit.app_user_id())
                OR family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[])
                OR (family_member_id IS NOT NULL AND community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
            )
        )
        OR (
            recorded_by IS NULL AND family_member_id = (SELECT orbit.app_child_id())
            AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[])
        )
    );
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
CREATE POLICY reward_redemptions_select ON reward_redemptions FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR (family_member_id = (SELECT orbit.app_child_id()) AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]))
    );
CREATE POLICY reward_redemptions_insert ON reward_redemptions FOR INSERT TO orbit_app
    WITH CHECK (
        (
            community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND requested_by = (SELECT orbit.app_user_id())
            AND (
                user_id = (SELECT orbit.app_user_id())
                OR family_member_id = ANY ((SELECT orbit.parent_family_member_ids())::uuid[])
                OR (family_member_id IS NOT NULL AND community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
            )
        )
        OR (
            requested_by IS NULL AND family_member_id = (SELECT orbit.app_child_id())
            AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[])
        )
    );
CREATE POLICY reward_redemptions_update ON reward_redemptions FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]));
CREATE POLICY points_ledger_select ON points_ledger FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR (family_member_id = (SELECT orbit.app_child_id()) AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]))
    );
CREATE POLICY points_ledger_insert ON points_ledger FOR INSERT TO orbit_app
    WITH CHECK (
        kind = 'adjustment' AND community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
        AND created_by = (SELECT orbit.app_user_id())
    );
CREATE POLICY points_accounts_select ON points_accounts FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])
        OR (family_member_id = (SELECT orbit.app_child_id()) AND community_id = ANY ((SELECT orbit.child_community_ids())::uuid[]))
    );

-- Only admins change roles: a member's UPDATE policy lets them edit their own row, and a
-- policy cannot compare old and new values, so this trigger does. It limits orbit_app only:
-- orbit_admin (operators) bypasses row-level security by design.
CREATE OR REPLACE FUNCTION orbit.guard_member_role() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF current_user = 'orbit_app' AND NOT (NEW.community_id = ANY (orbit.admin_community_ids())) THEN
        RAISE EXCEPTION 'only an admin of the community can change member roles'
            USING ERRCODE = 'insufficient_privilege', TABLE = 'members';
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS trigger_members_role ON members;
CREATE TRIGGER trigger_members_role BEFORE UPDATE OF role ON members FOR EACH ROW
    WHEN (NEW.role IS DISTINCT FROM OLD.role)
    EXECUTE FUNCTION orbit.guard_member_role();

-- A signed-in child's device syncs its chores, completions, rewards, redemptions and points
-- (issue 38; docs/sync.md): the log of those, in the one community its device reaches. Which
-- rows of each the child may read is their tables' own policies' to say.
CREATE POLICY changes_select_child ON changes FOR SELECT TO orbit_app
    USING (
        community_id = ANY ((SELECT orbit.child_community_ids())::uuid[])
        AND entity IN ('chore', 'chore_completion', 'reward', 'reward_redemption', 'points')
        AND user_id IS NULL AND conversation_id IS NULL
    );
