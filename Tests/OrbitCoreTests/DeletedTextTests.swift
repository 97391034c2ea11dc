import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Deleted means gone (issue 37, item 5): the text a notification copied from a chat message, a
/// post or a comment follows it — deleted with it, edited with it — in GET /notifications and in
/// the change feed.
@Suite("Deleted text is gone from notifications and the change feed")
struct DeletedTextTests {
    /// Everything `user` can read of their notifications and the community's change feed, as JSON
    /// text (what an app would have).
    static func visible(to user: UserID, in community: CommunityID, _ services: OrbitServices) async throws -> String {
        let notifications = try await services.notifications.list(limit: 200, as: user)
        var feed = try await services.sync.changes(of: community, as: user)
        var pages = [feed]
        while feed.hasMore {
            feed = try await services.sync.changes(of: community, cursor: feed.nextCursor, as: user)
            pages.append(feed)
        }
        let encoder = JSONEncoder()
        return String(decoding: try encoder.encode(notifications), as: UTF8.self) + String(decoding: try encoder.encode(pages), as: UTF8.self)
    }

    /// The bodies of `user`'s notifications about the source `key` (message_id, post_id, comment_id) = `id`.
    static func bodies(of user: UserID, about key: String, _ id: String, _ services: OrbitServices) async throws -> [String] {
        try await services.notifications.list(limit: 200, as: user).items.filter { field(key, of: $0) == id }.map(\.body)
    }

