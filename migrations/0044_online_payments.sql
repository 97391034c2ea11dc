-- Dues paid online (issue 41, item 2; docs/money.md "Dues paid online"): a payment recorded from
-- the payment provider carries the provider's id of it (Stripe's PaymentIntent), at most once, so
-- that a redelivered or second event for the same payment cannot record it twice; a refund
-- reverses it and money's history says so (action 'refunded'); an event the rules refuse (a
-- payment beyond what is still owed) is kept as 'refused', with why, and another event of a
-- payment already recorded (Stripe's async success after its completion) as 'duplicate'.
ALTER TABLE dues_payments ADD COLUMN provider_payment_id TEXT
    CHECK (length(provider_payment_id) BETWEEN 1 AND 255);
CREATE UNIQUE INDEX dues_payments_provider_payment_key ON dues_payments (provider_payment_id)
    WHERE provider_payment_id IS NOT NULL;

ALTER TABLE money_activity DROP CONSTRAINT money_activity_action_check;
ALTER TABLE money_activity ADD CONSTRAINT money_activity_action_check
    CHECK (action IN ('created', 'edited', 'deleted', 'settled', 'paid', 'refunded'));

ALTER TABLE billing_events DROP CONSTRAINT billing_events_outcome_check;
ALTER TABLE billing_events ADD CONSTRAINT billing_events_outcome_check
    CHECK (outcome IN ('applied', 'stale', 'ignored', 'refused', 'duplicate'));
ALTER TABLE billing_events ADD COLUMN detail TEXT;
