-- Last (sql/README.md).
-- orbit_admin: the operators' role (and owner of the SECURITY DEFINER functions).
-- Every domain's file already grants it everything on its own tables and functions. This file
-- owns the rights on the migrator's own tables (schema_migrations, schema_repeatables: nothing
-- for orbit_app) and, as a net, gives orbit_admin any table of public or function of orbit that
-- no file names yet (a table a new migration adds, say) and takes EXECUTE on any function of orbit
-- from PUBLIC. No file grants PUBLIC anything or leaves orbit_admin without a right, so after
-- any other file is applied alone this one has nothing to add: it need not run again.
REVOKE ALL ON schema_migrations, schema_repeatables FROM orbit_app, orbit_admin;
GRANT ALL ON schema_migrations, schema_repeatables TO orbit_admin;
GRANT ALL ON ALL TABLES IN SCHEMA public TO orbit_admin;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA orbit FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA orbit TO orbit_admin;
