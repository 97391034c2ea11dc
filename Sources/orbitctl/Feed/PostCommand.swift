import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl post …`
struct PostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "post",
        abstract: "The feed: posts, comments, reactions and poll votes.",
        subcommands: [
            Create.self, List.self, Show.self, Edit.self, Delete.self, SetPin<Pin>.self, SetPin<Unpin>.self, Comment.self, Comments.self, React.self,
            Vote.self,
        ]
    )

    struct Create: ActingCommand {
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

        /// The post to create (validate() builds it before connecting).
        private var draft: PostDraft {
            get throws {
                var draft = PostDraft(
                    type: type, content: content, mediaURLs: media, mediaIDs: mediaID, linkedEventID: event, encrypted: try encrypted.content)
                if type == .poll {
                    guard let content else { throw ValidationError("A poll needs its question in --content.") }
                    draft.poll = Poll(question: content, options: option, allowMultiple: multiple, closesAt: closesAt?.date)
                }
                return draft
            }
        }

        func validate() throws { _ = try draft }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FeedPost {
            let draft = try draft
            var services = services
            services.storage = storage.storage
            return try await services.feed.createPost(in: community, draft, as: actor)
        }

        func tell(_ post: FeedPost) {
            print("Posted \(post.id) (\(post.type)); editable until \(show(post.editableUntil)).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A page of a community's feed: pinned first, then newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Posts per page (1 to 100).") var limit = 20
        @Option(help: "next_cursor of the previous page.") var cursor: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FeedPage {
            try await services.feed.page(of: community, limit: limit, cursor: cursor, as: actor)
        }

        func tell(_ page: FeedPage) {
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

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Show a post, with poll results for polls.")
        @Argument(help: "Post id.") var post: PostID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The post, and beside it, for a poll, its votes per option; `--json` prints the post alone.
        typealias Shown = JSONPart<FeedPost, [Int]?>

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Shown {
            let found = try await services.feed.post(post, as: actor)
            return Shown(value: found, aside: found.pollData == nil ? nil : try await services.feed.pollResults(post, as: actor))
        }

        func tell(_ shown: Shown) {
            let found = shown.value
            print("\(found.type) by \(found.authorID) at \(show(found.createdAt)): \(found.content ?? "")")
            if let poll = found.pollData, let results = shown.aside {
                for (index, (option, votes)) in zip(poll.options, results).enumerated() { print("  [\(index)] \(option): \(votes)") }
            }
        }
    }

    struct Edit: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Change a post's text (authors within 24 hours; admins any time).")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "The new text.") var content: String?
        @OptionGroup var encrypted: EncryptedOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FeedPost {
            try await services.feed.editPost(post, content: content, encrypted: try encrypted.content, as: actor)
        }

        func tell(_ edited: FeedPost) {
            print("Edited post \(edited.id).")
        }
    }

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a post (authors within 24 hours; admins any time).")
        @Argument(help: "Post id.") var post: PostID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.feed.deletePost(post, as: actor)
            return DoneOutput(id: post.description, deleted: true)
        }

        func tell(_ done: DoneOutput) {
            print("Deleted post \(post).")
        }
    }

    /// Which way `SetPin` goes: `post pin` or `post unpin`.
    protocol PinChoice {
        static var pinned: Bool { get }
        static var name: String { get }
        static var abstract: String { get }
    }
    enum Pin: PinChoice {
        static let pinned = true
        static let name = "pin"
        static let abstract = "Pin a post to the top of the feed (admins)."
    }
    enum Unpin: PinChoice {
        static let pinned = false
        static let name = "unpin"
        static let abstract = "Unpin a post (admins)."
    }

    /// `post pin` and `post unpin`: one command, which way its parameter.
    struct SetPin<Choice: PinChoice>: ActingCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(commandName: Choice.name, abstract: Choice.abstract) }
        @Argument(help: "Post id.") var post: PostID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FeedPost {
            try await services.feed.setPinned(post, Choice.pinned, as: actor)
        }

        func tell(_ updated: FeedPost) {
            print("\(Choice.pinned ? "Pinned" : "Unpinned") post \(post).")
        }
    }

    struct Comment: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Comment on a post, or reply to a comment with --parent.")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "The comment.") var content: String?
        @Option(help: "The comment replied to (on the same post).") var parent: CommentID?
        @OptionGroup var encrypted: EncryptedOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> OrbitCore.Comment {
            try await services.feed.addComment(to: post, content: content, encrypted: try encrypted.content, parent: parent, as: actor)
        }

        func tell(_ comment: OrbitCore.Comment) {
            print("Commented \(comment.id) on post \(post).")
        }
    }

    struct Comments: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A post's comments, oldest first.")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "At most this many (1 to 200).") var limit = 50
        @Option(help: "Continue after this comment id.") var after: CommentID?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> [OrbitCore.Comment] {
            try await services.feed.comments(on: post, limit: limit, after: after, as: actor)
        }

        func tell(_ comments: [OrbitCore.Comment]) {
            printTable(
                ["ID", "AUTHOR", "REPLY TO", "WHEN", "CONTENT"],
                comments.map {
                    [$0.id.description, $0.authorID.description, $0.parentID?.description ?? "", show($0.createdAt), $0.content ?? "(deleted)"]
                }
            )
        }
    }

    struct React: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "React to a post (one reaction per user; --remove takes it back).")
        @Argument(help: "Post id.") var post: PostID
        @Option(help: "like, love, laugh or celebrate.") var type: ReactionType?
        @Flag(help: "Take one's reaction back.") var remove = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if remove == (type != nil) { throw ValidationError("Give either --type or --remove.") }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FeedPost {
            if let type { return try await services.feed.react(to: post, type: type, as: actor) }
            return try await services.feed.removeReaction(from: post, as: actor)
        }

        func tell(_ updated: FeedPost) {
            print(
                "Reactions on post \(post): \(updated.reactionCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
            )
        }
    }

    struct Vote: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Vote on a poll (zero-based option index); --retract takes votes back.")
        @Argument(help: "Poll post id.") var post: PostID
        @Option(help: "The option, zero-based (option_index).") var option: Int?
        @Flag(help: "Take the vote for --option (or all one's votes) back.") var retract = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if !retract && option == nil { throw ValidationError("Give --option, or --retract.") }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FeedPost {
            if retract { return try await services.feed.retractVote(on: post, option: option, as: actor) }
            return try await services.feed.vote(on: post, option: option ?? 0, as: actor)
        }

        func tell(_ updated: FeedPost) {
            print("Your votes on post \(post): \(updated.myVotes.map(String.init).joined(separator: ", ")).")
        }
    }
}
