-- Transactions, splits, dues and dues payments (spec: "Transactions (Finances)" onwards).
--
-- Money is integer minor units (cents) plus an ISO 4217 code. Differences from the draft DDL:
-- * total_amount, dues.amount and amount_paid are positive, split amounts non-negative; the
--   draft accepts negative and zero totals.
-- * currency is NOT NULL and three upper-case letters (the draft's VARCHAR(3) takes NULL,
--   'usd' or '$$'); dues gets a currency column, as DESIGN.md asks.
-- * splits and dues_payments carry community_id, filled from their parent by trigger and tied
--   to it by a composite foreign key: no split on a transaction of another community.
-- * the sum of a transaction's splits equals its total_amount, checked at commit by a deferred
--   constraint trigger (sql/060), also after a split is updated or deleted.
-- * split users and payers are (or were) members of the transaction's community (sql/030).
-- * splits get updated_at, so balances can say when they last changed.

CREATE TABLE transactions (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    created_by UUID NOT NULL REFERENCES users(id),
    type transaction_type NOT NULL,
    description VARCHAR(500) NOT NULL,
    total_amount INTEGER NOT NULL CHECK (total_amount > 0), -- cents
    currency VARCHAR(3) NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    paid_by UUID NOT NULL REFERENCES users(id),
    category expense_category NOT NULL DEFAULT 'other',
    receipt_url VARCHAR(500),
    linked_event_id UUID,
    transaction_date DATE NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    deleted_at TIMESTAMP WITH TIME ZONE,

    CONSTRAINT transactions_id_community_key UNIQUE (id, community_id),
    CONSTRAINT transactions_linked_event_fkey FOREIGN KEY (linked_event_id, community_id)
        REFERENCES events(id, community_id) ON DELETE SET NULL (linked_event_id)
);

CREATE INDEX idx_transactions_community ON transactions(community_id, created_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX idx_transactions_community_all ON transactions(community_id);
CREATE INDEX idx_transactions_paid_by ON transactions(paid_by);
CREATE INDEX idx_transactions_created_by ON transactions(created_by);

CREATE TABLE splits (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    transaction_id UUID NOT NULL,
    user_id UUID NOT NULL REFERENCES users(id),
    amount INTEGER NOT NULL CHECK (amount >= 0), -- cents
    is_settled BOOLEAN NOT NULL DEFAULT FALSE,
    settled_at TIMESTAMP WITH TIME ZONE,
    settled_via VARCHAR(50),
    community_id UUID NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),

    CONSTRAINT splits_transaction_fkey FOREIGN KEY (transaction_id, community_id)
        REFERENCES transactions(id, community_id) ON DELETE CASCADE
);

CREATE INDEX idx_splits_transaction ON splits(transaction_id);
CREATE INDEX idx_splits_user_unsettled ON splits(user_id) WHERE is_settled = FALSE;
CREATE INDEX idx_splits_community ON splits(community_id);

CREATE TABLE dues (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    name VARCHAR(200) NOT NULL,
    amount INTEGER NOT NULL CHECK (amount > 0), -- cents
    due_date DATE NOT NULL,
    is_active BOOLEAN NOT NULL DEFAULT TRUE,
    created_by UUID NOT NULL REFERENCES users(id),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    currency VARCHAR(3) NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),

    CONSTRAINT dues_id_community_key UNIQUE (id, community_id)
);

CREATE INDEX idx_dues_community ON dues(community_id) WHERE is_active = TRUE;
CREATE INDEX idx_dues_community_all ON dues(community_id);

CREATE TABLE dues_payments (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    dues_id UUID NOT NULL,
    user_id UUID NOT NULL REFERENCES users(id),
    amount_paid INTEGER NOT NULL CHECK (amount_paid > 0), -- cents
    paid_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    recorded_by UUID NOT NULL REFERENCES users(id),
    payment_method VARCHAR(50),
    notes TEXT,
    community_id UUID NOT NULL,

    CONSTRAINT dues_payments_dues_fkey FOREIGN KEY (dues_id, community_id)
        REFERENCES dues(id, community_id) ON DELETE CASCADE
);

CREATE INDEX idx_dues_payments_dues ON dues_payments(dues_id);
CREATE INDEX idx_dues_payments_community ON dues_payments(community_id);
