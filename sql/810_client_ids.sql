-- Client ids (sql/README.md): creates with the id the client generated. This file owns the
-- trigger that takes the id on every table a client creates rows in (of several domains: it
-- runs after them), its functions and the rights on them and on orbit_private.client_creates.
--
-- Creates with the id the client generated (issue 38, item 3; docs/sync.md, "Offline writes").
--
-- The API binds a create that carries an `id` to three transaction settings (RequestRunner's
-- `clientCreate`): app.client_create_id, app.client_create_table and
-- app.client_create_fingerprint. The first row the transaction inserts into that table takes
-- the id, and the request's fingerprint is kept beside it, in the same transaction: the entity
-- and the proof of the request that made it commit or vanish together. Then the settings are
-- spent, so that any further row (of any table) gets its own id as before.

CREATE OR REPLACE FUNCTION orbit.take_client_id() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF current_setting('app.client_create_table', true) IS DISTINCT FROM TG_TABLE_NAME THEN
        RETURN NEW;
    END IF;
    NEW.id := current_setting('app.client_create_id')::uuid;
    PERFORM set_config('app.client_create_table', '', true);
    -- A second create with this id, by anyone, fails here (23505): the API then answers the
    -- replay, or the conflict, from what is stored.
    INSERT INTO orbit_private.client_creates (entity_id, entity_table, user_id, family_member_id, fingerprint)
    VALUES (
        NEW.id, TG_TABLE_NAME, orbit.app_user_id(),
        CASE WHEN orbit.app_user_id() IS NULL THEN orbit.app_child_id() END,
        decode(current_setting('app.client_create_fingerprint'), 'hex'));
    RETURN NEW;
END
$$;
ALTER FUNCTION orbit.take_client_id() OWNER TO orbit_admin;

-- Every table a client creates rows in. The trigger's name sorts before the other BEFORE INSERT
-- triggers, so that they see the row's final id.
DO $$
DECLARE
    target text;
BEGIN
    FOREACH target IN ARRAY ARRAY[
        'communities', 'posts', 'comments', 'events', 'transactions', 'recurring_charges', 'dues', 'dues_payments',
        'chores', 'chore_completions', 'rewards', 'reward_redemptions', 'family_members', 'conversations', 'invites', 'media'
    ] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS trigger_a_client_id ON %I', target);
        EXECUTE format('CREATE TRIGGER trigger_a_client_id BEFORE INSERT ON %I FOR EACH ROW EXECUTE FUNCTION orbit.take_client_id()', target);
    END LOOP;
END
$$;

-- What was created with `id`: 'same' (by the current user or child, with the same
-- fingerprint: a replay), 'different' (by someone else, or other content), or NULL (nothing).
CREATE OR REPLACE FUNCTION orbit.client_create_match(id uuid, fingerprint bytea) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN c.fingerprint = client_create_match.fingerprint
            AND (c.user_id = orbit.app_user_id() OR (orbit.app_user_id() IS NULL AND c.family_member_id = orbit.app_child_id()))
        THEN 'same'
        ELSE 'different'
    END
    FROM orbit_private.client_creates c
    WHERE c.entity_id = client_create_match.id
$$;
ALTER FUNCTION orbit.client_create_match(uuid, bytea) OWNER TO orbit_admin;

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on public's tables and
-- orbit's functions. (orbit_admin's EXECUTE is revoked too where the migrating role owns the
-- function, not where orbit_admin owns it: sql/README.md.)
REVOKE ALL ON orbit_private.client_creates FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT, DELETE ON orbit_private.client_creates TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.take_client_id(), orbit.client_create_match(uuid, bytea) FROM PUBLIC, orbit_app;
-- An operation checked inside the function (it answers for the current user or child only).
GRANT EXECUTE ON FUNCTION orbit.client_create_match(uuid, bytea) TO orbit_app, orbit_admin;
GRANT EXECUTE ON FUNCTION orbit.take_client_id(), orbit.client_create_match(uuid, bytea) TO orbit_admin;
