-- Photo proof (docs/chores.md, "Photo proof"): a completion may carry a photo, an image uploaded
-- to the community, from a child's paired device too; a chore may require one.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- A constant default and NULL columns change only the catalog.
ALTER TABLE chores ADD COLUMN requires_photo BOOLEAN NOT NULL DEFAULT false;
-- No foreign key, as for an expense's receipt (migrations/0059): an upload is removed by a hard
-- delete, and a key would need an index to find what names it. sql/210_chores.sql checks, when it
-- is set, that it is an image of the completion's community.
ALTER TABLE chore_completions ADD COLUMN photo_media_id UUID;
-- The child who uploaded it on their paired device (uploaded_by is then the child's parent, who
-- answers for it). No foreign key either: the row is the parent's upload, and a child removed
-- leaves an id that matches no one.
ALTER TABLE media ADD COLUMN family_member_id UUID;
