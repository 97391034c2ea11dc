-- Itemised expenses (issue 24, item 3; docs/money.md, "Itemised expenses"): a split as entered
-- may be `items` — each item with its amount and its own split, plus tax and tip shared in
-- proportion to what each participant's items come to. It lives in the same JSON as every
-- split as entered (transactions.split_input, recurring_charges.split), and the database checks
-- that it fits its amount, whatever wrote it:
-- * exact parts add up to the amount, percentages to 100% (10000), shares are positive, every
--   method names someone;
-- * items: at least one, each more than zero with a split (not items) that fits it, tax and tip
--   zero or more, and items + tax + tip = the total.
-- The splits themselves still add up to the total at commit (sql/060).

-- A split that is not itemised fits `amount`. NULL-safe: anything missing (a part without its
-- value, an item without its amount) does not fit (bool_and and sum would skip NULLs).
CREATE OR REPLACE FUNCTION orbit.plain_split_fits(split jsonb, amount bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT (
    jsonb_typeof(split -> 'parts') = 'array' AND jsonb_array_length(split -> 'parts') > 0
    AND CASE split ->> 'method'
        WHEN 'equal' THEN true
        WHEN 'exact' THEN (SELECT bool_and(coalesce((p ->> 'value')::bigint >= 0, false)) AND sum((p ->> 'value')::bigint) = amount
                           FROM jsonb_array_elements(split -> 'parts') p)
        WHEN 'percent' THEN (SELECT bool_and(coalesce((p ->> 'value')::bigint >= 0, false)) AND sum((p ->> 'value')::bigint) = 10000
                             FROM jsonb_array_elements(split -> 'parts') p)
        WHEN 'shares' THEN (SELECT bool_and(coalesce((p ->> 'value')::bigint > 0, false)) FROM jsonb_array_elements(split -> 'parts') p)
        ELSE false
    END) IS TRUE
$$;

-- A split as entered, itemised or not, fits `total`.
CREATE OR REPLACE FUNCTION orbit.split_input_fits(split jsonb, total bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT (
    CASE split ->> 'method'
    WHEN 'items' THEN
        jsonb_typeof(split -> 'items') = 'array' AND jsonb_array_length(split -> 'items') > 0
        AND (split ->> 'tax')::bigint >= 0 AND (split ->> 'tip')::bigint >= 0
        AND (SELECT bool_and(coalesce((i ->> 'amount')::bigint > 0 AND orbit.plain_split_fits(i -> 'split', (i ->> 'amount')::bigint), false))
                    AND sum((i ->> 'amount')::bigint) + (split ->> 'tax')::bigint + (split ->> 'tip')::bigint = total
             FROM jsonb_array_elements(split -> 'items') i)
    ELSE orbit.plain_split_fits(split, total)
    END) IS TRUE
$$;

ALTER TABLE transactions ADD CONSTRAINT transactions_split_input_fits
    CHECK (split_input IS NULL OR orbit.split_input_fits(split_input, total_amount));
ALTER TABLE recurring_charges ADD CONSTRAINT recurring_charges_split_fits
    CHECK (split IS NULL OR orbit.split_input_fits(split, amount));
