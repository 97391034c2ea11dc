-- Billing, issue 41's review (docs/money.md): an App Store purchase names its community by a
-- token the server issued to the community's creator (the app sets it as the purchase's
-- appAccountToken), never by the community's id, which any member knows; and a refund is kept
-- per payment, so that a refund that arrives before its payment's event still counts.

-- One token per community, issued to its creator (POST /communities/{id}/subscription/app-store-token).
CREATE TABLE billing_app_account_tokens (
    token UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL UNIQUE REFERENCES communities(id) ON DELETE CASCADE,
    issued_to UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

-- The most refunded of each provider payment (Stripe's charge.refunded carries the running
-- total): a payment recorded later is recorded less it.
CREATE TABLE billing_refunds (
    provider TEXT NOT NULL CHECK (provider IN ('stripe')),
    payment_id TEXT NOT NULL CHECK (length(payment_id) BETWEEN 1 AND 255),
    amount BIGINT NOT NULL CHECK (amount >= 0),
    refunded BIGINT NOT NULL CHECK (refunded >= 0),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, payment_id)
);

ALTER TABLE billing_app_account_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE billing_app_account_tokens FORCE ROW LEVEL SECURITY;
ALTER TABLE billing_refunds ENABLE ROW LEVEL SECURITY;
ALTER TABLE billing_refunds FORCE ROW LEVEL SECURITY;
