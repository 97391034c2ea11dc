import Foundation
import OrbitPostgres

/// What a new post is.
public struct PostDraft: Sendable {
    public var type: String
    public var content: String?
    public var mediaURLs: [String]
    /// Uploads of the community (photo posts); their URLs are added to `mediaURLs`.
    public var mediaIDs: [MediaID]
    public var poll: Poll?
    public var linkedEventID: EventID?
    public var isAnnouncement: Bool

    public init(
        type: String = "text", content: String? = nil, mediaURLs: [String] = [], mediaIDs: [MediaID] = [], poll: Poll? = nil,
        linkedEventID: EventID? = nil, isAnnouncement: Bool = false
    ) {
        self.type = type
        self.content = content
        self.mediaURLs = mediaURLs
        self.mediaIDs = mediaIDs
        self.poll = poll
        self.linkedEventID = linkedEventID
        self.isAnnouncement = isAnnouncement
    }
}

extension OrbitServices {
    static let postTypes = ["text", "photo", "announcement", "poll", "event_share"]

    // MARK: - Posts

    /// Posts to a community: admins always; members when `allowMemberPosts` is not false, and
    /// never announcements.
    public func createPost(in community: CommunityID, _ draft: PostDraft, as actor: UserID) async throws -> FeedPost {
        guard Self.postTypes.contains(draft.type) else {
            throw ServiceError.invalidInput(field: "type", reason: "must be one of \(Self.postTypes.joined(separator: ", "))")
        }
        let content = try draft.content.map { try Validate.text($0, field: "content", limit: 10_000, multiline: true) }
        let media = try draft.mediaURLs.map { try Validate.url($0, field: "media_urls") ?? "" }
        let poll = try draft.poll.map { try $0.validated(now: now()) }
        switch draft.type {
        case "poll" where poll == nil: throw ServiceError.invalidInput(field: "poll_data", reason: "is required for a poll")
        case "photo" where media.isEmpty && draft.mediaIDs.isEmpty:
            throw ServiceError.invalidInput(field: "media_urls", reason: "must hold the photo's URL")
        case "event_share" where draft.linkedEventID == nil:
            throw ServiceError.invalidInput(field: "linked_event_id", reason: "is required to share an event")
        case "text" where content == nil, "announcement" where content == nil:
            throw ServiceError.invalidInput(field: "content", reason: "must not be empty")
        default: break
        }
        if draft.type != "poll" && poll != nil { throw ServiceError.invalidInput(field: "poll_data", reason: "belongs to poll posts only") }
        let pollJSON = try poll.map { PostgresJSON(text: String(decoding: try Poll.encoder.encode($0), as: UTF8.self)) }
        let isAnnouncement = draft.isAnnouncement || draft.type == "announcement"
        return try await asUser(actor) { connection in
            let role = try await requireMember(actor, of: community, on: connection)
            if role != .admin {
                if isAnnouncement { throw ServiceError.forbidden(rule: "only admins can post announcements") }
                if try await self.community(community, on: connection).settings.allowMemberPosts == false {
                    throw ServiceError.forbidden(rule: "members cannot post in this community (settings.allowMemberPosts is false)")
                }
            }
            if let linked = draft.linkedEventID {
                let event = try await event(linked, on: connection)
                guard event.communityID == community else { throw ServiceError.notFound("Event \(linked) in this community") }
            }
            let mentions = try await mentionedMembers(in: content, community: community, on: connection)
            let media = media + (try await mediaURLs(draft.mediaIDs, in: community, on: connection))
            let id = PostID.random()
            try await connection.query(
                """
                INSERT INTO posts (id, community_id, author_id, type, content, media_urls, is_announcement, linked_event_id, poll_data, mentioned_user_ids)
                VALUES (\(id), \(community), \(actor), \(draft.type)::post_type, \(content), \(try PostgresJSON(encoding: media)), \(isAnnouncement),
                    \(draft.linkedEventID), \(pollJSON), \(mentions.map(\.uuid)))
                """
            )
            let link = ["post_id": id.description, "community_id": community.description]
            let summary = String((content ?? poll?.question ?? draft.type).prefix(140))
            try await notifyMembers(
                of: community, type: "new_post", title: isAnnouncement ? "Announcement" : "New post", body: summary, data: link, except: actor,
                on: connection
            )
            let mentioned = mentions.filter { $0 != actor }
            if !mentioned.isEmpty {
                try await notifyMembers(
                    of: community, type: "mention", title: "You were mentioned", body: summary, data: link, only: mentioned, on: connection)
            }
            return try await post(id, reader: actor, on: connection)
        }
    }

