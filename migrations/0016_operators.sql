-- Operators: people who run the service, as opposed to members of communities. An operator may
-- change what members must not (a community's subscription, which records what billing
-- decided). Set with `orbitctl user operator`; orbit_app can neither set nor clear it
-- (sql/047_operators.sql).
ALTER TABLE users ADD COLUMN is_operator BOOLEAN NOT NULL DEFAULT false;
