-- "My groups" (issue 54, item 6; docs/api.md "My groups"): each member pins the communities they
-- want first, in their own order. The pin is the member's own, on their row beside their other
-- own settings (nickname, notification_prefs): only they change it (sql/110_communities.sql).
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- A constant default changes only the catalog (PostgreSQL 11 and later): no rewrite.
ALTER TABLE members ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT false;
-- Among the pinned, ascending; none: after those with one. (PostgreSQL checks the new CHECK with
-- one scan of members, under the lock above; every row's value is NULL, so it holds.)
ALTER TABLE members ADD COLUMN pin_position INTEGER CONSTRAINT members_pin_position CHECK (pin_position BETWEEN 0 AND 9999);
