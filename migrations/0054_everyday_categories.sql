-- Everyday categories (issue 54, item 4; docs/money.md "Categories"): One By Two's ten (food,
-- transport, groceries, rent, entertainment, utilities, shopping, health, travel, other) beside the
-- team ones already there (equipment, dues). Adding a value to an enum rewrites nothing. They come
-- after 'other', which keeps its place (the spec's DDL: the fifth).
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
ALTER TYPE expense_category ADD VALUE IF NOT EXISTS 'transport' AFTER 'other';
ALTER TYPE expense_category ADD VALUE IF NOT EXISTS 'groceries' AFTER 'transport';
ALTER TYPE expense_category ADD VALUE IF NOT EXISTS 'rent' AFTER 'groceries';
ALTER TYPE expense_category ADD VALUE IF NOT EXISTS 'entertainment' AFTER 'rent';
ALTER TYPE expense_category ADD VALUE IF NOT EXISTS 'utilities' AFTER 'entertainment';
ALTER TYPE expense_category ADD VALUE IF NOT EXISTS 'shopping' AFTER 'utilities';
ALTER TYPE expense_category ADD VALUE IF NOT EXISTS 'health' AFTER 'shopping';
