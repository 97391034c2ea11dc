-- Chores, points and rewards (issue 23, docs/chores.md): parents (a community's admins) set
-- chores and rewards, people and children (family members) do chores for points and spend them.
-- Invariants are kept by triggers in sql/058_chores.sql, policies are in sql/070_policies.sql.
--
-- A "holder" is whoever does chores and holds points: a user (an active member) or a family
-- member (whose parent is an active member). Each holder row names exactly one of the two, and
-- `holder_id` is that id (user ids and family member ids are both UUIDs: never equal).

CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA orbit_private;

CREATE TABLE chores (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    title TEXT NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    description TEXT CHECK (description IS NULL OR char_length(description) <= 2000),
    points INTEGER NOT NULL CHECK (points BETWEEN 1 AND 1000),
    difficulty TEXT NOT NULL DEFAULT 'easy' CHECK (difficulty IN ('easy', 'medium', 'hard')),
    category TEXT CHECK (category IS NULL OR char_length(category) BETWEEN 1 AND 50),
    -- A one-off chore's due time, or a recurring chore's first occurrence (DTSTART).
    due_at TIMESTAMP WITH TIME ZONE,
    -- RRULE, expanded in the community's zone (the recurrence engine, docs/recurrence.md).
    recurrence_rule TEXT CHECK (recurrence_rule IS NULL OR char_length(recurrence_rule) BETWEEN 1 AND 500),
    -- The community's zone when the chore was set: its occurrences keep their wall-clock time.
    recurrence_timezone TEXT,
    requires_approval BOOLEAN NOT NULL DEFAULT true,
    created_by UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    archived_at TIMESTAMP WITH TIME ZONE,
    CONSTRAINT chores_recurrence_has_start CHECK (recurrence_rule IS NULL OR due_at IS NOT NULL)
);
CREATE INDEX idx_chores_community ON chores (community_id);

CREATE TABLE chore_assignees (
    id UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    chore_id UUID NOT NULL REFERENCES chores(id) ON DELETE CASCADE,
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    user_id UUID REFERENCES users(id) ON DELETE CASCADE,
    family_member_id UUID REFERENCES family_members(id) ON DELETE CASCADE,
    holder_id UUID NOT NULL GENERATED ALWAYS AS (coalesce(user_id, family_member_id)) STORED,
    CONSTRAINT chore_assignees_one_holder CHECK (num_nonnulls(user_id, family_member_id) = 1),
    PRIMARY KEY (chore_id, holder_id)
);
CREATE INDEX idx_chore_assignees_community ON chore_assignees (community_id);
CREATE INDEX idx_chore_assignees_family_member ON chore_assignees (family_member_id);
CREATE INDEX idx_chore_assignees_user ON chore_assignees (user_id);

-- One completion per occurrence of a chore: whoever does it first. A rejected completion
-- frees the occurrence (the chore is done again, properly).
CREATE TABLE chore_completions (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    chore_id UUID NOT NULL REFERENCES chores(id) ON DELETE CASCADE,
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    -- The occurrence: a one-off chore's due time (or creation time, without one); one of a
    -- recurring chore's occurrences.
    occurrence_at TIMESTAMP WITH TIME ZONE NOT NULL,
    user_id UUID REFERENCES users(id) ON DELETE CASCADE,
    family_member_id UUID REFERENCES family_members(id) ON DELETE CASCADE,
    holder_id UUID NOT NULL GENERATED ALWAYS AS (coalesce(user_id, family_member_id)) STORED,
    -- Who recorded it: the doer, their parent or an admin (NULL: the child, on their device).
    recorded_by UUID REFERENCES users(id) ON DELETE SET NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    -- The chore's points when it was done (a later change of the chore does not change them).
    points INTEGER NOT NULL CHECK (points BETWEEN 1 AND 1000),
    note TEXT CHECK (note IS NULL OR char_length(note) <= 1000),
    completed_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    reviewed_by UUID REFERENCES users(id) ON DELETE SET NULL,
    reviewed_at TIMESTAMP WITH TIME ZONE,
    CONSTRAINT chore_completions_one_holder CHECK (num_nonnulls(user_id, family_member_id) = 1)
);
CREATE UNIQUE INDEX chore_completions_one_per_occurrence ON chore_completions (chore_id, occurrence_at) WHERE status <> 'rejected';
CREATE INDEX idx_chore_completions_community ON chore_completions (community_id);
CREATE INDEX idx_chore_completions_family_member ON chore_completions (family_member_id);

CREATE TABLE rewards (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    title TEXT NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    description TEXT CHECK (description IS NULL OR char_length(description) <= 2000),
    points_cost INTEGER NOT NULL CHECK (points_cost BETWEEN 1 AND 1000000),
    available BOOLEAN NOT NULL DEFAULT true,
    -- NULL: unlimited; otherwise how many are left (a redemption takes one, a cancellation gives
    -- it back).
    stock INTEGER CHECK (stock IS NULL OR stock >= 0),
    created_by UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);
CREATE INDEX idx_rewards_community ON rewards (community_id);

CREATE TABLE reward_redemptions (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    reward_id UUID NOT NULL REFERENCES rewards(id) ON DELETE CASCADE,
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    user_id UUID REFERENCES users(id) ON DELETE CASCADE,
    family_member_id UUID REFERENCES family_members(id) ON DELETE CASCADE,
    holder_id UUID NOT NULL GENERATED ALWAYS AS (coalesce(user_id, family_member_id)) STORED,
    -- The reward's cost when redeemed (taken from the reward by trigger).
    points_cost INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'requested' CHECK (status IN ('requested', 'fulfilled', 'cancelled')),
    requested_by UUID REFERENCES users(id) ON DELETE SET NULL,
    requested_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    resolved_by UUID REFERENCES users(id) ON DELETE SET NULL,
    resolved_at TIMESTAMP WITH TIME ZONE,
    CONSTRAINT reward_redemptions_one_holder CHECK (num_nonnulls(user_id, family_member_id) = 1)
);
CREATE INDEX idx_reward_redemptions_community ON reward_redemptions (community_id);
CREATE INDEX idx_reward_redemptions_family_member ON reward_redemptions (family_member_id);

-- Every credit and debit of points, with its cause. Append-only: orbit_app may insert
-- adjustments and nothing else (sql/090), the other kinds are written by triggers.
CREATE TABLE points_ledger (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    seq BIGSERIAL NOT NULL UNIQUE,
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    user_id UUID REFERENCES users(id) ON DELETE CASCADE,
    family_member_id UUID REFERENCES family_members(id) ON DELETE CASCADE,
    holder_id UUID NOT NULL GENERATED ALWAYS AS (coalesce(user_id, family_member_id)) STORED,
    delta INTEGER NOT NULL CHECK (delta <> 0 AND delta BETWEEN -1000000 AND 1000000),
    kind TEXT NOT NULL CHECK (kind IN ('chore', 'adjustment', 'redemption', 'refund')),
    completion_id UUID REFERENCES chore_completions(id) ON DELETE CASCADE,
    redemption_id UUID REFERENCES reward_redemptions(id) ON DELETE CASCADE,
    reason TEXT CHECK (reason IS NULL OR char_length(reason) BETWEEN 1 AND 500),
    created_by UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    CONSTRAINT points_ledger_one_holder CHECK (num_nonnulls(user_id, family_member_id) = 1),
    CONSTRAINT points_ledger_cause CHECK (
        CASE kind
            WHEN 'chore' THEN completion_id IS NOT NULL AND redemption_id IS NULL AND delta > 0
            WHEN 'adjustment' THEN completion_id IS NULL AND redemption_id IS NULL AND reason IS NOT NULL
            WHEN 'redemption' THEN redemption_id IS NOT NULL AND completion_id IS NULL AND delta < 0
            WHEN 'refund' THEN redemption_id IS NOT NULL AND completion_id IS NULL AND delta > 0
        END
    )
);
-- An approval credits exactly once; a redemption is debited once and refunded at most once.
CREATE UNIQUE INDEX points_ledger_one_credit ON points_ledger (completion_id) WHERE kind = 'chore';
CREATE UNIQUE INDEX points_ledger_one_per_redemption ON points_ledger (redemption_id, kind) WHERE redemption_id IS NOT NULL;
CREATE INDEX idx_points_ledger_holder ON points_ledger (community_id, holder_id, seq);
CREATE INDEX idx_points_ledger_family_member ON points_ledger (family_member_id);

-- Each holder's balance and lifetime earned in a community, kept by the ledger's trigger
-- (equal to the ledger's sums: ChoreTests). orbit_app only reads it.
CREATE TABLE points_accounts (
    id UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    user_id UUID REFERENCES users(id) ON DELETE CASCADE,
    family_member_id UUID REFERENCES family_members(id) ON DELETE CASCADE,
    holder_id UUID NOT NULL GENERATED ALWAYS AS (coalesce(user_id, family_member_id)) STORED,
    balance INTEGER NOT NULL DEFAULT 0 CONSTRAINT points_accounts_balance_not_negative CHECK (balance >= 0),
    -- Chore credits and positive adjustments; never decreases (trigger).
    lifetime_earned INTEGER NOT NULL DEFAULT 0 CHECK (lifetime_earned >= 0),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    CONSTRAINT points_accounts_one_holder CHECK (num_nonnulls(user_id, family_member_id) = 1),
    PRIMARY KEY (community_id, holder_id)
);
CREATE INDEX idx_points_accounts_family_member ON points_accounts (family_member_id);

-- Children's sign-in (issue 23, item 3): a PIN per family member (a slow salted hash: bcrypt,
-- pgcrypto), with its failure count and lockout; and the devices paired to sign a child in.
-- orbit_app has no rights on either: only the SECURITY DEFINER functions of sql/058 touch them.
CREATE TABLE child_credentials (
    family_member_id UUID PRIMARY KEY REFERENCES family_members(id) ON DELETE CASCADE,
    pin_hash TEXT NOT NULL,
    failed_attempts INTEGER NOT NULL DEFAULT 0 CHECK (failed_attempts BETWEEN 0 AND 5),
    locked_until TIMESTAMP WITH TIME ZONE,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

CREATE TABLE child_devices (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    family_member_id UUID NOT NULL REFERENCES family_members(id) ON DELETE CASCADE,
    -- The community it was paired from: whose admins hear of a lockout.
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    -- SHA-256 of the one-time pairing code (until used or expired) and of the device's token.
    pairing_code_hash BYTEA UNIQUE,
    pairing_expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
    token_hash BYTEA UNIQUE,
    paired_at TIMESTAMP WITH TIME ZONE,
    created_by UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    revoked_at TIMESTAMP WITH TIME ZONE
);
CREATE INDEX idx_child_devices_family_member ON child_devices (family_member_id);

ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'chore_assigned';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'chore_due';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'chore_completed';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'chore_approved';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'reward_redeemed';
ALTER TYPE notification_type ADD VALUE IF NOT EXISTS 'child_locked_out';

ALTER TABLE chores ENABLE ROW LEVEL SECURITY;
ALTER TABLE chores FORCE ROW LEVEL SECURITY;
ALTER TABLE chore_assignees ENABLE ROW LEVEL SECURITY;
ALTER TABLE chore_assignees FORCE ROW LEVEL SECURITY;
ALTER TABLE chore_completions ENABLE ROW LEVEL SECURITY;
ALTER TABLE chore_completions FORCE ROW LEVEL SECURITY;
ALTER TABLE rewards ENABLE ROW LEVEL SECURITY;
ALTER TABLE rewards FORCE ROW LEVEL SECURITY;
ALTER TABLE reward_redemptions ENABLE ROW LEVEL SECURITY;
ALTER TABLE reward_redemptions FORCE ROW LEVEL SECURITY;
ALTER TABLE points_ledger ENABLE ROW LEVEL SECURITY;
ALTER TABLE points_ledger FORCE ROW LEVEL SECURITY;
ALTER TABLE points_accounts ENABLE ROW LEVEL SECURITY;
ALTER TABLE points_accounts FORCE ROW LEVEL SECURITY;
ALTER TABLE child_credentials ENABLE ROW LEVEL SECURITY;
ALTER TABLE child_credentials FORCE ROW LEVEL SECURITY;
ALTER TABLE child_devices ENABLE ROW LEVEL SECURITY;
ALTER TABLE child_devices FORCE ROW LEVEL SECURITY;
