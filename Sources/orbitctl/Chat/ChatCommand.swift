import ArgumentParser
import Foundation
import OrbitCore

extension ConversationKind: ExpressibleByArgument {}

/// `orbitctl chat …`: conversations and messages inside communities (docs/chat.md).
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat", abstract: "Chat: conversations of a community and their messages.",
        subcommands: [
            Start.self, List.self, Send.self, History.self, Mark<Read>.self, Mark<Delivered>.self, Edit.self, Delete.self, Leave.self, Mute.self,
        ]
    )

    struct Start: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a group or a direct conversation (a direct one the pair has already is returned as it is).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "group or direct.") var kind: ConversationKind
        @Option(help: "The other people: user ids or emails, comma-separated.") var with: String
        @Option(help: "A group's title.") var title: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The conversation, and beside it whether it is new; `--json` prints the conversation alone.
        typealias Started = JSONPart<Conversation, Bool>

        /// The other people, as given (validate() splits them before connecting).
        private var people: [String] {
            get throws {
                let people = with.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                guard !people.isEmpty, people.allSatisfy({ !$0.isEmpty }) else {
                    throw ValidationError("--with must be users (ids or emails) separated by commas.")
                }
                return people
            }
        }

        func validate() throws { _ = try people }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Started {
            var users: [UserID] = []
            for person in try people { users.append(try await services.users.resolve(person)) }
            let (conversation, created) = try await services.chat.start(in: community, kind: kind, with: users, title: title, as: actor)
            return Started(value: conversation, aside: created)
        }

        func tell(_ started: Started) {
            let conversation = started.value
            print("\(started.aside ? "Started" : "Already there:") \(conversation.kind.rawValue) conversation \(conversation.id).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "One's conversations, newest activity first, with unread counts.")
        @Option(help: "Only this community's.") var community: CommunityID?
        @Option(help: "Conversations per page (1 to 200).") var limit = 50
        @Option(help: "next_cursor of the previous page.") var cursor: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Conversation> {
            try await services.chat.list(in: community, limit: limit, cursor: cursor, as: actor)
        }

        func tell(_ page: Page<Conversation>) {
            printTable(
                ["ID", "KIND", "TITLE", "UNREAD", "LAST MESSAGE"],
                page.items.map {
                    [
                        $0.id.description, $0.kind.rawValue, $0.title ?? "", String($0.unreadCount),
                        String(($0.lastMessage?.text ?? "").prefix(40)),
                    ]
                })
            if let next = page.nextCursor { print("More: --cursor \(next)") }
        }
    }

    struct Send: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Send a message; the same --client-id again stores nothing new.")
        @Argument(help: "Conversation id.") var conversation: ConversationID
        @Option(help: "The message (up to 4,000 characters).") var text: String?
        @Option(help: "The sender's own id for the message (a UUID).") var clientID: String?
        @OptionGroup var encrypted: EncryptedOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The message, and beside it whether it is new; `--json` prints the message alone.
        typealias Sent = JSONPart<ChatMessage, Bool>

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Sent {
            let (message, created) = try await services.chat.send(
                to: conversation, text: text, encrypted: try encrypted.content, clientMessageID: clientID, as: actor)
            return Sent(value: message, aside: created)
        }

        func tell(_ sent: Sent) {
            print("\(sent.aside ? "Sent" : "Sent before:") message \(sent.value.id) (#\(sent.value.position)).")
        }
    }

    struct History: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Messages, newest first; one's own with their status.")
        @Argument(help: "Conversation id.") var conversation: ConversationID
        @Option(help: "Messages per page (1 to 200).") var limit = 50
        @Option(help: "next_cursor of the previous page.") var cursor: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<ChatMessage> {
            try await services.chat.history(of: conversation, limit: limit, cursor: cursor, as: actor)
        }

        func tell(_ page: Page<ChatMessage>) {
            printTable(
                ["#", "ID", "SENDER", "STATUS", "TEXT"],
                page.items.map {
                    [
                        String($0.position), $0.id.description, $0.senderID?.description ?? "", $0.status?.rawValue ?? "",
                        $0.deletedAt == nil ? String(($0.text ?? "").prefix(60)) : "(deleted)",
                    ]
                })
            if let next = page.nextCursor { print("More: --cursor \(next)") }
        }
    }

    /// Which watermark `Mark` raises: `chat read` or `chat delivered`.
    protocol WatermarkChoice {
        static var watermark: ChatService.Watermark { get }
        static var name: String { get }
    }
    enum Read: WatermarkChoice {
        static let watermark = ChatService.Watermark.read
        static let name = "read"
    }
    enum Delivered: WatermarkChoice {
        static let watermark = ChatService.Watermark.delivered
        static let name = "delivered"
    }

    /// `chat read` and `chat delivered`: one command, the watermark its parameter.
    struct Mark<Choice: WatermarkChoice>: ActingCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(commandName: Choice.name, abstract: "Mark the conversation \(Choice.name) up to a message.")
        }
        @Argument(help: "Conversation id.") var conversation: ConversationID
        @Option(help: "The last message \(Choice.name).") var upTo: MessageID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Conversation {
            try await services.chat.mark(Choice.watermark, upTo: upTo, in: conversation, as: actor)
        }

        func tell(_ updated: Conversation) {
            switch Choice.watermark {
            case .read: print("Read up to \(upTo); \(updated.unreadCount) unread.")
            case .delivered: print("Delivered up to \(upTo).")
            }
        }
    }

    struct Edit: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Edit one's message (within 15 minutes).")
        @Argument(help: "Message id.") var message: MessageID
        @Option(help: "The new text.") var text: String?
        @OptionGroup var encrypted: EncryptedOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> ChatMessage {
            try await services.chat.edit(message, text: text, encrypted: try encrypted.content, as: actor)
        }

        func tell(_ edited: ChatMessage) {
            print("Edited \(edited.id).")
        }
    }

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a message (one's own; an admin's in the community conversation).")
        @Argument(help: "Message id.") var message: MessageID
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.chat.delete(message, as: actor)
            return DoneOutput(id: message.description, deleted: true)
        }

        func tell(_ done: DoneOutput) {
            print("Deleted \(message).")
        }
    }

    struct Leave: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Leave a group.")
        @Argument(help: "Conversation id.") var conversation: ConversationID
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.chat.leave(conversation, as: actor)
            return DoneOutput(id: conversation.description, left: true)
        }

        func tell(_ done: DoneOutput) {
            print("Left \(conversation).")
        }
    }

    struct Mute: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Mute a conversation until a time (no pushes meanwhile); without --until, unmute.")
        @Argument(help: "Conversation id.") var conversation: ConversationID
        @Option(help: "Until when (RFC 3339).") var until: Timestamp?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Conversation {
            try await services.chat.mute(conversation, until: until?.date, as: actor)
        }

        func tell(_ updated: Conversation) {
            print(updated.mutedUntil.map { "Muted until \(show($0))." } ?? "Unmuted.")
        }
    }
}
