import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// A follower of a community's change feed: pulls pages until it is up to date and keeps a copy,
/// entity by entity, as the app's local store would.
struct Follower {
    var user: UserID
    /// nil: the user's own feed (`GET /users/me/changes`).
    var community: CommunityID?
    var cursor: String?
    /// "entity/id" → the entity's JSON.
    var copy: [String: String] = [:]
    var pulled = 0
    var droppedCommunity = false
    /// Whether a 410 may make it start over: only where the test itself ran retention. Anywhere
    /// else a 410 is the server refusing a cursor it issued, and fails the test.
    let restartsAllowed: Bool
    /// How often a 410 made it start over.
    private(set) var restarts = 0
    /// How long a follower that may start over keeps doing so. Five seconds were too short on
    /// CI, where the soak holds transactions open longer, and so, once, were 120 (CI on 9ab460b:
    /// `oldAndForeignCursors`); this bounds a hang, it times nothing.
    static let restartWindow: Duration = .seconds(300)

    init(_ user: UserID, of community: CommunityID?, restartsAllowed: Bool = false) {
        self.user = user
        self.community = community
        self.restartsAllowed = restartsAllowed
    }

    static func json(_ value: any Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Pulls until the feed says there is no more now, `limit` changes a page. Told its cursor is
    /// gone (after compaction, when `restartsAllowed`), it starts over as an app does, for up to
    /// `restartWindow`: while a transaction older than the compacted changes runs anywhere in the
    /// cluster (another test's, such as the sync soak's held-open ones), even a new cursor is
    /// judged as possibly lacking them, and that lasts as long as the other transaction does.
    /// Otherwise the 410 is thrown.
    mutating func pull(_ services: OrbitServices, limit: Int = 7) async throws {
        let startedOverUntil = ContinuousClock.now + Self.restartWindow
        var more = true
        while more {
            let page: ChangePage
            do {
                if let community {
                    page = try await services.sync.changes(of: community, cursor: cursor, limit: limit, as: user)
                } else {
                    page = try await services.sync.ownChanges(cursor: cursor, limit: limit, as: user)
                }
            } catch let error as ServiceError where error.code == .gone && restartsAllowed && ContinuousClock.now < startedOverUntil {
                restarts += 1
                copy = [:]
                cursor = nil
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            for change in page.changes {
                let key = "\(change.entity.rawValue)/\(change.id.uuidString.lowercased())"
                switch change.op {
                case .upsert: copy[key] = try Self.json(try #require(change.data))
                case .delete:
                    copy[key] = nil
                    if change.entity == .community && change.id == community?.uuid {
                        copy = [:]
                        droppedCommunity = true
                    }
                }
            }
            pulled += page.changes.count
            cursor = page.nextCursor
            more = page.hasMore
        }
    }

    func has(_ entity: SyncEntity, _ id: UUID) -> Bool { copy["\(entity.rawValue)/\(id.uuidString.lowercased())"] != nil }
    func data(_ entity: SyncEntity, _ id: UUID) -> String? { copy["\(entity.rawValue)/\(id.uuidString.lowercased())"] }
}

@Suite("Sync: the change feed")
struct SyncTests {
    @Test("no cursor: the current state as its GETs return it, then each change; deletes and lost visibility are tombstones")
    func stateThenChanges() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let first = try await services.feed.createPost(in: cast.community, PostDraft(content: "First"), as: cast.admin)
            let second = try await services.feed.createPost(in: cast.community, PostDraft(content: "Second"), as: cast.admin)
            let comment = try await services.feed.addComment(to: first.id, content: "Nice", as: cast.member)
            let onSecond = try await services.feed.addComment(to: second.id, content: "Goes with its post", as: cast.admin)
            let event = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(86_400 * 3)), as: cast.admin)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("30.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)

            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            #expect(follower.has(.community, cast.community.uuid))
            #expect(follower.has(.post, first.id.uuid) && follower.has(.post, second.id.uuid))
            #expect(follower.has(.comment, comment.id.uuid) && follower.has(.event, event.id.uuid) && follower.has(.expense, expense.id.uuid))
            let members = try await services.members.list(of: cast.community, as: cast.member).items
            #expect(members.allSatisfy { follower.has(.member, $0.id.uuid) } && members.count == 2)
            let notifications = try await services.notifications.list(as: cast.member).items
            #expect(!notifications.isEmpty && notifications.allSatisfy { follower.has(.notification, $0.id.uuid) })
            #expect(follower.data(.post, first.id.uuid) == (try Follower.json(try await services.feed.post(first.id, as: cast.member))))
            #expect(follower.data(.expense, expense.id.uuid) == (try Follower.json(try await services.expenses.expense(expense.id, as: cast.member))))
            // Each kind read with one query per page, as its GET reads one.
            #expect(follower.data(.event, event.id.uuid) == (try Follower.json(try await services.events.get(event.id, as: cast.member))))
            #expect(
                follower.data(.community, cast.community.uuid)
                    == (try Follower.json(try await services.communities.get(cast.community, as: cast.member))))
            let conversations = try await services.chat.list(in: cast.community, as: cast.member).items
            #expect(!conversations.isEmpty)
            for conversation in conversations {
                #expect(
                    follower.data(.conversation, conversation.id.uuid)
                        == (try Follower.json(try await services.chat.get(conversation.id, as: cast.member))))
            }

