-- A deleted post, comment or chat message holds no text, ever (issue 52, item 6; docs/e2e.md):
-- neither plaintext nor ciphertext. Deleting a row removes its text in the same statement, and
-- the database refuses any deleted row that still has some: an UPDATE that sets `deleted_at` and
-- new plaintext together (which passed the end-to-end rule, sql/230_encryption.sql, as "a
-- deletion"), text written into a row already deleted, or an edit that raced the deletion.
-- (A poll's question and options stay with its deleted post: polls are never encrypted, and the
-- votes hang off them.)

-- Rows deleted before this rule lose the text they kept.
UPDATE posts SET content = NULL, content_encrypted = NULL, encryption_version = 0
WHERE deleted_at IS NOT NULL AND (content IS NOT NULL OR content_encrypted IS NOT NULL);
UPDATE comments SET content = NULL, content_encrypted = NULL, encryption_version = 0
WHERE deleted_at IS NOT NULL AND (content IS NOT NULL OR content_encrypted IS NOT NULL);
UPDATE messages SET text = NULL, content_encrypted = NULL, encryption_version = NULL
WHERE deleted_at IS NOT NULL AND (text IS NOT NULL OR content_encrypted IS NOT NULL);

-- A live comment has text or ciphertext (migration 0042); a deleted one has neither.
ALTER TABLE comments DROP CONSTRAINT comments_ciphertext_or_plaintext;
ALTER TABLE comments ADD CONSTRAINT comments_ciphertext_or_plaintext CHECK (
    content_encrypted IS NULL AND encryption_version = 0 AND (content IS NOT NULL OR deleted_at IS NOT NULL)
    OR content_encrypted IS NOT NULL AND encryption_version > 0 AND content IS NULL);

ALTER TABLE posts ADD CONSTRAINT posts_deleted_holds_no_text CHECK (
    deleted_at IS NULL OR content IS NULL AND content_encrypted IS NULL);
ALTER TABLE comments ADD CONSTRAINT comments_deleted_holds_no_text CHECK (
    deleted_at IS NULL OR content IS NULL AND content_encrypted IS NULL);
ALTER TABLE messages ADD CONSTRAINT messages_deleted_holds_no_text CHECK (
    deleted_at IS NULL OR text IS NULL AND content_encrypted IS NULL);
