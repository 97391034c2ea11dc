-- Money's history (issue 24, item 6; docs/money.md): who created, edited, deleted or settled an
-- expense or a settlement, and what it was before and after, readable by every member of the
-- community (the audit log stays for admins). Append-only for orbit_app: a row is written with
-- its change, `after` filled in by the same database transaction (sql/070: only rows of the
-- acting user written in the current transaction can be updated, and only `after`).
CREATE TABLE money_activity (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    actor_id UUID REFERENCES users(id) ON DELETE SET NULL,
    action TEXT NOT NULL CHECK (action IN ('created', 'edited', 'deleted', 'settled')),
    -- The transaction's type: expense, settlement or dues.
    entity TEXT NOT NULL CHECK (entity IN ('expense', 'settlement', 'dues')),
    entity_id UUID NOT NULL,
    -- orbit.expense_state() of the transaction before and after the change (NULL before a
    -- creation).
    before JSONB,
    after JSONB,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

CREATE INDEX idx_money_activity_community ON money_activity (community_id, created_at DESC, id DESC);
CREATE INDEX idx_money_activity_entity ON money_activity (entity_id);
CREATE INDEX idx_money_activity_actor ON money_activity (actor_id);

ALTER TABLE money_activity ENABLE ROW LEVEL SECURITY;
ALTER TABLE money_activity FORCE ROW LEVEL SECURITY;
