import Foundation
import OrbitPostgres

/// Comments on posts, threaded one level deep or more (a reply names its parent).
extension FeedService {
    /// Comments on a post, or replies to a comment of the same post (`parent`).
    /// With `encrypted`, the comment is ciphertext (docs/e2e.md) and `content` is left out.
    package func addComment(
        to post: PostID, content: String?, encrypted: EncryptedContent? = nil, parent: CommentID? = nil, as actor: UserID
    ) async throws -> Comment {
        let content = try content.map { try Validate.text($0, field: "content", limit: 5000, multiline: true) }
        try EncryptedContent.requireOneForm(content, encrypted, required: true)
        return try await runner.asUser(actor) { connection in
            // Mentions are read first, with the post's community (one round trip, only when the
            // text has an "@"); someone who cannot see the post reads no one.
            var mentions: [UserID] = []
            var community: CommunityID?
            if let content, content.contains("@") {
                let results = try await connection.pipeline([
                    "SELECT community_id FROM posts WHERE id = \(post) AND deleted_at IS NULL",
                    Self.mentionable(onPost: post),
                ])
                community = try results[0].first?.decode("community_id", as: CommunityID.self)
                mentions = try Self.mentions(in: content, among: results[1])
            }
            let id = CommentID.new(in: .comments)
            let mentioned = mentions.filter { $0 != actor }
            // One round trip: the comment, written only if the actor sees the post (row-level
            // security shows a post to members of its community only) and the parent is one of
            // its comments, and the notifications of the people it mentions.
            var statements: [PostgresQuery] = [
                """
                INSERT INTO comments AS c (id, post_id, author_id, parent_id, content, content_encrypted, encryption_version, mentioned_user_ids)
                SELECT \(id), p.id, \(actor), \(parent), \(content), \(encrypted?.ciphertext), \(encrypted?.keyVersion ?? 0)::int,
                    \(mentions.map(\.uuid))
                FROM posts p
                WHERE p.id = \(post) AND p.deleted_at IS NULL
                  AND (\(parent)::uuid IS NULL OR EXISTS (SELECT FROM comments x WHERE x.id = \(parent) AND x.post_id = p.id))
                RETURNING \(unescaped: Comment.columns)
                """
            ]
            if let community, !mentioned.isEmpty {
                statements.append(
                    try NotificationService.notifyMembersStatement(
                        of: community, type: .mention, title: "You were mentioned", body: String((content ?? "").prefix(140)),
                        data: ["post_id": post.description, "comment_id": id.description], only: mentioned,
                        ifWritten: WrittenRow(.comments, id.uuid)))
            }
            guard let row = try await connection.pipeline(statements)[0].first else {
                // Nothing was written: say why.
                _ = try await self.post(post, reader: actor, on: connection)
                if let parent, try await connection.query("SELECT 1 FROM comments WHERE id = \(parent) AND post_id = \(post)").isEmpty {
                    throw ServiceError.notFound("Comment \(parent) on post \(post)")
                }
                throw ServiceError.changedMeanwhile
            }
            return try Comment(row: row)
        }
    }

    /// Edits one's own comment (new text, or new ciphertext).
    package func editComment(_ id: CommentID, content: String?, encrypted: EncryptedContent? = nil, as actor: UserID) async throws -> Comment {
        let content = try content.map { try Validate.text($0, field: "content", limit: 5000, multiline: true) }
        try EncryptedContent.requireOneForm(content, encrypted, required: true)
        return try await runner.asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT c.author_id, p.community_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = \(id) AND c.deleted_at IS NULL"
                ).first
            else { throw ServiceError.notFound("Comment \(id)") }
            let (author, community) = try row.decode((UserID, CommunityID).self)
            guard author == actor else { throw ServiceError.forbidden(rule: "members can edit only their own comments") }
            let mentions = try await Self.mentionedMembers(in: content, community: community, on: connection)
            // The UPDATE checks the deletion itself: one that committed after the read above leaves
            // nothing to edit.
            guard
                let edited = try await connection.query(
                    """
                    UPDATE comments AS c SET content = \(content), content_encrypted = \(encrypted?.ciphertext),
                        encryption_version = \(encrypted?.keyVersion ?? 0)::int, mentioned_user_ids = \(mentions.map(\.uuid))
                    WHERE c.id = \(id) AND c.deleted_at IS NULL RETURNING \(unescaped: Comment.columns)
                    """
                ).first
            else { throw ServiceError.notFound("Comment \(id)") }
            return try Comment(row: edited)
        }
    }

    /// Soft-deletes a comment: one's own, or any as an admin. Its replies stay.
    package func deleteComment(_ id: CommentID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT c.author_id, p.community_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = \(id) AND c.deleted_at IS NULL"
                ).first
            else { throw ServiceError.notFound("Comment \(id)") }
            let (author, community) = try row.decode((UserID, CommunityID).self)
            if author != actor {
                try await runner.requireAdmin(actor, of: community, rule: "members can delete only their own comments", on: connection)
            }
            // Its text goes with it (migration 0047); its replies stay.
            try await connection.query(
                """
                UPDATE comments SET deleted_at = now(), content = NULL, content_encrypted = NULL, encryption_version = 0
                WHERE id = \(id) AND deleted_at IS NULL
                """)
        }
    }

    /// A post's comments, oldest first, `limit` at a time after `after` (the last comment id of
    /// the previous page). Deleted comments appear (without content) only while they have replies.
    package func comments(on post: PostID, limit: Int = 50, after: CommentID? = nil, as actor: UserID) async throws -> [Comment] {
        try Validate.limit(limit, in: 1...200)
        return try await runner.asUserReading(actor) { connection in
            _ = try await self.post(post, reader: actor, on: connection)
            return try await connection.query(
                """
                SELECT \(unescaped: Comment.columns) FROM comments c
                WHERE c.post_id = \(post)
                  AND (c.deleted_at IS NULL OR EXISTS (SELECT FROM comments r WHERE r.parent_id = c.id AND r.deleted_at IS NULL))
                  AND (\(after)::uuid IS NULL OR (c.created_at, c.id) > (SELECT a.created_at, a.id FROM comments a WHERE a.id = \(after)))
                ORDER BY c.created_at, c.id LIMIT \(limit)
                """
            ).map(Comment.init(row:))
        }
    }

    /// One comment the actor can see; a deleted one is not found.
    package func comment(_ id: CommentID, as actor: UserID) async throws -> Comment {
        try await runner.asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT \(unescaped: Comment.columns) FROM comments c WHERE c.id = \(id) AND c.deleted_at IS NULL"
                ).first
            else { throw ServiceError.notFound("Comment \(id)") }
            return try Comment(row: row)
        }
    }
}
