-- The rate of a conversion (docs/money.md, "Currencies"): 1 unit of `from_code` is this many units
-- of `to_code`, as known on `on_day` to a member of `in_community` (row-level security applies: the
-- community's own rates and the reference rates). NULL when none is known.
--
-- The community's own rate comes first: the latest on or before the day, entered either way
-- round (the other way is inverted). Otherwise the reference rates (the ECB's: 1 EUR = rate
-- units of each currency), the latest on or before the day of each, crossed through EUR. A rate
-- that is derived (inverted or crossed) is rounded half away from zero to 10 decimal places;
-- the rate a settlement used is recorded on it, so its amount never depends on a later import.
CREATE OR REPLACE FUNCTION orbit.exchange_rate(in_community uuid, from_code text, to_code text, on_day date) RETURNS numeric
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN from_code = to_code THEN 1::numeric ELSE coalesce(
        (SELECT CASE WHEN r.base = from_code THEN r.rate ELSE round(1 / r.rate, 10) END
         FROM public.exchange_rates r
         WHERE r.community_id = in_community AND r.rate_on <= on_day
           AND ((r.base = from_code AND r.quote = to_code) OR (r.base = to_code AND r.quote = from_code))
         ORDER BY r.rate_on DESC, (r.base = from_code) DESC
         LIMIT 1),
        (SELECT round(t.rate / s.rate, 10)
         FROM (SELECT CASE WHEN from_code = 'EUR' THEN 1::numeric ELSE (
                   SELECT r.rate FROM public.exchange_rates r
                   WHERE r.community_id IS NULL AND r.base = 'EUR' AND r.quote = from_code AND r.rate_on <= on_day
                   ORDER BY r.rate_on DESC LIMIT 1) END AS rate) s,
              (SELECT CASE WHEN to_code = 'EUR' THEN 1::numeric ELSE (
                   SELECT r.rate FROM public.exchange_rates r
                   WHERE r.community_id IS NULL AND r.base = 'EUR' AND r.quote = to_code AND r.rate_on <= on_day
                   ORDER BY r.rate_on DESC LIMIT 1) END AS rate) t))
    END
$$;

-- An amount of `source` minor units converted at `rate` into `target` minor units, rounded half
-- away from zero (the rule transactions_conversion checks). A result beyond the largest amount
-- a column holds (2147483647 minor units, INTEGER) is refused here, naming the rate, rather than
-- overflowing on its way into one (issue 37, item 10).
CREATE OR REPLACE FUNCTION orbit.convert(amount bigint, rate numeric, source text, target text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    converted numeric := round(amount * rate * power(10::numeric, orbit.currency_exponent(target) - orbit.currency_exponent(source)));
BEGIN
    IF converted > 2147483647 THEN
        RAISE EXCEPTION 'converts % % at % to more than the largest amount of % (2147483647 minor units)', amount, source, rate, target
            USING ERRCODE = 'numeric_value_out_of_range', COLUMN = 'rate';
    END IF;
    RETURN converted;
END
$$;
