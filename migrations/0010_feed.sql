-- The feed (issue 7).
--
-- * idx_posts_feed serves the feed's order and cursor: pinned posts first, then newest first,
--   ties broken by id, as the row comparison (is_pinned, created_at, id) < (cursor) in
--   descending order. A page is an index range scan whatever its depth.
-- * mentioned_user_ids: the members a post or comment mentions (@display name or @id), kept
--   for notifications.
-- * idx_comments_thread lists a post's comments in order, deleted ones included (a deleted
--   comment with replies still holds its thread).
CREATE INDEX idx_posts_feed ON posts (community_id, is_pinned DESC, created_at DESC, id DESC) WHERE deleted_at IS NULL;

ALTER TABLE posts ADD COLUMN mentioned_user_ids UUID[] NOT NULL DEFAULT '{}';
ALTER TABLE comments ADD COLUMN mentioned_user_ids UUID[] NOT NULL DEFAULT '{}';

CREATE INDEX idx_comments_thread ON comments (post_id, created_at, id);

-- Content limits (the spec's TEXT columns are unbounded; a feed is not a file store).
ALTER TABLE posts ADD CONSTRAINT posts_content_length CHECK (length(content) <= 10000);
ALTER TABLE comments ADD CONSTRAINT comments_content_length CHECK (length(content) BETWEEN 1 AND 5000);
