import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addFeedRoutes(to router: RouterGroup<APIContext>) {
        struct PostBody: Decodable {
            var type: String?
            var content: String?
            var mediaUrls: [String]?
            var mediaIds: [MediaID]?
            var poll: PollBody?
            var linkedEventId: EventID?
            var isAnnouncement: Bool?
            var contentEncrypted: String?
            var encryptionVersion: Int?
        }
        struct PollBody: Decodable {
            var question: String
            var options: [String]
            var allowMultiple: Bool?
            var closesAt: Date?
        }

        // Newest first, pinned posts on top; `cursor` is the previous page's next_cursor.
        router.get("communities/:community_id/posts") { request, context in
            let limit = try request.queryInt("limit", default: 20, range: 1...100)
            return JSON(
                try await services.feed.page(
                    of: try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        router.post("communities/:community_id/posts") { request, context in
            let body = try await request.decodeJSON(PostBody.self, context: context)
            let draft = PostDraft(
                type: try PostType.parse(body.type ?? (body.poll == nil ? "text" : "poll"), field: "type"), content: body.content,
                mediaURLs: body.mediaUrls ?? [],
                mediaIDs: body.mediaIds ?? [],
                poll: body.poll.map {
                    Poll(question: $0.question, options: $0.options, allowMultiple: $0.allowMultiple ?? false, closesAt: $0.closesAt)
                },
                linkedEventID: body.linkedEventId, isAnnouncement: body.isAnnouncement ?? false,
                encrypted: try EncryptedContent.parse(base64: body.contentEncrypted, version: body.encryptionVersion)
            )
            let user = try context.requireUser()
            return try await creating(.posts, request, context: context, stored: { try await services.feed.post(PostID($0), as: user) }) {
                try await services.feed.createPost(in: try context.id("community_id"), draft, as: user)
            }
        }

        let post = router.group("posts/:post_id")
        post.get { _, context in
            Tagged(try await services.feed.post(try context.id("post_id"), as: try context.requireUser()))
        }
        // New text, or new ciphertext (`content_encrypted` and `encryption_version`, docs/e2e.md).
        struct Edit: Decodable {
            var content: String?
            var contentEncrypted: String?
            var encryptionVersion: Int?

            var encrypted: EncryptedContent? { get throws { try EncryptedContent.parse(base64: contentEncrypted, version: encryptionVersion) } }
        }
        post.patch { request, context in
            let body = try await request.decodeJSON(Edit.self, context: context)
            let id: PostID = try context.id("post_id")
            return Tagged(
                try await request.underIfMatch(.entity(.post, id.uuid)) {
                    try await services.feed.editPost(id, content: body.content, encrypted: try body.encrypted, as: try context.requireUser())
                }
            )
        }
        post.delete { request, context in
            let id: PostID = try context.id("post_id")
            try await request.underIfMatch(.entity(.post, id.uuid)) { try await services.feed.deletePost(id, as: try context.requireUser()) }
            return NoContent()
        }
        struct Pin: Decodable {
            var pinned: Bool
        }
        post.put("pin") { request, context in
            let body = try await request.decodeJSON(Pin.self, context: context)
            return JSON(try await services.feed.setPinned(try context.id("post_id"), body.pinned, as: try context.requireUser()))
        }

        struct Reaction: Decodable {
            var type: String
        }
        post.put("reaction") { request, context in
            let body = try await request.decodeJSON(Reaction.self, context: context)
            return JSON(
                try await services.feed.react(
                    to: try context.id("post_id"), type: try ReactionType.parse(body.type, field: "type"), as: try context.requireUser()))
        }
        post.delete("reaction") { _, context in
            JSON(try await services.feed.removeReaction(from: try context.id("post_id"), as: try context.requireUser()))
        }

        struct Vote: Decodable {
            var option: Int
        }
        post.post("votes") { request, context in
            let body = try await request.decodeJSON(Vote.self, context: context)
            return JSON(try await services.feed.vote(on: try context.id("post_id"), option: body.option, as: try context.requireUser()))
        }
        post.delete("votes") { request, context in
            let option: Int? = request.query("option") == nil ? nil : try request.queryInt("option", default: 0, range: 0...19)
            return JSON(try await services.feed.retractVote(on: try context.id("post_id"), option: option, as: try context.requireUser()))
        }

        post.get("comments") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            let after = try request.queryID("after", as: CommentID.self)
            return JSON(
                Items(try await services.feed.comments(on: try context.id("post_id"), limit: limit, after: after, as: try context.requireUser())))
        }
        struct NewComment: Decodable {
            var content: String?
            var parentId: CommentID?
            var contentEncrypted: String?
            var encryptionVersion: Int?
        }
        post.post("comments") { request, context in
            let body = try await request.decodeJSON(NewComment.self, context: context)
            let user = try context.requireUser()
            return try await creating(.comments, request, context: context, stored: { try await services.feed.comment(CommentID($0), as: user) }) {
                try await services.feed.addComment(
                    to: try context.id("post_id"), content: body.content,
                    encrypted: try EncryptedContent.parse(base64: body.contentEncrypted, version: body.encryptionVersion), parent: body.parentId,
                    as: user)
            }
        }
        router.patch("comments/:comment_id") { request, context in
            let body = try await request.decodeJSON(Edit.self, context: context)
            let id: CommentID = try context.id("comment_id")
            return Tagged(
                try await request.underIfMatch(.entity(.comment, id.uuid)) {
                    try await services.feed.editComment(id, content: body.content, encrypted: try body.encrypted, as: try context.requireUser())
                }
            )
        }
        router.delete("comments/:comment_id") { request, context in
            let id: CommentID = try context.id("comment_id")
            try await request.underIfMatch(.entity(.comment, id.uuid)) {
                try await services.feed.deleteComment(id, as: try context.requireUser())
            }
            return NoContent()
        }
    }
}
