-- Two parents (docs/chores.md, "Guardians"): a child (a family member) has one or more guardians.
-- family_guardians holds them all, the guardian of record (family_members.user_id, who owes the
-- child's shares and whose family the child is listed in) included, and the invitations not
-- accepted yet (accepted_at NULL). A guardian invites a co-parent, who accepts.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
CREATE TABLE family_guardians (
    family_member_id UUID NOT NULL REFERENCES family_members (id) ON DELETE CASCADE,
    -- Accounts are anonymized, never deleted (LifecycleService), so no ON DELETE.
    user_id UUID NOT NULL REFERENCES users (id),
    invited_by UUID REFERENCES users (id),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- NULL: invited, not a guardian yet.
    accepted_at TIMESTAMPTZ,
    PRIMARY KEY (family_member_id, user_id)
);
-- A user's guardianships and invitations (the policies filter on it), and the inviter's key.
CREATE INDEX family_guardians_user ON family_guardians (user_id);
CREATE INDEX family_guardians_invited_by ON family_guardians (invited_by);
ALTER TABLE family_guardians ENABLE ROW LEVEL SECURITY;
ALTER TABLE family_guardians FORCE ROW LEVEL SECURITY;

-- Every family member there is has their one guardian so far: the user who added them.
INSERT INTO family_guardians (family_member_id, user_id, invited_by, created_at, accepted_at)
SELECT f.id, f.user_id, f.user_id, f.created_at, f.created_at FROM family_members f;

-- A child's share in an expense, and a parent's answer for the child to an event, are a
-- guardian's: the pair (family_member_id, user_id) now names a guardian, not the guardian of
-- record. So a change of the guardian of record leaves what the former one owes or answered with
-- them, and new shares go to the new one (ExpenseService writes the guardian of record). A
-- guardian who leaves keeps their shares as plain shares of their own (SET NULL on the family
-- member only, as for a removed child); their answers for the child go.
-- NOT VALID, with no VALIDATE: every pair the old key admitted is in family_guardians by the
-- INSERT above, in this transaction, so there is nothing to scan for; new rows are checked, and
-- the ON DELETE actions hold for every row, old ones too.
ALTER TABLE splits ADD CONSTRAINT splits_family_guardian_fkey FOREIGN KEY (family_member_id, user_id)
    REFERENCES family_guardians (family_member_id, user_id) ON DELETE SET NULL (family_member_id) NOT VALID;
ALTER TABLE rsvps ADD CONSTRAINT rsvps_family_guardian_fkey FOREIGN KEY (family_member_id, user_id)
    REFERENCES family_guardians (family_member_id, user_id) ON DELETE CASCADE NOT VALID;
-- squawk-ignore ban-drop-constraint
ALTER TABLE splits DROP CONSTRAINT splits_family_member_fkey;
-- squawk-ignore ban-drop-constraint
ALTER TABLE rsvps DROP CONSTRAINT rsvps_family_member_fkey;
