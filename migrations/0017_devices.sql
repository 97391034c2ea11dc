-- Devices (issue 21): the APNs device tokens a user's pushes go to. A token names one app
-- install on one phone, so it is unique: registering it again under another user (the phone
-- changed hands, or someone else signed in) moves it (orbit.register_device, sql/048_devices.sql).
-- Tokens are hex (32 bytes today; Apple allows longer), stored lower case.
CREATE TABLE devices (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token TEXT NOT NULL UNIQUE CHECK (token ~ '^([0-9a-f]{2}){32,100}$'),
    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    bundle_id TEXT NOT NULL CHECK (bundle_id ~ '^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$' AND length(bundle_id) <= 155),
    locale TEXT CHECK (locale ~ '^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,3}$'),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);
CREATE INDEX idx_devices_user ON devices (user_id);

ALTER TABLE devices ENABLE ROW LEVEL SECURITY;
ALTER TABLE devices FORCE ROW LEVEL SECURITY;
