-- Roles and schemas (DESIGN.md, "Tenancy and security").
--
-- orbit_app   every service request runs as this role (SET LOCAL ROLE), never owns anything,
--             never bypasses row-level security.
-- orbit_admin the admin CLI's role: BYPASSRLS. It also owns the SECURITY DEFINER functions that
--             maintain counters and check integrity, so they work even when the migrating role
--             is a non-superuser owner subject to FORCE ROW LEVEL SECURITY.
--
-- Roles belong to the whole cluster, so several databases (test clones, staging) share them:
-- create them only when missing, and tolerate a concurrent migrator creating them first.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'orbit_app') THEN
        CREATE ROLE orbit_app NOLOGIN NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL; -- another database's migration created it a moment ago
END
$$;

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'orbit_admin') THEN
        CREATE ROLE orbit_admin NOLOGIN BYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

-- The role that migrates must be able to SET ROLE to both (a superuser always can; a
-- non-superuser owner with CREATEROLE is granted membership here).
DO $$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('GRANT orbit_app, orbit_admin TO %I', current_user);
    END IF;
END
$$;

-- orbit: the small functions that policies and triggers call. orbit_app may use the schema
-- (policies run as the querying role) but executes only what sql/090_grants.sql allows.
CREATE SCHEMA orbit;

-- orbit_private: what orbit_app must never read directly (the materialized balances).
CREATE SCHEMA orbit_private;
REVOKE ALL ON SCHEMA orbit_private FROM PUBLIC;
