-- New functions are private until granted (issue 37, item 7; docs/security.md). PostgreSQL
-- gives EXECUTE on every new function to PUBLIC, so a helper added later (a SECURITY DEFINER
-- trigger function such as orbit.chore_notify) was callable by orbit_app until
-- sql/090_grants.sql happened to run again and revoke it. From here on, functions created by the
-- role that migrates, or by orbit_admin (which owns the SECURITY DEFINER ones), start with no
-- EXECUTE for PUBLIC; sql/090_grants.sql grants orbit_app exactly what it needs, and
-- SchemaCatalogTests compares what orbit_app can call with Tests/SchemaTests/orbit_app_functions.txt.
-- (Default privileges belong to the database: a clone made from it, as the tests make, has them.)
DO $$
BEGIN
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC', current_user);
    ALTER DEFAULT PRIVILEGES FOR ROLE orbit_admin REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
END
$$;
