-- Operators (sql/README.md): this file owns the operator checks, their function and its rights.
--
-- users.is_operator is the operator's to set (migration 0016): a request running as orbit_app
-- cannot make anyone an operator, itself included, nor create an account that is one.
CREATE OR REPLACE FUNCTION orbit.guard_operator_flag() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    IF current_user = 'orbit_app' AND NEW.is_operator IS DISTINCT FROM (CASE WHEN TG_OP = 'UPDATE' THEN OLD.is_operator ELSE false END) THEN
        RAISE EXCEPTION 'only an operator can change is_operator'
            USING ERRCODE = 'insufficient_privilege', TABLE = 'users', COLUMN = 'is_operator';
    END IF;
    RETURN NEW;
END;
$$;

DROP TRIGGER IF EXISTS trigger_users_operator_flag ON users;
CREATE TRIGGER trigger_users_operator_flag BEFORE INSERT OR UPDATE OF is_operator ON users
    FOR EACH ROW EXECUTE FUNCTION orbit.guard_operator_flag();

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON FUNCTION orbit.guard_operator_flag() FROM PUBLIC, orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.guard_operator_flag() TO orbit_admin;
