-- A community's own categories (docs/money.md, "Categories"): Settle Up's groupCategories, a
-- name with an emoji, which members add and rename and archive. An expense has one of the
-- built-in categories (expense_category) or one of its community's own (category_id, its
-- `category` then 'other', so that readers of the enum alone see a real value).
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
CREATE TABLE expense_categories (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    name TEXT NOT NULL CONSTRAINT expense_categories_name CHECK (char_length(name) BETWEEN 1 AND 50),
    -- One emoji (a grapheme cluster: a flag or a family is several code points), checked by the
    -- service; the bound here keeps any writer to something an emoji can be.
    emoji TEXT NOT NULL CONSTRAINT expense_categories_emoji CHECK (char_length(emoji) BETWEEN 1 AND 16),
    created_by UUID REFERENCES users(id) ON DELETE SET NULL,
    -- Archived: kept by the expenses that have it, offered for no new one.
    archived_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- The target of transactions' key, which names the community too: an expense's category is
    -- its own community's.
    CONSTRAINT expense_categories_id_community UNIQUE (id, community_id)
);
-- A community's list (oldest first) and its policies; the creator's policy and ON DELETE SET NULL.
CREATE INDEX expense_categories_community ON expense_categories (community_id, created_at, id);
CREATE INDEX expense_categories_created_by ON expense_categories (created_by);
-- Two categories in use never share a name (case aside); an archived one may.
CREATE UNIQUE INDEX expense_categories_name_unique ON expense_categories (community_id, lower(name)) WHERE archived_at IS NULL;
ALTER TABLE expense_categories ENABLE ROW LEVEL SECURITY;
ALTER TABLE expense_categories FORCE ROW LEVEL SECURITY;

-- A NULL column changes only the catalog.
ALTER TABLE transactions ADD COLUMN category_id UUID;
-- NOT VALID: no row has a value yet, so there is nothing to scan for; new rows are checked. No
-- index on transactions for it: a category is never deleted but with its community, whose
-- transactions go with it by their own key.
ALTER TABLE transactions ADD CONSTRAINT transactions_category_fkey
    FOREIGN KEY (category_id, community_id) REFERENCES expense_categories (id, community_id) NOT VALID;
ALTER TABLE transactions ADD CONSTRAINT transactions_custom_category_other
    CHECK (category_id IS NULL OR category = 'other') NOT VALID;
