-- Getting paid back (docs/money.md, "Getting paid back"): Settle Up's paymentHandles,
-- bankAccount and lightningAddress, one of each kind per user, read by the people who share a
-- community with them; and Settle Up's paymentProviders, kept by operators, whose link templates
-- turn a settle-up suggestion and the payee's handle into a link the payer taps.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';

CREATE TYPE payment_handle_kind AS ENUM (
    'revolut', 'paypal_me', 'venmo', 'cash_app', 'upi', 'iban', 'czech_account', 'lightning', 'text'
);

CREATE TABLE payment_handles (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind payment_handle_kind NOT NULL,
    -- The handle as the service normalized it (an IBAN without spaces, a Cash App tag without
    -- its $); its format per kind is the service's (PaymentHandles).
    handle TEXT NOT NULL CHECK (char_length(handle) BETWEEN 1 AND 500),
    -- An IBAN's BIC (optional in SEPA) and holder (the EPC QR code's beneficiary).
    bic TEXT CHECK (bic ~ '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$'),
    holder TEXT CHECK (char_length(holder) BETWEEN 1 AND 70),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT payment_handles_one_per_kind UNIQUE (user_id, kind),
    CONSTRAINT payment_handles_bank_only CHECK (kind = 'iban' OR (bic IS NULL AND holder IS NULL)),
    CONSTRAINT payment_handles_iban_holder CHECK (kind <> 'iban' OR holder IS NOT NULL)
);
ALTER TABLE payment_handles ENABLE ROW LEVEL SECURITY;
ALTER TABLE payment_handles FORCE ROW LEVEL SECURITY;

CREATE TYPE payment_amount_format AS ENUM ('minor', 'decimal');
CREATE TYPE payment_payload AS ENUM ('link', 'epc_qr', 'spayd');

CREATE TABLE payment_providers (
    -- A short name, the settlement's method when paid through it (revolut, paypal_me, upi).
    id TEXT PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
    name TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 60),
    -- An https address of its icon.
    icon TEXT CHECK (icon ~ '^https://[^[:space:]]+$' AND char_length(icon) <= 508),
    -- Which of a payee's handles it pays.
    handle_kind payment_handle_kind NOT NULL,
    -- A link from a template, or a bank payment's QR payload (EPC for SEPA, SPAYD for Czech banks).
    payload payment_payload NOT NULL DEFAULT 'link',
    -- With {handle}, and any of {amount}, {currency}, {note} and {name} (the payee's name).
    link_template TEXT CHECK (char_length(link_template) BETWEEN 1 AND 1000),
    -- What the app shows before the handle's field (revolut.me/, $).
    handle_prefix TEXT NOT NULL DEFAULT '' CHECK (char_length(handle_prefix) <= 60),
    amount_format payment_amount_format NOT NULL DEFAULT 'decimal',
    -- ISO 4217 codes it pays in, ISO 3166-1 regions and platforms it is offered on; empty: any.
    currencies TEXT[] NOT NULL DEFAULT '{}',
    regions TEXT[] NOT NULL DEFAULT '{}',
    platforms TEXT[] NOT NULL DEFAULT '{}',
    active BOOLEAN NOT NULL DEFAULT true,
    sort_order INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT payment_providers_template CHECK ((payload = 'link') = (link_template IS NOT NULL)),
    CONSTRAINT payment_providers_currencies CHECK (array_position(currencies, NULL) IS NULL
        AND array_to_string(currencies, ',') ~ '^([A-Z]{3}(,[A-Z]{3})*)?$'),
    CONSTRAINT payment_providers_regions CHECK (array_position(regions, NULL) IS NULL
        AND array_to_string(regions, ',') ~ '^([A-Z]{2}(,[A-Z]{2})*)?$'),
    CONSTRAINT payment_providers_platforms CHECK (array_position(platforms, NULL) IS NULL AND platforms <@ ARRAY['ios', 'android', 'web'])
);
ALTER TABLE payment_providers ENABLE ROW LEVEL SECURITY;
ALTER TABLE payment_providers FORCE ROW LEVEL SECURITY;
-- The app's list: the active ones in order (its policy reads active).
CREATE INDEX payment_providers_active ON payment_providers (active, sort_order, id);
