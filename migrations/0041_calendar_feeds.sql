-- Calendar feeds (issue 40, docs/calendar-feeds.md): each user's secret address of an iCalendar
-- feed of their communities' events, which a phone's calendar subscribes to. The token is the
-- address's only credential: shown again to its owner whenever asked (so it is kept as sent, as
-- a calendar service's "secret address" is), replaced by a rotation, gone when revoked.
CREATE TABLE calendar_feeds (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id UUID NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    -- 32 random bytes, base64url without padding.
    token TEXT NOT NULL UNIQUE CHECK (token ~ '^[A-Za-z0-9_-]{43}$'),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

ALTER TABLE calendar_feeds ENABLE ROW LEVEL SECURITY;
ALTER TABLE calendar_feeds FORCE ROW LEVEL SECURITY;
