-- Guests (issue 54, item 1; docs/money.md "Guests"): people without an account in a community's
-- money, as One By Two's isGuest/guestName and Settle Up's members who are not users.
--
-- A guest is a user row that nobody signs in as (is_guest) and a member row of exactly one
-- community: every money rule keyed by user (splits, payers, the journal, balances, who owes
-- whom, settle-up, the export) takes guests as they are. A guest's Apple id is 'guest.' and the
-- row's own id, which no Apple account has, and the sign-in never looks at guests.
--
-- A guest is invited by a link made for them (invites.guest_member_id). The user who joins
-- through it claims the guest: the guest's splits, payments and settlements become that user's
-- (sql/120_invites.sql, orbit.redeem_invite), and the guest's user row records who
-- (claimed_by) and is closed (deleted_at).
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- Constant defaults and NULL columns change only the catalog (PostgreSQL 11 and later).
ALTER TABLE users ADD COLUMN is_guest BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN claimed_by UUID;
-- NOT VALID: no row has a value yet, so there is nothing to scan for; new rows are checked.
ALTER TABLE users ADD CONSTRAINT users_claimed_by_fkey FOREIGN KEY (claimed_by) REFERENCES users(id) ON DELETE SET NULL NOT VALID;
-- Only a guest is claimed; a guest's Apple id is its own, never an Apple account's.
ALTER TABLE users ADD CONSTRAINT users_guest_identity
    CHECK ((NOT is_guest AND claimed_by IS NULL) OR (is_guest AND apple_id = 'guest.' || id::text)) NOT VALID;

ALTER TABLE invites ADD COLUMN guest_member_id UUID;
ALTER TABLE invites ADD CONSTRAINT invites_guest_member_fkey FOREIGN KEY (guest_member_id) REFERENCES members(id) ON DELETE CASCADE NOT VALID;
-- No index for the cascade: members are deleted only with their community, whose invites go
-- with it by their own key.
