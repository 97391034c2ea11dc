-- What each role may touch (docs/architecture.md, "Tenancy and security"). This file owns orbit_app's
-- and orbit_admin's table rights: it revokes everything and grants exactly this list.
--
-- orbit_app gets what the service layer needs and nothing more: no DELETE where the spec soft
-- deletes (hard deletes are retention jobs, run as orbit_admin), no UPDATE of denormalized
-- counters or of who created what, nothing on schema_migrations or orbit_private.

REVOKE ALL ON ALL TABLES IN SCHEMA public FROM orbit_app, orbit_admin;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA orbit FROM PUBLIC, orbit_app;
REVOKE ALL ON SCHEMA orbit_private FROM orbit_app;

GRANT USAGE ON SCHEMA public, orbit TO orbit_app, orbit_admin;
GRANT USAGE ON SCHEMA orbit_private TO orbit_admin;

-- Functions policies and views call as the querying role.
GRANT EXECUTE ON FUNCTION
    orbit.app_user_id(), orbit.member_community_ids(), orbit.admin_community_ids(),
    orbit.joined_community_ids(), orbit.contact_user_ids(), orbit.can_found(uuid),
    orbit.community_allows(uuid, text), orbit.bump_count(jsonb, text, int), orbit.civil_date(timestamptz, text),
    orbit.conversation_ids(), orbit.started_conversation_ids(boolean),
    orbit.app_child_id(), orbit.app_child_device_id(), orbit.child_community_ids(), orbit.child_chore_ids(), orbit.parent_family_member_ids(),
    orbit.expense_state(uuid), orbit.currency_exponent(text), orbit.exchange_rate(uuid, text, text, date),
    orbit.convert(bigint, numeric, text, text), orbit.plain_split_fits(jsonb, bigint), orbit.split_input_fits(jsonb, bigint)
TO orbit_app, orbit_admin;

-- Operations a non-member must be able to perform, each checked inside the function.
GRANT EXECUTE ON FUNCTION orbit.redeem_invite(text), orbit.materialize_occurrence(uuid, timestamptz), orbit.register_device(text, text, text, text),
    orbit.changes_compacted_through(), orbit.presence(uuid[]), orbit.chat_push_recipients(uuid),
    orbit.set_child_pin(uuid, uuid, text), orbit.start_child_pairing(uuid, uuid, bytea, timestamptz),
    orbit.finish_child_pairing(bytea, bytea), orbit.child_sign_in(bytea, text), orbit.can_manage_child(uuid, uuid),
    orbit.child_devices_of(uuid, uuid), orbit.revoke_child_devices(uuid, uuid, uuid),
    orbit.client_create_match(uuid, bytea)
    TO orbit_app, orbit_admin;

GRANT SELECT ON
    users, family_members, communities, members, invites, events, rsvps, posts, reactions,
    comments, poll_votes, transactions, splits, transaction_payers, money_activity, recurring_charges, exchange_rates, dues, dues_payments, dues_attendees, dues_owed, media, notifications,
    audit_log, refresh_tokens, idempotency_keys, devices, balances, orbit.balance_entries, changes,
    conversations, conversation_participants, messages,
    chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger, points_accounts
TO orbit_app;

GRANT INSERT ON
    users, family_members, communities, members, invites, events, rsvps, posts, reactions,
    comments, poll_votes, transactions, splits, transaction_payers, money_activity, recurring_charges, exchange_rates, dues, dues_payments, dues_attendees, media, notifications,
    audit_log, refresh_tokens, idempotency_keys, devices, conversations, conversation_participants, messages,
    chores, chore_assignees, chore_completions, rewards, reward_redemptions, points_ledger
TO orbit_app;

GRANT UPDATE ON
    users, family_members, invites, events, rsvps, reactions, comments, poll_votes,
    transactions, splits, transaction_payers, dues, dues_payments, notifications, refresh_tokens, idempotency_keys, devices
TO orbit_app;
GRANT UPDATE (next_on, skipped, status, status_reason, updated_at) ON recurring_charges TO orbit_app;
GRANT UPDATE (rate, entered_by) ON exchange_rates TO orbit_app;
GRANT UPDATE (name, description, icon_url, settings, subscription_status, subscription_expires_at, deleted_at)
    ON communities TO orbit_app;
GRANT UPDATE (role, nickname, notification_prefs, joined_at, invited_by, left_at) ON members TO orbit_app;
GRANT UPDATE (type, content, media_urls, is_pinned, is_announcement, linked_event_id, poll_data, deleted_at, mentioned_user_ids)
    ON posts TO orbit_app;
GRANT UPDATE (title) ON conversations TO orbit_app;
GRANT UPDATE (after) ON money_activity TO orbit_app;
GRANT UPDATE (left_at, read_position, delivered_position, muted_until) ON conversation_participants TO orbit_app;
GRANT UPDATE (text, content_encrypted, encryption_version, edited_at, deleted_at) ON messages TO orbit_app;
GRANT UPDATE (title, description, points, difficulty, category, due_at, recurrence_rule, recurrence_timezone, requires_approval, archived_at,
    completion_window_days)
    ON chores TO orbit_app;
GRANT UPDATE (status, reviewed_by, reviewed_at) ON chore_completions TO orbit_app;
GRANT UPDATE (title, description, points_cost, available, stock) ON rewards TO orbit_app;
GRANT UPDATE (status, resolved_by, resolved_at) ON reward_redemptions TO orbit_app;

-- Hard deletes the product has: un-RSVP, un-react, withdraw a vote, replace an expense's
-- splits, revoke an invite, remove a family member, media or a payment record, clear
-- notifications, sign out, unassign a chore.
GRANT DELETE ON
    family_members, invites, rsvps, reactions, poll_votes, splits, transaction_payers, dues_payments, media,
    notifications, refresh_tokens, idempotency_keys, devices, chore_assignees
TO orbit_app;

-- The ledger's order (points_ledger.seq): adjustments are inserted as orbit_app.
GRANT USAGE ON SEQUENCE points_ledger_seq_seq TO orbit_app, orbit_admin;

-- orbit_admin: the operators' role (and owner of the SECURITY DEFINER functions).
GRANT ALL ON ALL TABLES IN SCHEMA public TO orbit_admin;
GRANT SELECT ON orbit.balance_entries TO orbit_admin;
GRANT SELECT, UPDATE ON orbit_private.change_horizon TO orbit_admin;
GRANT SELECT, INSERT, DELETE ON orbit_private.client_creates TO orbit_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA orbit TO orbit_admin;
