-- Currencies (issue 24, item 5; docs/money.md): exchange rates, entered by a community's admins or
-- imported by an operator (the ECB's reference rates), and settlements that convert between
-- currencies at a rate recorded on them.

-- The minor-unit exponent of an ISO 4217 code (Currency.exponents in Swift; a test checks that
-- they agree): 2 unless listed.
CREATE OR REPLACE FUNCTION orbit.currency_exponent(code text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN code IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') THEN 0
        WHEN code IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 3
        WHEN code IN ('CLF', 'UYW') THEN 4
        ELSE 2
    END
$$;

-- 1 unit of `base` is `rate` units of `quote` on `rate_on`. A community's own rates (entered by
-- its admins) come first; the reference rates (community_id NULL: the ECB's, 1 EUR = rate units
-- of quote) are everyone's.
CREATE TABLE exchange_rates (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID REFERENCES communities(id) ON DELETE CASCADE,
    base VARCHAR(3) NOT NULL CHECK (base ~ '^[A-Z]{3}$'),
    quote VARCHAR(3) NOT NULL CHECK (quote ~ '^[A-Z]{3}$'),
    rate NUMERIC(24, 10) NOT NULL CHECK (rate > 0),
    rate_on DATE NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('admin', 'ecb')),
    entered_by UUID REFERENCES users(id),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),

    CONSTRAINT exchange_rates_two_currencies CHECK (base <> quote),
    CONSTRAINT exchange_rates_source CHECK (
        CASE source WHEN 'admin' THEN community_id IS NOT NULL AND entered_by IS NOT NULL
                    ELSE community_id IS NULL AND base = 'EUR' END)
);

CREATE UNIQUE INDEX exchange_rates_reference_day ON exchange_rates (base, quote, rate_on) WHERE community_id IS NULL;
CREATE UNIQUE INDEX exchange_rates_community_day ON exchange_rates (community_id, base, quote, rate_on) WHERE community_id IS NOT NULL;
CREATE INDEX idx_exchange_rates_community ON exchange_rates (community_id, rate_on DESC);
CREATE INDEX idx_exchange_rates_entered_by ON exchange_rates (entered_by);

ALTER TABLE exchange_rates ENABLE ROW LEVEL SECURITY;
ALTER TABLE exchange_rates FORCE ROW LEVEL SECURITY;

-- A settlement paid in one currency that settles a debt in another: `paid_amount` of
-- `paid_currency` changed hands; at `exchange_rate` (1 paid_currency = rate currency) it is
-- total_amount of the transaction's currency, rounded half away from zero to its minor unit
-- (PostgreSQL's round(numeric)): the one rounding rule of conversions.
ALTER TABLE transactions ADD COLUMN paid_amount INTEGER CHECK (paid_amount > 0);
ALTER TABLE transactions ADD COLUMN paid_currency VARCHAR(3) CHECK (paid_currency ~ '^[A-Z]{3}$');
ALTER TABLE transactions ADD COLUMN exchange_rate NUMERIC(24, 10) CHECK (exchange_rate > 0);
ALTER TABLE transactions ADD CONSTRAINT transactions_conversion CHECK (
    (paid_amount IS NULL AND paid_currency IS NULL AND exchange_rate IS NULL)
    OR (type = 'settlement' AND paid_amount IS NOT NULL AND paid_currency IS NOT NULL AND exchange_rate IS NOT NULL
        AND paid_currency <> currency
        AND total_amount = round(paid_amount * exchange_rate
                                 * power(10::numeric, orbit.currency_exponent(currency) - orbit.currency_exponent(paid_currency)))));