    /// A string field of a notification's `data`.
    static func field(_ key: String, of notification: AppNotification) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(notification.data.utf8)) as? [String: Any]
        return object?[key] as? String
    }

    @Test("a chat message's push notification shows its edit, and goes with it when deleted, from the list and the feed")
    func chatMessages() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let (conversation, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            let (message, _) = try await services.chat.send(to: conversation.id, text: "The door code is 4711", as: cast.admin)
            let id = message.id.description
            #expect(try await Self.bodies(of: cast.member, about: "message_id", id, services) == ["The door code is 4711"])
            // A cursor from before the edit: what a phone that synced then would pull next.
            let before = try await services.sync.changes(of: cast.community, as: cast.member)

            _ = try await services.chat.edit(message.id, text: "The door code is 8812", as: cast.admin)
            #expect(try await Self.bodies(of: cast.member, about: "message_id", id, services) == ["The door code is 8812"])
            #expect(!(try await Self.visible(to: cast.member, in: cast.community, services)).contains("door code is 4711"))

            try await services.chat.delete(message.id, as: cast.admin)
            #expect(try await Self.bodies(of: cast.member, about: "message_id", id, services).isEmpty)
            #expect(!(try await Self.visible(to: cast.member, in: cast.community, services)).contains("door code is 8812"))
            // The phone that synced before: its next pull deletes the notification it holds.
            let next = try await services.sync.changes(of: cast.community, cursor: before.nextCursor, as: cast.member)
            #expect(next.changes.contains { $0.entity == .notification && $0.op == .delete }, "\(next.changes)")
        }
    }

    @Test("a deleted post's new-post and mention notifications are gone; an edit rewrites them and drops who is no longer mentioned")
    func posts() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "@Max Member secret plan A"), as: cast.admin)
            let id = post.id.description
            #expect(
                try await Self.bodies(of: cast.member, about: "post_id", id, services) == ["@Max Member secret plan A", "@Max Member secret plan A"])

            _ = try await services.feed.editPost(post.id, content: "Plan B, for everyone", as: cast.admin)
            // Still told of the post, with its new text; no longer mentioned.
            let after = try await services.notifications.list(limit: 200, as: cast.member).items.filter { Self.field("post_id", of: $0) == id }
            #expect(after.map(\.type) == [.newPost] && after.map(\.body) == ["Plan B, for everyone"], "\(after)")
            #expect(!(try await Self.visible(to: cast.member, in: cast.community, services)).contains("plan A"))

            try await services.feed.deletePost(post.id, as: cast.admin)
            #expect(try await Self.bodies(of: cast.member, about: "post_id", id, services).isEmpty)
            #expect(!(try await Self.visible(to: cast.member, in: cast.community, services)).contains("Plan B"))
        }
    }

    @Test("a deleted comment's mention notification is gone; an edited one shows the new text")
    func comments() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "Saturday?"), as: cast.admin)
            let comment = try await services.feed.addComment(to: post.id, content: "@Ada Admin my number is 555-0199", as: cast.member)
            let id = comment.id.description
            #expect(try await Self.bodies(of: cast.admin, about: "comment_id", id, services) == ["@Ada Admin my number is 555-0199"])
            _ = try await services.feed.editComment(comment.id, content: "@Ada Admin call me", as: cast.member)
            #expect(try await Self.bodies(of: cast.admin, about: "comment_id", id, services) == ["@Ada Admin call me"])
            #expect(!(try await Self.visible(to: cast.admin, in: cast.community, services)).contains("555-0199"))
            try await services.feed.deleteComment(comment.id, as: cast.member)
            #expect(try await Self.bodies(of: cast.admin, about: "comment_id", id, services).isEmpty)
            #expect(!(try await Self.visible(to: cast.admin, in: cast.community, services)).contains("call me"))
        }
    }

    @Test("a deleted post, comment or message keeps no text in its row (issue 52, item 6)")
    func rowsHoldNoText() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "Gate code 1234"), as: cast.admin)
            let comment = try await services.feed.addComment(to: post.id, content: "Mine is 5678", as: cast.member)
            let other = try await services.feed.addComment(to: post.id, content: "Reply stays", as: cast.member)
            let (conversation, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            let (message, _) = try await services.chat.send(to: conversation.id, text: "Alarm 9012", as: cast.admin)
            try await services.feed.deleteComment(comment.id, as: cast.member)
            try await services.chat.delete(message.id, as: cast.admin)
            try await services.feed.deletePost(post.id, as: cast.admin)
            let kept = try await database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT (SELECT count(*) FROM posts WHERE deleted_at IS NOT NULL AND (content IS NOT NULL OR content_encrypted IS NOT NULL))
                         + (SELECT count(*) FROM comments WHERE deleted_at IS NOT NULL AND (content IS NOT NULL OR content_encrypted IS NOT NULL))
                         + (SELECT count(*) FROM messages WHERE deleted_at IS NOT NULL AND (text IS NOT NULL OR content_encrypted IS NOT NULL))
                         AS kept,
                        (SELECT count(*) FROM posts WHERE deleted_at IS NOT NULL) + (SELECT count(*) FROM comments WHERE deleted_at IS NOT NULL)
                         + (SELECT count(*) FROM messages WHERE deleted_at IS NOT NULL) AS deleted,
                        (SELECT content FROM comments WHERE id = \(other.id)) AS other
                    """
                ).single().decode((Int64, Int64, String?).self)
            }
            #expect(kept.0 == 0)
            #expect(kept.1 == 3)
            #expect(kept.2 == "Reply stays")
        }
    }

    /// Waits until a statement of this test's database that begins with `prefix` waits for a lock.
    static func waitForLock(_ database: TestDatabase, statement prefix: String) async throws -> Bool {
        try await database.withConnection { watcher in
            for _ in 0..<400 {
                let waiting = try await watcher.query(
                    """
                    SELECT count(*) AS n FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'
                      AND starts_with(query, \(prefix))
                    """
                ).single().decode("n", as: Int64.self)
                if waiting > 0 { return true }
                try await Task.sleep(for: .milliseconds(25))
            }
            return false
        }
    }

    @Test("an edit that races a deletion does not land: the update itself checks that the row is not deleted")
    func editRacingDelete() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "First words"), as: cast.admin)
            let (conversation, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            let (message, _) = try await services.chat.send(to: conversation.id, text: "First words", as: cast.admin)
            // The deletion, the edit's UPDATE, the edit, and what it must answer.
            let cases: [(String, String, @Sendable () async throws -> Void, ServiceError)] = [
                (
                    "UPDATE posts SET deleted_at = now(), content = NULL WHERE id = '\(post.id)'", "UPDATE posts SET content",
                    { _ = try await services.feed.editPost(post.id, content: "Last words", as: cast.admin) }, .notFound("Post \(post.id)")
                ),
                (
                    "UPDATE messages SET deleted_at = now(), text = NULL WHERE id = '\(message.id)'", "UPDATE messages AS m SET text",
                    { _ = try await services.chat.edit(message.id, text: "Last words", as: cast.admin) },
                    .conflict(field: "message", reason: "was deleted")
                ),
            ]
            for (deletion, edit, body, expected) in cases {
                try await database.withConnection { deleter in
                    // The deletion holds the row, not committed yet, while the edit reads it live.
                    try await deleter.query("BEGIN")
                    try await deleter.query("\(unescaped: deletion)")
                    let editing = Task { await serviceError { try await body() } }
                    #expect(try await Self.waitForLock(database, statement: edit), "the edit did not wait for the deletion")
                    try await deleter.query("COMMIT")
                    let error = await editing.value
                    #expect(error == expected, "\(String(describing: error))")
                }
            }
            let kept = try await database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT (SELECT count(*) FROM posts WHERE content = 'Last words') + (SELECT count(*) FROM messages WHERE text = 'Last words') AS n
                    """
                ).single().decode("n", as: Int64.self)
            }
            #expect(kept == 0)
        }
    }
}
