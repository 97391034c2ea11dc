-- Users, family members, communities, members and invites (spec: "Core Entities").
--
-- Differences from the draft DDL, each for a stated rule:
-- * ids default to gen_random_uuid() (built into PostgreSQL 13+) instead of uuid-ossp's
--   uuid_generate_v4(), which needs the contrib extension and the right to create it.
-- * timestamps and flags that the spec treats as always present are NOT NULL: the draft lets
--   an INSERT store NULL into created_at, joined_at, role, settings, ...
-- * communities.member_count defaults to 0 and is maintained by sql/040_counters.sql only: the
--   draft's DEFAULT 1 plus its +1 trigger counted a community's creator twice.

CREATE TABLE users (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    apple_id VARCHAR(255) UNIQUE NOT NULL,
    email VARCHAR(255) NOT NULL,
    display_name VARCHAR(100) NOT NULL,
    avatar_url VARCHAR(500),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    deleted_at TIMESTAMP WITH TIME ZONE
);

-- The spec names this index although UNIQUE(apple_id) already has one; kept for the contract.
CREATE INDEX idx_users_apple_id ON users(apple_id);
CREATE INDEX idx_users_email ON users(email);

CREATE TABLE family_members (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name VARCHAR(100) NOT NULL,
    avatar_url VARCHAR(500),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    -- Lets rsvps reference (family_member_id, user_id): a family member belongs to the user
    -- who answers for them.
    CONSTRAINT family_members_id_user_key UNIQUE (id, user_id)
);

CREATE INDEX idx_family_members_user ON family_members(user_id);

CREATE TABLE communities (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    name VARCHAR(100) NOT NULL,
    description TEXT,
    icon_url VARCHAR(500),
    created_by UUID NOT NULL REFERENCES users(id),
    member_count INTEGER NOT NULL DEFAULT 0 CHECK (member_count >= 0),
    subscription_status subscription_status NOT NULL DEFAULT 'free',
    subscription_expires_at TIMESTAMP WITH TIME ZONE,
    stripe_customer_id VARCHAR(255),
    stripe_subscription_id VARCHAR(255),
    settings JSONB NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    deleted_at TIMESTAMP WITH TIME ZONE
);

CREATE INDEX idx_communities_created_by ON communities(created_by);

CREATE TABLE members (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role member_role NOT NULL DEFAULT 'member',
    nickname VARCHAR(100),
    notification_prefs JSONB NOT NULL DEFAULT '{}',
    joined_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    invited_by UUID REFERENCES users(id),
    left_at TIMESTAMP WITH TIME ZONE,

    UNIQUE(community_id, user_id)
);

CREATE INDEX idx_members_community ON members(community_id) WHERE left_at IS NULL;
CREATE INDEX idx_members_user ON members(user_id) WHERE left_at IS NULL;
-- Row-level security and account deletion look members up by user, left or not.
CREATE INDEX idx_members_user_all ON members(user_id);

CREATE TABLE invites (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    -- Codes are stored upper-case so that matching them case-insensitively is an equality.
    code VARCHAR(10) UNIQUE NOT NULL CHECK (code = upper(code) AND length(code) >= 6),
    created_by UUID NOT NULL REFERENCES users(id),
    uses_remaining INTEGER CHECK (uses_remaining >= 0),
    expires_at TIMESTAMP WITH TIME ZONE,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

-- Redundant with UNIQUE(code), as in the spec; kept for the contract.
CREATE INDEX idx_invites_code ON invites(code);
-- Row-level security filters invites by community.
CREATE INDEX idx_invites_community ON invites(community_id);
