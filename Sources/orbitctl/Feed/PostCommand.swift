import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl post …`
struct PostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "post",
        abstract: "The feed: posts, comments, reactions and poll votes.",
        subcommands: [
            Create.self, List.self, Show.self, Edit.self, Delete.self, Pin.self, Unpin.self, Comment.self, Comments.self, React.self, Vote.self,
        ]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Post to a community's feed.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "text, photo, announcement, poll or event_share.") var type: PostType = .text
        @Option(help: "The text (for a poll: the question).") var content: String?
        @Option(help: "A poll option; repeat for each (2 to 20).") var option: [String] = []
        @Flag(help: "Poll: allow choosing several options.") var multiple = false
        @Option(help: "Poll: when voting closes (RFC 3339).") var closesAt: Timestamp?
        @Option(help: "event_share: the event shared.") var event: EventID?
        @Option(help: "photo: a media URL; repeatable.") var media: [String] = []
        @Option(help: "photo: an upload of the community (orbitctl media upload); repeatable.") var mediaID: [MediaID] = []
        @OptionGroup var storage: MediaCommand.StorageOptions
        @OptionGroup var encrypted: EncryptedOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            var draft = PostDraft(
                type: type, content: content, mediaURLs: media, mediaIDs: mediaID, linkedEventID: event, encrypted: try encrypted.content)
            if type == .poll {
                guard let content else { throw ValidationError("A poll needs its question in --content.") }
                draft.poll = Poll(question: content, options: option, allowMultiple: multiple, closesAt: closesAt?.date)
            }
            let post = try await acting.run { services, actor in
                var services = services
                services.storage = storage.storage
                return try await services.feed.createPost(in: community, draft, as: actor)
            }
            if output.json { return try printJSON(post) }
            print("Posted \(post.id) (\(post.type)); editable until \(show(post.editableUntil)).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A page of a community's feed: pinned first, then newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Posts per page (1 to 100).") var limit = 20
        @Option(help: "next_cursor of the previous page.") var cursor: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let page = try await acting.run { services, actor in
                try await services.feed.page(of: community, limit: limit, cursor: cursor, as: actor)
            }
            if output.json { return try printJSON(page) }
            printTable(
                ["ID", "TYPE", "PINNED", "AUTHOR", "COMMENTS", "REACTIONS", "CONTENT"],
                page.items.map {
                    [
                        $0.id.description, $0.type.rawValue, $0.isPinned ? "yes" : "", $0.authorID.description, String($0.commentCount),
                        $0.reactionCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                        String(($0.content ?? "").prefix(40)),
                    ]
                }
            )
            if let next = page.nextCursor { print("More: --cursor \(next)") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a post, with poll results for polls.")
        @Argument(help: "Post id.") var post: PostID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let (found, results) = try await acting.run { services, actor in
                let found = try await services.feed.post(post, as: actor)
                return (found, found.pollData == nil ? nil : try await services.feed.pollResults(post, as: actor))
            }
            if output.json { return try printJSON(found) }
            print("\(found.type) by \(found.authorID) at \(show(found.createdAt)): \(found.content ?? "")")
            if let poll = found.pollData, let results {
                for (index, option) in poll.options.enumerated() { print("  [\(index)] \(option): \(results[index])") }
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a post's text (authors within 24 hours; admins any time).")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "The new text.") var content: String?
        @OptionGroup var encrypted: EncryptedOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let edited = try await acting.run { services, actor in
                try await services.feed.editPost(post, content: content, encrypted: try encrypted.content, as: actor)
            }
            if output.json { return try printJSON(edited) }
            print("Edited post \(edited.id).")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a post (authors within 24 hours; admins any time).")
        @Argument(help: "Post id.") var post: PostID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            try await acting.run { services, actor in try await services.feed.deletePost(post, as: actor)
            }
            if output.json { return try printJSON(DoneOutput(id: post.description, deleted: true)) }
            print("Deleted post \(post).")
        }
    }

    /// What pin and unpin share.
    struct PinOptions: ParsableArguments {
        @Argument(help: "Post id.") var post: PostID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func set(_ pinned: Bool) async throws {
            let updated = try await acting.run { services, actor in
                try await services.feed.setPinned(post, pinned, as: actor)
            }
            if output.json { return try printJSON(updated) }
            print("\(pinned ? "Pinned" : "Unpinned") post \(post).")
        }
    }

    struct Pin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Pin a post to the top of the feed (admins).")
        @OptionGroup var options: PinOptions

        func run() async throws { try await options.set(true) }
    }

    struct Unpin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unpin a post (admins).")
        @OptionGroup var options: PinOptions

        func run() async throws { try await options.set(false) }
    }

    struct Comment: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Comment on a post, or reply to a comment with --parent.")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "The comment.") var content: String?
        @Option(help: "The comment replied to (on the same post).") var parent: CommentID?
        @OptionGroup var encrypted: EncryptedOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let comment = try await acting.run { services, actor in
                try await services.feed.addComment(to: post, content: content, encrypted: try encrypted.content, parent: parent, as: actor)
            }
            if output.json { return try printJSON(comment) }
            print("Commented \(comment.id) on post \(post).")
        }
    }

    struct Comments: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A post's comments, oldest first.")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "At most this many (1 to 200).") var limit = 50
        @Option(help: "Continue after this comment id.") var after: CommentID?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let comments = try await acting.run { services, actor in
                try await services.feed.comments(on: post, limit: limit, after: after, as: actor)
            }
            if output.json { return try printJSON(comments) }
            printTable(
                ["ID", "AUTHOR", "REPLY TO", "WHEN", "CONTENT"],
                comments.map {
                    [$0.id.description, $0.authorID.description, $0.parentID?.description ?? "", show($0.createdAt), $0.content ?? "(deleted)"]
                }
            )
        }
    }

    struct React: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "React to a post (one reaction per user; --remove takes it back).")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "like, love, laugh or celebrate.") var type: ReactionType?
        @Flag(help: "Take one's reaction back.") var remove = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if remove == (type != nil) { throw ValidationError("Give either --type or --remove.") }
        }

        func run() async throws {
            let updated = try await acting.run { services, actor in
                if let type { return try await services.feed.react(to: post, type: type, as: actor) }
                return try await services.feed.removeReaction(from: post, as: actor)
            }
            if output.json { return try printJSON(updated) }
            print(
                "Reactions on post \(post): \(updated.reactionCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
            )
        }
    }

    struct Vote: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Vote on a poll (zero-based option index); --retract takes votes back.")
        @Argument(help: "Poll post id.") var post: PostID
        @Option(help: "The option, zero-based (option_index).") var option: Int?
        @Flag(help: "Take the vote for --option (or all one's votes) back.") var retract = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if !retract && option == nil { throw ValidationError("Give --option, or --retract.") }
        }

        func run() async throws {
            let updated = try await acting.run { services, actor in
                if retract { return try await services.feed.retractVote(on: post, option: option, as: actor) }
                return try await services.feed.vote(on: post, option: option ?? 0, as: actor)
            }
            if output.json { return try printJSON(updated) }
            print("Your votes on post \(post): \(updated.myVotes.map(String.init).joined(separator: ", ")).")
        }
    }
}
