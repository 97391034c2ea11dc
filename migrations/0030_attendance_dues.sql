-- Dues per attendee (issue 24, item 8; docs/money.md, "Attendance fees"): dues charged to who
-- came to an event instead of to every member. `dues.amount` is then the amount per head, and
-- dues_attendees lists who owes them and for how many heads (their own answer, their plus-ones
-- and their family members' answers): each owes amount × heads. Dues with no rows here are owed
-- by every member, one head each, as before. The rows are written with the dues and never change
-- (orbit_app may only insert them); each names a member of the dues' community (the foreign key
-- to members: who answered an event is or was one).
ALTER TABLE dues ADD COLUMN linked_event_id UUID;
ALTER TABLE dues ADD CONSTRAINT dues_linked_event_fkey FOREIGN KEY (linked_event_id, community_id)
    REFERENCES events(id, community_id) ON DELETE SET NULL (linked_event_id);

CREATE TABLE dues_attendees (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    dues_id UUID NOT NULL,
    community_id UUID NOT NULL,
    user_id UUID NOT NULL,
    heads INTEGER NOT NULL CHECK (heads > 0 AND heads <= 1000),

    CONSTRAINT dues_attendees_once UNIQUE (dues_id, user_id),
    CONSTRAINT dues_attendees_dues_fkey FOREIGN KEY (dues_id, community_id) REFERENCES dues(id, community_id) ON DELETE CASCADE,
    CONSTRAINT dues_attendees_member_fkey FOREIGN KEY (community_id, user_id) REFERENCES members(community_id, user_id)
);

CREATE INDEX idx_dues_attendees_community ON dues_attendees(community_id);
CREATE INDEX idx_dues_attendees_user ON dues_attendees(user_id);

ALTER TABLE dues_attendees ENABLE ROW LEVEL SECURITY;
ALTER TABLE dues_attendees FORCE ROW LEVEL SECURITY;
