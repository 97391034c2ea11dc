-- Pushes (issue 21): one row per notification and device it is sent to, so that each device gets
-- each notification at most once, whatever the number of servers and however a send ends.
--
-- The delivery job first hands notifications out: in one statement it marks a batch of
-- undelivered notifications delivered (FOR UPDATE SKIP LOCKED) and queues a row here for every
-- device of their users. It then claims due rows (state 'queued' → 'sending', FOR UPDATE SKIP
-- LOCKED, committed before anything is sent) and records how each send ended:
--   sent     APNs accepted it (apns_id is APNs' id for it);
--   queued   again, with next_attempt_at later: APNs said 429 or 5xx, or the connection failed
--            before the request left, so sending again cannot send it twice;
--   failed   APNs refused it for good (400, 403, 413, 410 — which also removes the device), the
--            device moved to another user, or the send ended without an answer (a timeout after
--            the request left): it may have arrived, so it is not sent again.
-- A server that dies between claim and record leaves its rows 'sending'; they are never sent
-- again (at most once) and are marked failed after an hour.
CREATE TABLE push_deliveries (
    notification_id UUID NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    device_id UUID NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sending', 'sent', 'failed')),
    attempts INT NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    claimed_at TIMESTAMP WITH TIME ZONE,
    finished_at TIMESTAMP WITH TIME ZONE,
    apns_id TEXT,
    error TEXT,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, device_id)
);
CREATE INDEX idx_push_deliveries_due ON push_deliveries (next_attempt_at) WHERE state = 'queued';
CREATE INDEX idx_push_deliveries_sending ON push_deliveries (claimed_at) WHERE state = 'sending';
CREATE INDEX idx_push_deliveries_device ON push_deliveries (device_id);

-- Operators' table: orbit_app has no rights on it (sql/090) and no policy.
ALTER TABLE push_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE push_deliveries FORCE ROW LEVEL SECURITY;

-- Handing a notification out is now one statement with no lease; the claim columns of 0015 go.
ALTER TABLE notifications DROP COLUMN delivery_claim;
ALTER TABLE notifications DROP COLUMN delivery_claimed_at;