            // Changes: an edit, a reaction (the post's counts), a deleted post and comment.
            _ = try await services.feed.editPost(first.id, content: "First, edited", as: cast.admin)
            _ = try await services.feed.react(to: first.id, type: .like, as: cast.admin)
            try await services.feed.deletePost(second.id, as: cast.admin)
            try await services.feed.deleteComment(comment.id, as: cast.member)
            let before = follower.pulled
            try await follower.pull(services)
            #expect(
                follower.pulled - before == 6,
                "each entity once per page: the post, the deleted post with its comment, the comment, and the member's notifications of both posts (issue 37, item 5: rewritten with the edit, deleted with the post)"
            )
            let left = try await services.notifications.list(as: cast.member).items
            #expect(left.allSatisfy { follower.has(.notification, $0.id.uuid) } && left.count == notifications.count - 1)
            #expect(notifications.filter { !left.map(\.id).contains($0.id) }.allSatisfy { !follower.has(.notification, $0.id.uuid) })
            #expect(left.contains { $0.body == "First, edited" })
            #expect(follower.data(.post, first.id.uuid) == (try Follower.json(try await services.feed.post(first.id, as: cast.member))))
            #expect(follower.data(.post, first.id.uuid)?.contains("First, edited") == true)
            #expect(!follower.has(.post, second.id.uuid) && !follower.has(.comment, comment.id.uuid))
            #expect(!follower.has(.comment, onSecond.id.uuid), "a deleted post's comments go with it")

            // Nothing new: an empty page.
            let seen = follower.pulled
            try await follower.pull(services)
            #expect(follower.pulled == seen)

            // Removed from the community: told to drop it all.
            try await services.members.remove(cast.member, from: cast.community, as: cast.admin)
            try await follower.pull(services)
            #expect(follower.droppedCommunity && follower.copy.isEmpty)
            // A non-member starting out gets the same, and a cursor that works.
            let outsider = try await services.sync.changes(of: cast.community, as: cast.outsider)
            #expect(outsider.changes.map(\.op) == [.delete] && !outsider.hasMore)
            _ = try await services.sync.changes(of: cast.community, cursor: outsider.nextCursor, as: cast.outsider)
        }
    }

    @Test("never skips a commit: a long transaction that commits after a shorter, later one still reaches the follower")
    func longTransactionCommitsLast() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            let slowID = UUID()
            let quick: FeedPost = try await database.withConnection { long in
                // The long transaction writes first (its xid is the older one) ...
                try await long.query("BEGIN")
                try await long.query(
                    "INSERT INTO posts (id, community_id, author_id, content) VALUES (\(slowID), \(cast.community), \(cast.admin), 'Slow')")
                // ... a later, shorter one commits first, and the follower pulls in between ...
                let quick = try await services.feed.createPost(in: cast.community, PostDraft(content: "Quick"), as: cast.admin)
                try await follower.pull(services)
                // The quick post arrives at once: a long transaction holds back only itself.
                #expect(follower.has(.post, quick.id.uuid) && !follower.has(.post, slowID))
                // ... then the long one commits, with an earlier timestamp than the quick post's.
                try await long.query("COMMIT")
                return quick
            }
            try await follower.pull(services)
            #expect(follower.has(.post, quick.id.uuid), "the quick post")
            #expect(follower.has(.post, slowID), "the slow post, committed last with the older transaction id")
        }
    }

    @Test("retention compacts the log; a cursor older than what it keeps is refused as gone; one this server did not make is invalid")
    func oldAndForeignCursors() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            // A change the follower has not pulled yet; 31 days later, retention removes it with
            // the rest of today's changes.
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Not pulled"), as: cast.admin)
            var later = services
            later.now = { Date().addingTimeInterval(31 * 86_400) }
            let report = try await later.lifecycle.runRetention()
            #expect((report.counts["changes"] ?? 0) > 0)
            let left: Int64 = try await database.withConnection { try await $0.query("SELECT count(*) FROM changes").single().decode(0) }
            #expect(left == 0)
            let gone = await serviceError { try await services.sync.changes(of: cast.community, cursor: follower.cursor, as: cast.member) }
            #expect(gone?.code == .gone)
            let foreign = await serviceError { try await services.sync.changes(of: cast.community, cursor: "bm90LWEtY3Vyc29y", as: cast.member) }
            #expect(foreign?.code == .invalidInput)
            // Starting over works.
            var fresh = Follower(cast.member, of: cast.community, restartsAllowed: true)
            try await fresh.pull(services)
            #expect(fresh.has(.community, cast.community.uuid))
        }
    }
}
