-- The provider payment an event is about (Stripe's PaymentIntent), so that a payment the rules
-- refused can be given back when its event comes again (issue 41, docs/money.md "Dues paid
-- online").
ALTER TABLE billing_events ADD COLUMN payment_id TEXT CHECK (length(payment_id) BETWEEN 1 AND 255);
