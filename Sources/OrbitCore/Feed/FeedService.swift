import Foundation
package import OrbitPostgres

/// A community's feed (spec: Posts, Comments, Reactions, Poll Votes): posts with pinning and
/// announcements, reactions, polls, threaded comments, and the notifications they cause.
package struct FeedService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    // MARK: - Posts

    /// Posts to a community: admins always; members when `allowMemberPosts` is not false, and
    /// never announcements.
    package func createPost(in community: CommunityID, _ draft: PostDraft, as actor: UserID) async throws -> FeedPost {
        let content = try draft.content.map { try Validate.text($0, field: "content", limit: 10_000, multiline: true) }
        try EncryptedContent.requireOneForm(content, draft.encrypted)
        let media = try draft.mediaURLs.map { try Validate.url($0, field: "media_urls") ?? "" }
        let poll = try draft.poll.map { try $0.validated(now: runner.now()) }
        switch draft.type {
        case .poll where poll == nil: throw ServiceError.invalidInput(field: "poll_data", reason: "is required for a poll")
        case .photo where media.isEmpty && draft.mediaIDs.isEmpty:
            throw ServiceError.invalidInput(field: "media_urls", reason: "must hold the photo's URL")
        case .eventShare where draft.linkedEventID == nil:
            throw ServiceError.invalidInput(field: "linked_event_id", reason: "is required to share an event")
        case .text where content == nil && draft.encrypted == nil, .announcement where content == nil && draft.encrypted == nil:
            throw ServiceError.invalidInput(field: "content", reason: "must not be empty")
        default: break
        }
        if draft.type != .poll && poll != nil { throw ServiceError.invalidInput(field: "poll_data", reason: "belongs to poll posts only") }
        let pollJSON = try poll.map { PostgresJSON(text: String(decoding: try Poll.encoder.encode($0), as: UTF8.self)) }
        let isAnnouncement = draft.isAnnouncement || draft.type == .announcement
        return try await runner.asUser(actor) { connection in
            var media = media
            if !draft.mediaIDs.isEmpty {
                // Uploads: their URLs go into the row, and a missing one is an error of its own,
                // which must not come before the permission checks.
                try await requireMayPost(in: community, announcement: isAnnouncement, linkedEvent: draft.linkedEventID, actor, on: connection)
                media += try await MediaService(runner).urls(of: draft.mediaIDs, in: community, on: connection)
            }
            // Mentions are read first (one round trip, only when the text has an "@"); a
            // non-member reads no one, and is refused below.
            let mentions = try await Self.mentionedMembers(in: content, community: community, on: connection)
            let id = PostID.new(in: .posts)
            let link = ["post_id": id.description, "community_id": community.description]
            let summary = draft.encrypted != nil ? "Encrypted post" : String((content ?? poll?.question ?? draft.type.rawValue).prefix(140))
            let mentioned = mentions.filter { $0 != actor }
            // One round trip: the post, written only if the actor may post it here (the rules of
            // `requireMayPost`), returned as its author sees it, and its notifications.
            var statements: [PostgresQuery] = [
                """
                INSERT INTO posts AS p (id, community_id, author_id, type, content, content_encrypted, encryption_version, media_urls,
                    is_announcement, linked_event_id, poll_data, mentioned_user_ids)
                SELECT \(id), c.id, \(actor), \(draft.type)::post_type, \(content), \(draft.encrypted?.ciphertext),
                    \(draft.encrypted?.keyVersion ?? 0)::int, \(try PostgresJSON(encoding: media)), \(isAnnouncement),
                    \(draft.linkedEventID), \(pollJSON), \(mentions.map(\.uuid))
                FROM communities c
                JOIN members m ON m.community_id = c.id AND m.user_id = \(actor) AND m.left_at IS NULL
                WHERE c.id = \(community)
                  AND (m.role = 'admin' OR (NOT \(isAnnouncement) AND (c.settings -> 'allowMemberPosts') IS DISTINCT FROM 'false'::jsonb))
                  AND (\(draft.linkedEventID)::uuid IS NULL
                       OR EXISTS (SELECT FROM events e WHERE e.id = \(draft.linkedEventID) AND e.community_id = c.id AND e.deleted_at IS NULL))
                RETURNING \(unescaped: Self.feedColumns), NULL::text AS my_reaction, '{}'::int[] AS my_votes
                """,
                try NotificationService.notifyMembersStatement(
                    of: community, type: .newPost, title: isAnnouncement ? "Announcement" : "New post", body: summary, data: link, except: actor,
                    ifWritten: WrittenRow(.posts, id.uuid)),
            ]
            if !mentioned.isEmpty {
                statements.append(
                    try NotificationService.notifyMembersStatement(
                        of: community, type: .mention, title: "You were mentioned", body: summary, data: link, only: mentioned,
                        ifWritten: WrittenRow(.posts, id.uuid)))
            }
            guard let row = try await connection.pipeline(statements)[0].first else {
                // Nothing was written: the checks the statement holds say why.
                try await requireMayPost(in: community, announcement: isAnnouncement, linkedEvent: draft.linkedEventID, actor, on: connection)
                throw ServiceError.changedMeanwhile
            }
            return try FeedPost(row: row)
        }
    }

    /// Who may post what (spec, "Permission Matrix"): members of the community; announcements
    /// only admins, and plain posts members too unless `settings.allowMemberPosts` is false. A
    /// linked event must be of the same community.
    private func requireMayPost(
        in community: CommunityID, announcement: Bool, linkedEvent: EventID?, _ actor: UserID, on connection: PostgresConnection
    ) async throws {
        let role = try await runner.requireMember(actor, of: community, on: connection)
        if role != .admin {
            if announcement { throw ServiceError.forbidden(rule: "only admins can post announcements") }
            if try await CommunityService.community(community, on: connection).settings.allowMemberPosts == false {
                throw ServiceError.forbidden(rule: "members cannot post in this community (settings.allowMemberPosts is false)")
            }
        }
        if let linkedEvent {
            let event = try await EventService.event(linkedEvent, on: connection)
            guard event.communityID == community else { throw ServiceError.notFound("Event \(linkedEvent) in this community") }
        }
    }

    /// One post as `reader` sees it.
    package func post(_ id: PostID, as actor: UserID) async throws -> FeedPost {
        try await runner.asUser(actor) { try await post(id, reader: actor, on: $0) }
    }

    func post(_ id: PostID, reader: UserID, on connection: PostgresConnection) async throws -> FeedPost {
        guard let row = try await connection.query(Self.postQuery(id, reader: reader)).first else { throw ServiceError.notFound("Post \(id)") }
        return try FeedPost(row: row)
    }

    /// One post as `reader` sees it, or no row (`post(_:reader:on:)`, or a pipeline's last word).
    static func postQuery(_ id: PostID, reader: UserID) -> PostgresQuery {
        """
        SELECT \(unescaped: Self.feedColumns),
            (SELECT r.type::text FROM reactions r WHERE r.post_id = p.id AND r.user_id = \(reader)) AS my_reaction,
            ARRAY(SELECT v.option_index FROM poll_votes v WHERE v.post_id = p.id AND v.user_id = \(reader) ORDER BY v.option_index) AS my_votes
        FROM posts p WHERE p.id = \(id) AND p.deleted_at IS NULL
        """
    }

    /// `postQuery` for many posts at once (the change feed reads a page's posts in one query).
    static func postsQuery(_ ids: [UUID], reader: UserID) -> PostgresQuery {
        """
        SELECT \(unescaped: Self.feedColumns),
            (SELECT r.type::text FROM reactions r WHERE r.post_id = p.id AND r.user_id = \(reader)) AS my_reaction,
            ARRAY(SELECT v.option_index FROM poll_votes v WHERE v.post_id = p.id AND v.user_id = \(reader) ORDER BY v.option_index) AS my_votes
        FROM posts p WHERE p.id = ANY(\(ids)) AND p.deleted_at IS NULL
        """
    }

    static let feedColumns = """
        p.id, p.community_id, p.author_id, p.type::text AS type, p.content, p.content_encrypted, p.encryption_version, p.media_urls,
        p.is_pinned, p.is_announcement,
        p.linked_event_id, p.poll_data, p.editable_until, p.reaction_counts, p.comment_count, p.created_at, p.updated_at,
        p.mentioned_user_ids, (extract(epoch FROM p.created_at) * 1000000)::bigint AS created_us,
        CASE WHEN p.poll_data IS NOT NULL THEN ARRAY(
            SELECT (SELECT count(*) FROM poll_votes v WHERE v.post_id = p.id AND v.option_index = option)::int
            FROM generate_series(0, jsonb_array_length(p.poll_data -> 'options') - 1) AS option ORDER BY option
        ) END AS poll_results
        """

    /// A community's feed: pinned posts first, then newest first, `limit` at a time. Pass the
    /// previous page's `next_cursor` for the next; new posts never shift later pages.
    package func page(of community: CommunityID, limit: Int = 20, cursor: String? = nil, as actor: UserID) async throws -> FeedPage {
        try Validate.limit(limit, in: 1...100)
        let page = Self.pageQuery(of: community, limit: limit, after: try cursor.map(FeedCursor.init(decoding:)), reader: actor)
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(actor, of: community, on: connection, page)
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

    /// The statement of a feed page (`page(of:)`), read as `reader` under row-level security:
    /// `limit + 1` posts after `after`, pinned first, newest first. `orbit-bench feed` shows its
    /// plan.
    package static func pageQuery(of community: CommunityID, limit: Int, after: FeedCursor?, reader: UserID) -> PostgresQuery {
        // Without a cursor the first page: no keyset condition at all (the planner reads the
        // index from its start).
        let past: PostgresQuery =
            after.map {
                """
                AND (p.is_pinned, p.created_at, p.id) < (\($0.pinned), timestamptz 'epoch' + \($0.createdMicroseconds) * interval '1 microsecond', \($0.id))
                """
            } ?? ""
        return """
            SELECT \(unescaped: Self.feedColumns),
                (SELECT r.type::text FROM reactions r WHERE r.post_id = p.id AND r.user_id = \(reader)) AS my_reaction,
                ARRAY(SELECT v.option_index FROM poll_votes v WHERE v.post_id = p.id AND v.user_id = \(reader) ORDER BY v.option_index) AS my_votes
            FROM posts p
            WHERE p.community_id = \(community) AND p.deleted_at IS NULL
              \(past)
            ORDER BY p.is_pinned DESC, p.created_at DESC, p.id DESC
            LIMIT \(limit + 1)
            """
    }

    /// Posts of one's own can be edited and deleted for 24 hours (`editable_until`); admins
    /// any post at any time.
    func requirePostEditor(_ post: FeedPost, _ actor: UserID, rule: String, on connection: PostgresConnection) async throws {
        let role = try await runner.requireMember(actor, of: post.communityID, on: connection)
        if role == .admin { return }
        guard post.authorID == actor else { throw ServiceError.forbidden(rule: "members can \(rule) only their own posts") }
        guard runner.now() <= post.editableUntil else {
            throw ServiceError.forbidden(rule: "posts can be changed only within 24 hours (editable until \(post.editableUntil.formatted(.iso8601)))")
        }
    }

    /// Changes a post's text (and its mentions), or puts new ciphertext in its place.
    package func editPost(_ id: PostID, content: String?, encrypted: EncryptedContent? = nil, as actor: UserID) async throws -> FeedPost {
        let content = try content.map { try Validate.text($0, field: "content", limit: 10_000, multiline: true) }
        try EncryptedContent.requireOneForm(content, encrypted, required: true)
        return try await runner.asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            try await requirePostEditor(current, actor, rule: "edit", on: connection)
            let mentions = try await Self.mentionedMembers(in: content, community: current.communityID, on: connection)
            // The UPDATE checks the deletion itself: a delete that committed after the read above
            // leaves nothing to edit (a deleted post holds no text).
            let edited = try await connection.query(
                """
                UPDATE posts SET content = \(content), content_encrypted = \(encrypted?.ciphertext),
                    encryption_version = \(encrypted?.keyVersion ?? 0)::int, mentioned_user_ids = \(mentions.map(\.uuid))
                WHERE id = \(id) AND deleted_at IS NULL
                """)
            guard edited.affectedRows == 1 else { throw ServiceError.notFound("Post \(id)") }
            return try await post(id, reader: actor, on: connection)
        }
    }

    /// Soft-deletes a post.
    package func deletePost(_ id: PostID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            try await requirePostEditor(current, actor, rule: "delete", on: connection)
            // Its text goes with it (migration 0047: a deleted post holds none).
            try await connection.query(
                """
                UPDATE posts SET deleted_at = now(), content = NULL, content_encrypted = NULL, encryption_version = 0
                WHERE id = \(id) AND deleted_at IS NULL
                """)
        }
    }

    /// Pins or unpins a post (admins).
    package func setPinned(_ id: PostID, _ pinned: Bool, as actor: UserID) async throws -> FeedPost {
        try await runner.asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            try await runner.requireAdmin(actor, of: current.communityID, rule: "only admins can pin posts", on: connection)
            try await connection.query("UPDATE posts SET is_pinned = \(pinned) WHERE id = \(id)")
            return try await post(id, reader: actor, on: connection)
        }
    }

    // MARK: - Mentions

    /// Active members mentioned in `text` as `@<user id>` or `@<display name>` (longest names
    /// first, case-insensitive).
    static func mentionedMembers(in text: String?, community: CommunityID, on connection: PostgresConnection) async throws -> [UserID] {
        guard let text, text.contains("@") else { return [] }
        return try mentions(in: text, among: try await connection.query(mentionable(in: community)))
    }

    /// The active members of a community with their display names, for `mentions(in:among:)`.
    static func mentionable(in community: CommunityID) -> PostgresQuery {
        "SELECT m.user_id, u.display_name FROM members m JOIN users u ON u.id = m.user_id WHERE m.community_id = \(community) AND m.left_at IS NULL"
    }

    /// `mentionable` for the community of a post.
    static func mentionable(onPost post: PostID) -> PostgresQuery {
        """
        SELECT m.user_id, u.display_name FROM posts p JOIN members m ON m.community_id = p.community_id JOIN users u ON u.id = m.user_id
        WHERE p.id = \(post) AND m.left_at IS NULL
        """
    }

    /// Which of `members` (rows of `mentionable`) `text` mentions.
    static func mentions(in text: String, among members: PostgresRows) throws -> [UserID] {
        let members = try members.map { try $0.decode((UserID, String).self) }
        let lowered = text.lowercased()
        var found: [UserID] = []
        for (user, name) in members.sorted(by: { $0.1.count > $1.1.count }) {
            if lowered.contains("@" + user.description) || lowered.contains("@" + name.lowercased()) { found.append(user) }
        }
        return found.sorted()
    }
}
