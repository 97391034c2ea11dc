-- Registering an APNs device token for the current user (issue 21). A token names one app
-- install on one phone; when it arrives under another user (the phone changed hands, or another
-- account signed in on it) it moves to the caller, since pushes for the previous owner must stop
-- reaching this phone. Row-level security hides the previous owner's row from the caller, so
-- the move happens here, as the function's owner. Returns the caller's row.
CREATE OR REPLACE FUNCTION orbit.register_device(device_token text, device_environment text, device_bundle_id text, device_locale text)
RETURNS SETOF public.devices
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    me uuid := orbit.app_user_id();
BEGIN
    IF me IS NULL THEN
        RAISE EXCEPTION 'registering a device needs an acting user' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
    INSERT INTO public.devices AS d (user_id, token, environment, bundle_id, locale)
    VALUES (me, lower(device_token), device_environment, device_bundle_id, device_locale)
    ON CONFLICT (token) DO UPDATE
        SET user_id = me, environment = EXCLUDED.environment, bundle_id = EXCLUDED.bundle_id, locale = EXCLUDED.locale,
            updated_at = now(),
            created_at = CASE WHEN d.user_id = me THEN d.created_at ELSE now() END
    RETURNING d.*;
END;
$$;
ALTER FUNCTION orbit.register_device(text, text, text, text) OWNER TO orbit_admin;
