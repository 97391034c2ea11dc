-- Rates (sql/README.md): exchange rates, currencies and conversion. This file owns
-- orbit.exchange_rate, orbit.convert, the policies of exchange_rates and the rights on them and
-- on its functions, including orbit.currency_exponent (migrations/0026 created it). It comes
-- before sql/150_expenses.sql: transactions' conversion check (transactions_conversion) calls
-- orbit.currency_exponent, and settlements record the rate orbit.exchange_rate gave them.

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

-- Policies. This file owns every policy on exchange_rates: it drops them all and recreates the
-- ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN (
            'exchange_rates'
        )
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- exchange rates: the reference rates (community_id NULL, imported by operators) are everyone's;
-- a community's own are its members', entered by its admins as themselves.
CREATE POLICY exchange_rates_select ON exchange_rates FOR SELECT TO orbit_app
    USING (community_id IS NULL OR community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY exchange_rates_insert ON exchange_rates FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND entered_by = (SELECT orbit.app_user_id()));
CREATE POLICY exchange_rates_update ON exchange_rates FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]))
    WITH CHECK (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[]) AND entered_by = (SELECT orbit.app_user_id()));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its table and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything. (The migrating role
-- owns these functions: orbit_admin's EXECUTE is revoked and granted again after orbit_app's,
-- sql/README.md.)
REVOKE ALL ON exchange_rates FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT ON exchange_rates TO orbit_app;
GRANT UPDATE (rate, entered_by) ON exchange_rates TO orbit_app;
GRANT ALL ON exchange_rates TO orbit_admin;
REVOKE ALL ON FUNCTION
    orbit.currency_exponent(text), orbit.exchange_rate(uuid, text, text, date), orbit.convert(bigint, numeric, text, text)
FROM PUBLIC, orbit_app, orbit_admin;
-- Functions the services and the tables' checks call as the querying role.
GRANT EXECUTE ON FUNCTION
    orbit.currency_exponent(text), orbit.exchange_rate(uuid, text, text, date), orbit.convert(bigint, numeric, text, text)
TO orbit_app, orbit_admin;
