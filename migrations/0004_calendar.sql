-- Events and RSVPs (spec: "Events (Calendar)", "RSVPs").
--
-- Differences from the draft DDL:
-- * a (id, community_id) key on events lets children name their community and be checked by a
--   foreign key: an RSVP, a recurring instance or a linked post can never point at an event
--   of another community.
-- * rsvps carries community_id (filled from the event by a trigger, for row-level security)
--   and UNIQUE NULLS NOT DISTINCT: the draft's UNIQUE(event_id, user_id, family_member_id)
--   allows any number of rows for the same person when family_member_id is NULL.
-- * the family member of an RSVP must belong to the responding user.
-- * plus_ones >= 0; an event ends no earlier than it starts; coordinates are on the globe.

CREATE TABLE events (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    created_by UUID NOT NULL REFERENCES users(id),
    title VARCHAR(200) NOT NULL,
    description TEXT,
    starts_at TIMESTAMP WITH TIME ZONE NOT NULL,
    ends_at TIMESTAMP WITH TIME ZONE,
    all_day BOOLEAN NOT NULL DEFAULT FALSE,
    location_name VARCHAR(200),
    location_lat DECIMAL(10, 8) CHECK (location_lat BETWEEN -90 AND 90),
    location_lng DECIMAL(11, 8) CHECK (location_lng BETWEEN -180 AND 180),
    location_address TEXT,
    category event_category NOT NULL DEFAULT 'other',
    recurrence_rule VARCHAR(500),
    recurrence_parent_id UUID,
    attachments JSONB NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(attachments) = 'array'),
    rsvp_deadline TIMESTAMP WITH TIME ZONE,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    deleted_at TIMESTAMP WITH TIME ZONE,

    CONSTRAINT events_id_community_key UNIQUE (id, community_id),
    CONSTRAINT events_ends_after_start CHECK (ends_at IS NULL OR ends_at >= starts_at),
    -- A recurring instance belongs to a series of the same community.
    CONSTRAINT events_recurrence_parent_fkey FOREIGN KEY (recurrence_parent_id, community_id)
        REFERENCES events(id, community_id) ON DELETE CASCADE
);

CREATE INDEX idx_events_community ON events(community_id, starts_at) WHERE deleted_at IS NULL;
CREATE INDEX idx_events_recurrence ON events(recurrence_parent_id);
CREATE INDEX idx_events_created_by ON events(created_by);
-- Row-level security filters every event by community, deleted or not.
CREATE INDEX idx_events_community_all ON events(community_id);

CREATE TABLE rsvps (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id UUID NOT NULL,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    family_member_id UUID,
    status rsvp_status NOT NULL,
    plus_ones INTEGER NOT NULL DEFAULT 0 CHECK (plus_ones >= 0),
    note VARCHAR(500),
    responded_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    -- Filled from the event by trigger; the foreign key below keeps the two consistent.
    community_id UUID NOT NULL,

    CONSTRAINT rsvps_event_id_user_id_family_member_id_key
        UNIQUE NULLS NOT DISTINCT (event_id, user_id, family_member_id),
    CONSTRAINT rsvps_event_fkey FOREIGN KEY (event_id, community_id)
        REFERENCES events(id, community_id) ON DELETE CASCADE,
    CONSTRAINT rsvps_family_member_fkey FOREIGN KEY (family_member_id, user_id)
        REFERENCES family_members(id, user_id) ON DELETE CASCADE
);

CREATE INDEX idx_rsvps_event ON rsvps(event_id);
CREATE INDEX idx_rsvps_community ON rsvps(community_id);
CREATE INDEX idx_rsvps_user ON rsvps(user_id);
