-- A child's sign-in belongs to the child's parents (issue 37, items 1–2; docs/security.md).
--
-- Until now an admin of any community the parent was in could set the child's PIN (replacing the
-- parents' own) and pair a device, and the child's token then reached every community of the
-- parent. Now only the child's guardian (family_members.user_id) manages the sign-in
-- (orbit.can_manage_child, sql/058), and a child's token carries the device it was issued on: the
-- device's community is the only one the child reaches (orbit.child_community_ids), and revoking
-- the device ends its access at once.
--
-- child_devices: when the device last signed its child in (a device unused for 30 days no longer
-- signs in: orbit.child_device_idle_limit()), and who revoked it.
ALTER TABLE child_devices ADD COLUMN last_used_at TIMESTAMP WITH TIME ZONE;
ALTER TABLE child_devices ADD COLUMN revoked_by UUID REFERENCES users(id) ON DELETE SET NULL;
CREATE INDEX idx_child_devices_community ON child_devices (community_id);

-- child_credentials: lockouts in a row, without a sign-in between them. Each lasts longer than
-- the one before (15 minutes, 1 hour, then 24 hours); a sign-in or a new PIN starts again.
ALTER TABLE child_credentials ADD COLUMN lockouts_in_row INTEGER NOT NULL DEFAULT 0 CHECK (lockouts_in_row >= 0);

-- Its result gains the device and its community (for the child's token); a function's result
-- type cannot be replaced in place, so sql/058 creates it again.
DROP FUNCTION IF EXISTS orbit.child_sign_in(bytea, text);