    /// One post as `reader` sees it.
    public func post(_ id: PostID, as actor: UserID) async throws -> FeedPost {
        try await asUser(actor) { try await post(id, reader: actor, on: $0) }
    }

    func post(_ id: PostID, reader: UserID, on connection: PostgresConnection) async throws -> FeedPost {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: Self.feedColumns),
                    (SELECT r.type::text FROM reactions r WHERE r.post_id = p.id AND r.user_id = \(reader)) AS my_reaction,
                    ARRAY(SELECT v.option_index FROM poll_votes v WHERE v.post_id = p.id AND v.user_id = \(reader) ORDER BY v.option_index) AS my_votes
                FROM posts p WHERE p.id = \(id) AND p.deleted_at IS NULL
                """
            ).first
        else { throw ServiceError.notFound("Post \(id)") }
        return try FeedPost(row: row)
    }

    static let feedColumns = """
        p.id, p.community_id, p.author_id, p.type::text AS type, p.content, p.media_urls, p.is_pinned, p.is_announcement,
        p.linked_event_id, p.poll_data, p.editable_until, p.reaction_counts, p.comment_count, p.created_at, p.updated_at,
        p.mentioned_user_ids, (extract(epoch FROM p.created_at) * 1000000)::bigint AS created_us
        """

    /// A community's feed: pinned posts first, then newest first, `limit` at a time. Pass the
    /// previous page's `next_cursor` for the next; new posts never shift later pages.
    public func feed(_ community: CommunityID, limit: Int = 20, cursor: String? = nil, as actor: UserID) async throws -> FeedPage {
        guard (1...100).contains(limit) else { throw ServiceError.invalidInput(field: "limit", reason: "must be between 1 and 100") }
        let after = try cursor.map(FeedCursor.init(decoding:))
        return try await asUser(actor) { connection in
            try await requireMember(actor, of: community, on: connection)
            let rows: PostgresRows
            if let after {
                rows = try await connection.query(
                    """
                    SELECT \(unescaped: Self.feedColumns),
                        (SELECT r.type::text FROM reactions r WHERE r.post_id = p.id AND r.user_id = \(actor)) AS my_reaction,
                        ARRAY(SELECT v.option_index FROM poll_votes v WHERE v.post_id = p.id AND v.user_id = \(actor) ORDER BY v.option_index) AS my_votes
                    FROM posts p
                    WHERE p.community_id = \(community) AND p.deleted_at IS NULL
                      AND (p.is_pinned, p.created_at, p.id) < (\(after.pinned), timestamptz 'epoch' + \(after.createdMicroseconds) * interval '1 microsecond', \(after.id))
                    ORDER BY p.is_pinned DESC, p.created_at DESC, p.id DESC
                    LIMIT \(limit + 1)
                    """
                )
            } else {
                rows = try await connection.query(
                    """
                    SELECT \(unescaped: Self.feedColumns),
                        (SELECT r.type::text FROM reactions r WHERE r.post_id = p.id AND r.user_id = \(actor)) AS my_reaction,
                        ARRAY(SELECT v.option_index FROM poll_votes v WHERE v.post_id = p.id AND v.user_id = \(actor) ORDER BY v.option_index) AS my_votes
                    FROM posts p
                    WHERE p.community_id = \(community) AND p.deleted_at IS NULL
                    ORDER BY p.is_pinned DESC, p.created_at DESC, p.id DESC
                    LIMIT \(limit + 1)
                    """
                )
            }
            var items: [FeedPost] = []
            var next: String?
            for (index, row) in rows.enumerated() {
                if index == limit {
                    let last = rows[limit - 1]
                    next =
                        FeedCursor(
                            pinned: try last.decode("is_pinned"), createdMicroseconds: try last.decode("created_us"), id: try last.decode("id")
                        ).encoded
                    break
                }
                items.append(try FeedPost(row: row))
            }
            return FeedPage(items: items, nextCursor: next)
        }
    }

    /// Posts of one's own can be edited and deleted for 24 hours (`editable_until`); admins
    /// any post at any time.
    func requirePostEditor(_ post: FeedPost, _ actor: UserID, rule: String, on connection: PostgresConnection) async throws {
        let role = try await requireMember(actor, of: post.communityID, on: connection)
        if role == .admin { return }
        guard post.authorID == actor else { throw ServiceError.forbidden(rule: "members can \(rule) only their own posts") }
        guard now() <= post.editableUntil else {
            throw ServiceError.forbidden(rule: "posts can be changed only within 24 hours (editable until \(post.editableUntil.formatted(.iso8601)))")
        }
    }

    /// Changes a post's text (and its mentions).
    public func editPost(_ id: PostID, content: String, as actor: UserID) async throws -> FeedPost {
        let content = try Validate.text(content, field: "content", limit: 10_000, multiline: true)
        return try await asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            try await requirePostEditor(current, actor, rule: "edit", on: connection)
            let mentions = try await mentionedMembers(in: content, community: current.communityID, on: connection)
            try await connection.query("UPDATE posts SET content = \(content), mentioned_user_ids = \(mentions.map(\.uuid)) WHERE id = \(id)")
            return try await post(id, reader: actor, on: connection)
        }
    }

    /// Soft-deletes a post.
    public func deletePost(_ id: PostID, as actor: UserID) async throws {
        try await asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            try await requirePostEditor(current, actor, rule: "delete", on: connection)
            try await connection.query("UPDATE posts SET deleted_at = now() WHERE id = \(id)")
        }
    }

    /// Pins or unpins a post (admins).
    public func setPinned(_ id: PostID, _ pinned: Bool, as actor: UserID) async throws -> FeedPost {
        try await asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            try await requireAdmin(actor, of: current.communityID, rule: "only admins can pin posts", on: connection)
            try await connection.query("UPDATE posts SET is_pinned = \(pinned) WHERE id = \(id)")
            return try await post(id, reader: actor, on: connection)
        }
    }

    // MARK: - Reactions

    /// Adds or changes the acting user's reaction (one per user and post).
    public func react(to id: PostID, type: String, as actor: UserID) async throws -> FeedPost {
        guard ["like", "love", "laugh", "celebrate"].contains(type) else {
            throw ServiceError.invalidInput(field: "type", reason: "must be like, love, laugh or celebrate")
        }
        return try await asUser(actor) { connection in
            // Row-level security shows a post to members of its community only.
            _ = try await post(id, reader: actor, on: connection)
            try await connection.query(
                """
                INSERT INTO reactions (post_id, user_id, type) VALUES (\(id), \(actor), \(type)::reaction_type)
                ON CONFLICT (post_id, user_id) DO UPDATE SET type = excluded.type WHERE reactions.type IS DISTINCT FROM excluded.type
                """
            )
            return try await post(id, reader: actor, on: connection)
        }
    }

    /// Takes the acting user's reaction back.
    public func removeReaction(from id: PostID, as actor: UserID) async throws -> FeedPost {
        try await asUser(actor) { connection in
            _ = try await post(id, reader: actor, on: connection)
            try await connection.query("DELETE FROM reactions WHERE post_id = \(id) AND user_id = \(actor)")
            return try await post(id, reader: actor, on: connection)
        }
    }

    // MARK: - Polls

    /// Votes for an option (zero-based). On a single-choice poll a new vote replaces the old one.
    public func vote(on id: PostID, option: Int, as actor: UserID) async throws -> FeedPost {
        try await asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            guard let poll = current.pollData else { throw ServiceError.invalidInput(field: "post", reason: "is not a poll") }
            if let closesAt = poll.closesAt, closesAt <= now() {
                throw ServiceError.conflict("The poll closed at \(closesAt.formatted(.iso8601)).")
            }
            guard poll.options.indices.contains(option) else {
                throw ServiceError.invalidInput(field: "option_index", reason: "must be between 0 and \(poll.options.count - 1)")
            }
            if current.myVotes.contains(option) { throw ServiceError.conflict("You already voted for option \(option).") }
            if !poll.allowMultiple && !current.myVotes.isEmpty {
                try await connection.query("UPDATE poll_votes SET option_index = \(option) WHERE post_id = \(id) AND user_id = \(actor)")
            } else {
                try await connection.query("INSERT INTO poll_votes (post_id, user_id, option_index) VALUES (\(id), \(actor), \(option))")
            }
            return try await post(id, reader: actor, on: connection)
        }
    }

    /// Retracts the acting user's vote for `option`, or all their votes on the poll.
    public func retractVote(on id: PostID, option: Int? = nil, as actor: UserID) async throws -> FeedPost {
        try await asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            if let closesAt = current.pollData?.closesAt, closesAt <= now() {
                throw ServiceError.conflict("The poll closed at \(closesAt.formatted(.iso8601)).")
            }
            try await connection.query(
                "DELETE FROM poll_votes WHERE post_id = \(id) AND user_id = \(actor) AND (\(option)::int IS NULL OR option_index = \(option))"
            )
            return try await post(id, reader: actor, on: connection)
        }
    }

    /// Votes per option, in the poll's order.
    public func pollResults(_ id: PostID, as actor: UserID) async throws -> [Int] {
        try await asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            guard let poll = current.pollData else { throw ServiceError.invalidInput(field: "post", reason: "is not a poll") }
            var counts = Array(repeating: 0, count: poll.options.count)
            for row in try await connection.query("SELECT option_index, count(*) AS n FROM poll_votes WHERE post_id = \(id) GROUP BY option_index") {
                let (index, count) = try row.decode((Int32, Int64).self)
                if counts.indices.contains(Int(index)) { counts[Int(index)] = Int(count) }
            }
            return counts
        }
    }

    // MARK: - Comments

    /// Comments on a post, or replies to a comment of the same post (`parent`).
    public func addComment(to post: PostID, content: String, parent: CommentID? = nil, as actor: UserID) async throws -> Comment {
        let content = try Validate.text(content, field: "content", limit: 5000, multiline: true)
        return try await asUser(actor) { connection in
            // Row-level security shows a post to members of its community only.
            let current = try await self.post(post, reader: actor, on: connection)
            if let parent {
                let onPost = try await connection.query("SELECT 1 FROM comments WHERE id = \(parent) AND post_id = \(post)")
                guard !onPost.isEmpty else { throw ServiceError.notFound("Comment \(parent) on post \(post)") }
            }
            let mentions = try await mentionedMembers(in: content, community: current.communityID, on: connection)
            let row = try await connection.query(
                """
                INSERT INTO comments AS c (post_id, author_id, parent_id, content, mentioned_user_ids)
                VALUES (\(post), \(actor), \(parent), \(content), \(mentions.map(\.uuid)))
                RETURNING \(unescaped: Comment.columns)
                """
            ).single()
            let comment = try Comment(row: row)
            let mentioned = mentions.filter { $0 != actor }
            if !mentioned.isEmpty {
                try await notifyMembers(
                    of: current.communityID, type: "mention", title: "You were mentioned", body: String(content.prefix(140)),
                    data: ["post_id": post.description, "comment_id": comment.id.description], only: mentioned, on: connection
                )
            }
            return comment
        }
    }

    /// Edits one's own comment.
    public func editComment(_ id: CommentID, content: String, as actor: UserID) async throws -> Comment {
        let content = try Validate.text(content, field: "content", limit: 5000, multiline: true)
        return try await asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT c.author_id, p.community_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = \(id) AND c.deleted_at IS NULL"
                ).first
            else { throw ServiceError.notFound("Comment \(id)") }
            let (author, community) = try row.decode((UserID, CommunityID).self)
            guard author == actor else { throw ServiceError.forbidden(rule: "members can edit only their own comments") }
            let mentions = try await mentionedMembers(in: content, community: community, on: connection)
            return try Comment(
                row: try await connection.query(
                    "UPDATE comments AS c SET content = \(content), mentioned_user_ids = \(mentions.map(\.uuid)) WHERE c.id = \(id) RETURNING \(unescaped: Comment.columns)"
                ).single()
            )
        }
    }

    /// Soft-deletes a comment: one's own, or any as an admin. Its replies stay.
    public func deleteComment(_ id: CommentID, as actor: UserID) async throws {
        try await asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT c.author_id, p.community_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = \(id) AND c.deleted_at IS NULL"
                ).first
            else { throw ServiceError.notFound("Comment \(id)") }
            let (author, community) = try row.decode((UserID, CommunityID).self)
            if author != actor {
                try await requireAdmin(actor, of: community, rule: "members can delete only their own comments", on: connection)
            }
            try await connection.query("UPDATE comments SET deleted_at = now() WHERE id = \(id)")
        }
    }

    /// A post's comments, oldest first, `limit` at a time after `after` (the last comment id of
    /// the previous page). Deleted comments appear (without content) only while they have replies.
    public func comments(on post: PostID, limit: Int = 50, after: CommentID? = nil, as actor: UserID) async throws -> [Comment] {
        guard (1...200).contains(limit) else { throw ServiceError.invalidInput(field: "limit", reason: "must be between 1 and 200") }
        return try await asUser(actor) { connection in
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

    // MARK: - Mentions

    /// Active members mentioned in `text` as `@<user id>` or `@<display name>` (longest names
    /// first, case-insensitive).
    func mentionedMembers(in text: String?, community: CommunityID, on connection: PostgresConnection) async throws -> [UserID] {
        guard let text, text.contains("@") else { return [] }
        let members = try await connection.query(
            "SELECT m.user_id, u.display_name FROM members m JOIN users u ON u.id = m.user_id WHERE m.community_id = \(community) AND m.left_at IS NULL"
        ).map { try $0.decode((UserID, String).self) }
        let lowered = text.lowercased()
        var found: [UserID] = []
        for (user, name) in members.sorted(by: { $0.1.count > $1.1.count }) {
            if lowered.contains("@" + user.description) || lowered.contains("@" + name.lowercased()) { found.append(user) }
        }
        return found.sorted()
    }
}
