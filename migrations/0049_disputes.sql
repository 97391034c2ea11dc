-- Disputes (issue 52, item 2; docs/money.md "Disputes"): a card payment the payer disputes with
-- their bank. Stripe's charge.dispute.* events are kept per dispute as facts that only ever become
-- true (opened, funds withdrawn, won, lost), so that the events apply once each and end the same
-- in any order; what a dues payment counts follows from them and from its refunds:
--   the charge as recorded, less what was refunded, less each dispute that took the money
--   (funds withdrawn or lost) and did not give it back (won, funds reinstated).

-- The treasurer hears of a dispute (and of its outcome).
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'payment_disputed';

-- Each provider payment recorded for dues, as it was recorded: what a dispute that is won puts
-- back. (The payments recorded before this migration: their charge is the refund's record of it,
-- else what is recorded.)
CREATE TABLE billing_payments (
    provider TEXT NOT NULL CHECK (provider IN ('stripe')),
    payment_id TEXT NOT NULL CHECK (length(payment_id) BETWEEN 1 AND 255),
    dues_payment_id UUID NOT NULL,
    dues_id UUID NOT NULL REFERENCES dues(id) ON DELETE CASCADE,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- The charge, in ISO 4217 minor units of the dues' currency.
    amount BIGINT NOT NULL CHECK (amount > 0),
    recorded_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, payment_id)
);
INSERT INTO billing_payments (provider, payment_id, dues_payment_id, dues_id, user_id, amount)
SELECT 'stripe', p.provider_payment_id, p.id, p.dues_id, p.user_id, coalesce(r.amount, p.amount_paid)
FROM dues_payments p LEFT JOIN billing_refunds r ON r.provider = 'stripe' AND r.payment_id = p.provider_payment_id
WHERE p.provider_payment_id IS NOT NULL;

-- Each dispute, by the provider's id, with its facts.
CREATE TABLE billing_disputes (
    provider TEXT NOT NULL CHECK (provider IN ('stripe')),
    dispute_id TEXT NOT NULL CHECK (length(dispute_id) BETWEEN 1 AND 255),
    payment_id TEXT NOT NULL CHECK (length(payment_id) BETWEEN 1 AND 255),
    -- What is disputed, in ISO 4217 minor units.
    amount BIGINT NOT NULL CHECK (amount > 0),
    -- charge.dispute.funds_withdrawn (or closed lost): the money left the account.
    withdrawn BOOLEAN NOT NULL DEFAULT false,
    -- charge.dispute.closed won (or funds_reinstated): it came back, or never left.
    won BOOLEAN NOT NULL DEFAULT false,
    -- charge.dispute.closed lost: it is gone for good.
    lost BOOLEAN NOT NULL DEFAULT false,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, dispute_id)
);
CREATE INDEX idx_billing_disputes_payment ON billing_disputes (provider, payment_id);

ALTER TABLE billing_payments ENABLE ROW LEVEL SECURITY;
ALTER TABLE billing_payments FORCE ROW LEVEL SECURITY;
ALTER TABLE billing_disputes ENABLE ROW LEVEL SECURITY;
ALTER TABLE billing_disputes FORCE ROW LEVEL SECURITY;

-- A payment under dispute says so: open (the bank is deciding; the money still counts),
-- funds_withdrawn (taken off what the member paid, as a refund is), lost (for good), won (back).
-- Only a provider's payment can be disputed. A payment all of whose money a dispute took stays,
-- at 0, so that the treasurer sees what became of it (a refund in full removes its payment).
ALTER TABLE dues_payments ADD COLUMN dispute_status TEXT
    CHECK (dispute_status IN ('open', 'funds_withdrawn', 'lost', 'won'));
ALTER TABLE dues_payments ADD CONSTRAINT dues_payments_dispute_is_the_providers
    CHECK (dispute_status IS NULL OR provider_payment_id IS NOT NULL);
ALTER TABLE dues_payments DROP CONSTRAINT dues_payments_amount_paid_check;
ALTER TABLE dues_payments ADD CONSTRAINT dues_payments_amount_paid_check
    CHECK (amount_paid > 0 OR amount_paid = 0 AND coalesce(dispute_status IN ('funds_withdrawn', 'lost'), false));

ALTER TABLE money_activity DROP CONSTRAINT money_activity_action_check;
ALTER TABLE money_activity ADD CONSTRAINT money_activity_action_check
    CHECK (action IN ('created', 'edited', 'deleted', 'settled', 'paid', 'refunded', 'disputed', 'dispute_lost', 'dispute_won'));
