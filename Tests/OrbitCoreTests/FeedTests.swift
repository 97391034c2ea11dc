import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The feed: posts, pagination, comments, reactions, polls")
struct FeedTests {
    @Test("who may post, announce, pin, edit and delete (24 h for authors, any time for admins)")
    func postPermissions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let own = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hello"), as: cast.member)
            let announce = await serviceError {
                try await services.feed.createPost(in: cast.community, PostDraft(type: .announcement, content: "Hear ye"), as: cast.member)
            }
            #expect(announce?.code == .forbidden)
            _ = try await services.feed.createPost(in: cast.community, PostDraft(type: .announcement, content: "Hear ye"), as: cast.admin)
            let pin = await serviceError { try await services.feed.setPinned(own.id, true, as: cast.member) }
            #expect(pin?.code == .forbidden)
            #expect(try await services.feed.setPinned(own.id, true, as: cast.admin).isPinned)
            let outsider = await serviceError { try await services.feed.createPost(in: cast.community, PostDraft(content: "Hi"), as: cast.outsider) }
            #expect(outsider?.code == .notFound)

            _ = try await services.feed.editPost(own.id, content: "Hello, edited", as: cast.member)
            var later = services
            later.now = { Date().addingTimeInterval(25 * 3600) }
            let tooLate = await serviceError { try await later.feed.editPost(own.id, content: "Too late", as: cast.member) }
            #expect(tooLate?.code == .forbidden)
            let tooLateDelete = await serviceError { try await later.feed.deletePost(own.id, as: cast.member) }
            #expect(tooLateDelete?.code == .forbidden)
            _ = try await later.feed.editPost(own.id, content: "Moderated", as: cast.admin)

