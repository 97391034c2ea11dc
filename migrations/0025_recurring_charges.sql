-- Recurring expenses and recurring dues (issue 24, item 4; docs/money.md): a template with an
-- RRULE whose days are the community's days. Each occurrence is created once, however many
-- servers run the job and after any downtime: the job locks the template (FOR UPDATE SKIP
-- LOCKED), creates what is due from `next_on` through today in the community's zone and moves
-- `next_on` on in the same transaction, and the transaction or dues row it creates carries the
-- template and the occurrence's day under a unique index, so a second copy cannot be stored.
CREATE TABLE recurring_charges (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    -- What each occurrence creates: an expense, or dues every member owes.
    kind TEXT NOT NULL CHECK (kind IN ('expense', 'dues')),
    -- The expense's description or the dues' name.
    description VARCHAR(500) NOT NULL CHECK (length(description) > 0),
    amount INTEGER NOT NULL CHECK (amount > 0), -- minor units
    currency VARCHAR(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    -- Expenses only: category, who pays, and the split as entered (SplitMethod's stored form).
    category expense_category,
    paid_by UUID REFERENCES users(id),
    split JSONB,
    recurrence_rule TEXT NOT NULL CHECK (length(recurrence_rule) BETWEEN 1 AND 500),
    -- The rule's first day (DTSTART), a day in the community's zone.
    starts_on DATE NOT NULL,
    -- The next day the rule gives whose occurrence has not been created or skipped yet; NULL
    -- once the rule has no more days (the template is then ended).
    next_on DATE,
    -- Days skipped one at a time ("skip one").
    skipped DATE[] NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'ended')),
    -- Why the job paused it (a payer who left, a creator no longer an admin), or NULL.
    status_reason TEXT,
    created_by UUID NOT NULL REFERENCES users(id),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),

    CONSTRAINT recurring_charges_id_community_key UNIQUE (id, community_id),
    CONSTRAINT recurring_charges_expense_fields CHECK (
        CASE kind WHEN 'expense' THEN category IS NOT NULL AND paid_by IS NOT NULL AND split IS NOT NULL
                  ELSE category IS NULL AND paid_by IS NULL AND split IS NULL END),
    CONSTRAINT recurring_charges_next_after_start CHECK (next_on IS NULL OR next_on >= starts_on),
    CONSTRAINT recurring_charges_ended_without_next CHECK (next_on IS NOT NULL OR status = 'ended')
);

CREATE INDEX idx_recurring_charges_community ON recurring_charges (community_id, created_at DESC, id DESC);
-- The job's question, across communities: which active templates have a day due.
CREATE INDEX idx_recurring_charges_due ON recurring_charges (next_on) WHERE status = 'active';
CREATE INDEX idx_recurring_charges_created_by ON recurring_charges (created_by);
CREATE INDEX idx_recurring_charges_paid_by ON recurring_charges (paid_by) WHERE paid_by IS NOT NULL;

ALTER TABLE recurring_charges ENABLE ROW LEVEL SECURITY;
ALTER TABLE recurring_charges FORCE ROW LEVEL SECURITY;

-- The occurrence a transaction or dues row was created for: one per template and day.
ALTER TABLE transactions ADD COLUMN recurring_charge_id UUID;
ALTER TABLE transactions ADD COLUMN occurrence_on DATE;
ALTER TABLE transactions ADD CONSTRAINT transactions_recurring_charge_fkey
    FOREIGN KEY (recurring_charge_id, community_id) REFERENCES recurring_charges (id, community_id);
ALTER TABLE transactions ADD CONSTRAINT transactions_occurrence_pair
    CHECK ((recurring_charge_id IS NULL) = (occurrence_on IS NULL));
CREATE UNIQUE INDEX transactions_one_per_occurrence ON transactions (recurring_charge_id, occurrence_on)
    WHERE recurring_charge_id IS NOT NULL;

ALTER TABLE dues ADD COLUMN recurring_charge_id UUID;
ALTER TABLE dues ADD COLUMN occurrence_on DATE;
ALTER TABLE dues ADD CONSTRAINT dues_recurring_charge_fkey
    FOREIGN KEY (recurring_charge_id, community_id) REFERENCES recurring_charges (id, community_id);
ALTER TABLE dues ADD CONSTRAINT dues_occurrence_pair CHECK ((recurring_charge_id IS NULL) = (occurrence_on IS NULL));
CREATE UNIQUE INDEX dues_one_per_occurrence ON dues (recurring_charge_id, occurrence_on) WHERE recurring_charge_id IS NOT NULL;
