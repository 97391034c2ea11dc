-- A family member's avatar by upload (docs/chores.md, "Avatars"): an image their parent uploaded
-- (from the child's paired device too). No foreign key, as for a receipt (migrations/0059): an
-- upload is removed by a hard delete; sql/205_family.sql checks the image when it is set.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TABLE family_members ADD COLUMN avatar_media_id UUID;