            _ = try await services.communities.update(cast.community, settings: CommunitySettings(allowMemberPosts: false), as: cast.admin)
            let closed = await serviceError { try await services.feed.createPost(in: cast.community, PostDraft(content: "Hi"), as: cast.member) }
            #expect(closed?.code == .forbidden)
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Still me"), as: cast.admin)
        }
    }

    @Test("pages never repeat or skip a post, with equal timestamps, pinned posts first and posts arriving meanwhile")
    func pagination() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            // 30 posts sharing five timestamps (one transaction each stamps them alike), 2 pinned.
            try await database.withConnection { connection in
                for batch in 0..<5 {
                    try await connection.withTransaction { connection in
                        for index in 0..<6 {
                            try await connection.query(
                                "INSERT INTO posts (community_id, author_id, content) VALUES (\(cast.community), \(cast.member), \("p\(batch)-\(index)"))"
                            )
                        }
                    }
                }
                try await connection.query(
                    "UPDATE posts SET is_pinned = true WHERE id IN (SELECT id FROM posts WHERE community_id = \(cast.community) ORDER BY created_at LIMIT 2)"
                )
            }
            var seen: [FeedPost] = []
            var cursor: String?
            var pages = 0
            repeat {
                // 30 posts at 7 a page: 5 pages. A cursor that does not move on fails here
                // instead of walking forever.
                pages += 1
                try #require(pages <= 10, "the cursor does not move on")
                let page = try await services.feed.page(of: cast.community, limit: 7, cursor: cursor, as: cast.member)
                seen += page.items
                cursor = page.nextCursor
                _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "arrived meanwhile"), as: cast.admin)
            } while cursor != nil
            let original = seen.filter { $0.content?.hasPrefix("p") == true }
            #expect(original.count == 30)
            #expect(Set(original.map(\.id)).count == 30)
            #expect(seen.prefix(2).allSatisfy { $0.isPinned })
            let unpinned = seen.dropFirst(2)
            #expect(zip(unpinned, unpinned.dropFirst()).allSatisfy { $0.createdAt >= $1.createdAt })

            let tampered = await serviceError {
                try await services.feed.page(of: cast.community, cursor: "djEuMC4xMjM0NTY3.garbage", as: cast.member)
            }
            #expect(tampered?.code == .invalidInput && tampered?.field == "cursor")
        }
    }

    @Test("counts follow every change: comments, reactions, and the reader's own reaction")
    func counts() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "Count me"), as: cast.admin)
            let first = try await services.feed.addComment(to: post.id, content: "First", as: cast.member)
            let reply = try await services.feed.addComment(to: post.id, content: "Reply", parent: first.id, as: cast.admin)
            #expect(try await services.feed.post(post.id, as: cast.admin).commentCount == 2)
            try await services.feed.deleteComment(first.id, as: cast.member)
            let listed = try await services.feed.comments(on: post.id, as: cast.admin)
            #expect(listed.map(\.id) == [first.id, reply.id] && listed[0].content == nil)
            try await services.feed.deleteComment(reply.id, as: cast.admin)
            #expect(try await services.feed.comments(on: post.id, as: cast.admin).isEmpty)
            #expect(try await services.feed.post(post.id, as: cast.admin).commentCount == 0)

            _ = try await services.feed.react(to: post.id, type: .like, as: cast.member)
            _ = try await services.feed.react(to: post.id, type: .like, as: cast.admin)
            let changed = try await services.feed.react(to: post.id, type: .love, as: cast.member)
            #expect(changed.reactionCounts == ["like": 1, "love": 1] && changed.myReaction == .love)
            let removed = try await services.feed.removeReaction(from: post.id, as: cast.admin)
            #expect(removed.reactionCounts == ["love": 1] && removed.myReaction == nil)
            let otherPost = try await services.feed.createPost(in: cast.community, PostDraft(content: "Other"), as: cast.admin)
            let wrongThread = await serviceError {
                try await services.feed.addComment(to: otherPost.id, content: "x", parent: first.id, as: cast.admin)
            }
            #expect(wrongThread?.code == .notFound)
        }
    }

    @Test("polls: one vote replaced on single choice, several on multiple, none twice, none after closing")
    func polls() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let single = try await services.feed.createPost(
                in: cast.community,
                PostDraft(type: .poll, poll: Poll(question: "When?", options: ["Sat", "Sun"], closesAt: Date().addingTimeInterval(3600))),
                as: cast.admin
            )
            _ = try await services.feed.vote(on: single.id, option: 0, as: cast.member)
            #expect(try await services.feed.vote(on: single.id, option: 1, as: cast.member).myVotes == [1])
            _ = try await services.feed.vote(on: single.id, option: 1, as: cast.admin)
            #expect(try await services.feed.pollResults(single.id, as: cast.member) == [0, 2])
            let twice = await serviceError { try await services.feed.vote(on: single.id, option: 1, as: cast.admin) }
            #expect(twice?.code == .conflict)
            let outOfRange = await serviceError { try await services.feed.vote(on: single.id, option: 2, as: cast.admin) }
            #expect(outOfRange?.code == .conflict && outOfRange?.field == "option")
            var later = services
            later.now = { Date().addingTimeInterval(7200) }
            let closed = await serviceError { try await later.feed.vote(on: single.id, option: 0, as: cast.member) }
            #expect(closed?.code == .conflict)

            let multiple = try await services.feed.createPost(
                in: cast.community,
                PostDraft(type: .poll, poll: Poll(question: "Bring?", options: ["Balls", "Cones", "Water"], allowMultiple: true)),
                as: cast.admin
            )
            _ = try await services.feed.vote(on: multiple.id, option: 0, as: cast.member)
            #expect(try await services.feed.vote(on: multiple.id, option: 2, as: cast.member).myVotes == [0, 2])
            #expect(try await services.feed.retractVote(on: multiple.id, option: 0, as: cast.member).myVotes == [2])

            for bad in [
                Poll(question: "Q", options: ["Only"]), Poll(question: "Q", options: ["A", "a"]), Poll(question: "Q", options: ["A", " "]),
            ] {
                let error = await serviceError {
                    try await services.feed.createPost(in: cast.community, PostDraft(type: .poll, poll: bad), as: cast.admin)
                }
                #expect(error?.code == .invalidInput)
            }
            // A closing time already past is judged by the clock, not the form: a conflict (409).
            let closedAlready = await serviceError {
                try await services.feed.createPost(
                    in: cast.community,
                    PostDraft(type: .poll, poll: Poll(question: "Q", options: ["A", "B"], closesAt: Date().addingTimeInterval(-60))),
                    as: cast.admin)
            }
            #expect(closedAlready?.code == .conflict && closedAlready?.field == "poll_data.closesAt")
        }
    }

    @Test("a member of another community sees nothing and cannot react, comment or vote")
    func otherCommunity() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let poll = try await services.feed.createPost(
                in: cast.community, PostDraft(type: .poll, poll: Poll(question: "Q", options: ["A", "B"])), as: cast.admin
            )
            _ = try await services.communities.create(name: "Elsewhere", as: cast.outsider)
            let attempts: [() async throws -> Void] = [
                { _ = try await services.feed.post(poll.id, as: cast.outsider) },
                { _ = try await services.feed.react(to: poll.id, type: .like, as: cast.outsider) },
                { _ = try await services.feed.addComment(to: poll.id, content: "hi", as: cast.outsider) },
                { _ = try await services.feed.vote(on: poll.id, option: 0, as: cast.outsider) },
                { _ = try await services.feed.page(of: cast.community, as: cast.outsider) },
            ]
            for attempt in attempts {
                let error = await serviceError(attempt)
                #expect(error?.code == .notFound)
            }
        }
    }

    @Test("mentions by display name or id are recorded")
    func mentions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(
                in: cast.community, PostDraft(content: "Thanks @Max Member and @\(cast.admin)!"), as: cast.admin)
            #expect(Set(post.mentionedUserIDs) == [cast.member, cast.admin])
            let comment = try await services.feed.addComment(to: post.id, content: "@fred former left, so not him", as: cast.member)
            _ = comment
            let plain = try await services.feed.createPost(in: cast.community, PostDraft(content: "No one here"), as: cast.admin)
            #expect(plain.mentionedUserIDs.isEmpty)
        }
    }

    @Test("a poll's post carries its results, per option")
    func pollResults() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(
                in: cast.community, PostDraft(type: .poll, poll: Poll(question: "When?", options: ["Sat", "Sun", "Mon"])), as: cast.admin)
            #expect(post.pollResults == [0, 0, 0])
            _ = try await services.feed.vote(on: post.id, option: 2, as: cast.member)
            _ = try await services.feed.vote(on: post.id, option: 2, as: cast.admin)
            #expect(try await services.feed.post(post.id, as: cast.member).pollResults == [0, 0, 2])
            let text = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hi"), as: cast.admin)
            #expect(text.pollResults == nil)
        }
    }
}
