-- A user's language (docs/api.md, "Users and family"): a BCP 47 tag (hi-IN, cs, pt-BR), set by
-- the user or from their device's locale at its registration when unset. Notification and push
-- texts come in it, from the catalogs of catalogs/notifications/, amounts and dates formatted by
-- its locale.
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- No default: only the catalog changes, no rewrite.
ALTER TABLE users ADD COLUMN language TEXT;
-- NOT VALID: every row has NULL; new rows and changes are checked.
ALTER TABLE users ADD CONSTRAINT users_language_tag CHECK (language ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$') NOT VALID;
