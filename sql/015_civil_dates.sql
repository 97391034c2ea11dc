-- Shared (sql/README.md): this file owns orbit.civil_date and its rights.
--
-- Each community's clock (docs/architecture.md): the civil date of an instant in a community's
-- `settings.timezone`, for writes that date a row in the same statement that inserts it (an
-- expense without a date is dated today there). The services compute the same day in Swift
-- elsewhere (`CommunitySettings.timeZone`): an unset zone, or one PostgreSQL does not know, is
-- UTC. The instant is the services' clock (`RequestRunner.now`), passed as a parameter, not now().
CREATE OR REPLACE FUNCTION orbit.civil_date(instant timestamptz, zone text) RETURNS date
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF zone IS NOT NULL THEN
        BEGIN
            RETURN (instant AT TIME ZONE zone)::date;
        EXCEPTION WHEN invalid_parameter_value THEN
            -- An unknown zone name (22023): the services read it as UTC.
            NULL;
        END;
    END IF;
    RETURN (instant AT TIME ZONE 'UTC')::date;
END
$$;

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON FUNCTION orbit.civil_date(timestamptz, text) FROM PUBLIC, orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.civil_date(timestamptz, text) TO orbit_app, orbit_admin;
