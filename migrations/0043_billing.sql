-- Billing (issue 41, docs/money.md "Subscriptions"): what the payment providers told us, applied
-- once each. Only the server writes here (as orbit_admin, after it verified the provider's
-- signature); orbit_app sees none of it.

-- Every provider event received, by the provider's own id: a redelivery finds its row and is
-- not applied again.
CREATE TABLE billing_events (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    provider TEXT NOT NULL CHECK (provider IN ('stripe', 'app_store')),
    event_id TEXT NOT NULL CHECK (length(event_id) BETWEEN 1 AND 255),
    event_type TEXT NOT NULL CHECK (length(event_type) BETWEEN 1 AND 255),
    -- The provider's time of the event (Stripe's `created`): the order events are applied in.
    event_created TIMESTAMP WITH TIME ZONE NOT NULL,
    subscription_id TEXT,
    community_id UUID REFERENCES communities(id) ON DELETE SET NULL,
    -- applied: it changed what it names; stale: an event newer for the same subscription was
    -- applied before it; ignored: a type we do not act on, or nothing of ours it names.
    outcome TEXT NOT NULL CHECK (outcome IN ('applied', 'stale', 'ignored')),
    received_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    UNIQUE (provider, event_id)
);

CREATE INDEX idx_billing_events_community ON billing_events (community_id, received_at DESC);

-- Each provider subscription we know, with the time of the newest event applied to it: an older
-- event that arrives later changes nothing.
CREATE TABLE billing_subscriptions (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    provider TEXT NOT NULL CHECK (provider IN ('stripe', 'app_store')),
    subscription_id TEXT NOT NULL CHECK (length(subscription_id) BETWEEN 1 AND 255),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    status subscription_status NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE,
    last_event_created TIMESTAMP WITH TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    UNIQUE (provider, subscription_id)
);

CREATE INDEX idx_billing_subscriptions_community ON billing_subscriptions (community_id);

ALTER TABLE billing_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE billing_events FORCE ROW LEVEL SECURITY;
ALTER TABLE billing_subscriptions ENABLE ROW LEVEL SECURITY;
ALTER TABLE billing_subscriptions FORCE ROW LEVEL SECURITY;
