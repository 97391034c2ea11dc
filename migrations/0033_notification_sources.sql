-- Deleted means gone (issue 37, item 5; docs/security.md): notifications copy the text of what
-- they are about (a chat message's text, a post's first 140 characters, a comment's), and keep
-- it for 90 days. sql/056_notification_sources.sql deletes them with their message, post or
-- comment and rewrites them when it is edited; these indexes find them by the id in `data`.
CREATE INDEX idx_notifications_message ON notifications ((data ->> 'message_id')) WHERE data ? 'message_id';
CREATE INDEX idx_notifications_post ON notifications ((data ->> 'post_id')) WHERE data ? 'post_id';
CREATE INDEX idx_notifications_comment ON notifications ((data ->> 'comment_id')) WHERE data ? 'comment_id';
