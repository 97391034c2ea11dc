-- Who hears about money (docs/money.md, "Who hears about money"): One By Two's expense_added,
-- expense_edited and settlement notifications, a deleted expense, and nudges: someone who is owed
-- asks someone who owes them, at most once a day per pair (the nudges kept to count that day).
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'expense_added' AFTER 'payment_disputed';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'expense_edited' AFTER 'expense_added';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'expense_deleted' AFTER 'expense_edited';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'settlement_recorded' AFTER 'expense_deleted';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'nudge' AFTER 'settlement_recorded';

CREATE TABLE nudges (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    -- Who asked (is owed), and whom (owes them).
    from_user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    to_user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT nudges_not_oneself CHECK (from_user_id <> to_user_id)
);
-- The last nudge of a pair (the day's limit), the sender's own (policies, the account's removal),
-- and the recipient's (policies, the account's removal).
CREATE INDEX nudges_pair ON nudges (community_id, from_user_id, to_user_id, created_at DESC);
CREATE INDEX nudges_from ON nudges (from_user_id);
CREATE INDEX nudges_to ON nudges (to_user_id);
ALTER TABLE nudges ENABLE ROW LEVEL SECURITY;
ALTER TABLE nudges FORCE ROW LEVEL SECURITY;
