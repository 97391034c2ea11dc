-- Several payers, and family members in splits (issue 24, items 1–2; docs/money.md).
--
-- Several payers: an expense paid by more than one member lists them in transaction_payers,
-- amounts that add up to its total_amount (checked at commit, sql/060), one of them its
-- `paid_by` (the main payer, shown where one payer is expected). An expense with one payer has
-- no rows here: `paid_by` paid it all, as before.
--
-- Balances (sql/080) count a payer row (p, a) as p paying a on paid_by's behalf: +a for p, −a
-- for paid_by. paid_by's own row nets to zero, so with no split settled paid_by is credited
-- exactly their own amount, and each co-payer theirs. The split lines stay as they were
-- (+m for paid_by, −m for the split's user), so a settled split still removes exactly its two
-- lines, and no line depends on whether the expense has payer rows: the journal stays per row.
--
-- Family members in splits: a split may be "for" a family member (a child): it is owed by the
-- family member's guardian (`user_id`, who the family member belongs to), and shown as "for
-- Tim". The pair (family_member_id, user_id) references family_members(id, user_id), so the
-- split's debtor is always the child's guardian; a removed family member leaves the split with
-- the guardian (SET NULL on the family member only), as a plain share of theirs.

CREATE TABLE transaction_payers (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    transaction_id UUID NOT NULL,
    community_id UUID NOT NULL,
    user_id UUID NOT NULL REFERENCES users(id),
    amount INTEGER NOT NULL CHECK (amount > 0), -- cents
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),

    CONSTRAINT transaction_payers_transaction_fkey FOREIGN KEY (transaction_id, community_id)
        REFERENCES transactions(id, community_id) ON DELETE CASCADE,
    CONSTRAINT transaction_payers_once UNIQUE (transaction_id, user_id)
);

CREATE INDEX idx_transaction_payers_community ON transaction_payers(community_id);
CREATE INDEX idx_transaction_payers_user ON transaction_payers(user_id);

ALTER TABLE splits ADD COLUMN family_member_id UUID;
ALTER TABLE splits ADD CONSTRAINT splits_family_member_fkey FOREIGN KEY (family_member_id, user_id)
    REFERENCES family_members(id, user_id) ON DELETE SET NULL (family_member_id);
-- A family member has at most one share of a transaction. (The guardian's own share is not
-- unique: removing a child leaves their share with the guardian as a second plain share.)
CREATE UNIQUE INDEX splits_one_per_family_member ON splits (transaction_id, family_member_id) WHERE family_member_id IS NOT NULL;

ALTER TABLE transaction_payers ENABLE ROW LEVEL SECURITY;
ALTER TABLE transaction_payers FORCE ROW LEVEL SECURITY;
