-- A calendar feed's token is kept as its SHA-256 digest, as refresh tokens are (issue 52, item 5;
-- docs/security.md): a backup, a replica or orbit_admin no longer holds addresses that read
-- somebody's calendar. The token is shown once, when it is made or rotated. The tokens issued
-- before are hashed in place, so the links people subscribed to keep working (the server hashes
-- what a calendar app sends: SHA-256 of the token's UTF-8 bytes, as here).
ALTER TABLE calendar_feeds ADD COLUMN token_hash BYTEA;
UPDATE calendar_feeds SET token_hash = sha256(convert_to(token, 'UTF8'));
ALTER TABLE calendar_feeds ALTER COLUMN token_hash SET NOT NULL;
ALTER TABLE calendar_feeds ADD CONSTRAINT calendar_feeds_token_hash_key UNIQUE (token_hash);
ALTER TABLE calendar_feeds ADD CONSTRAINT calendar_feeds_token_hash_check CHECK (octet_length(token_hash) = 32);
DROP FUNCTION IF EXISTS orbit.calendar_feed_owner(text);
ALTER TABLE calendar_feeds DROP COLUMN token;
