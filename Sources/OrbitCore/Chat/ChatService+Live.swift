package import Foundation
import OrbitPostgres

/// What a chat notification on `orbit_chat` says (sql/800_changes.sql sends the first three at
/// commit; `typing` is sent by the server a participant types on, and never stored):
/// `<conversation> <kind> <id>`, or `<conversation> participants <user>,<user>,…` for the
/// participants whose receipts one statement moved.
package enum ChatEvent: Sendable, Hashable {
    /// A message was stored, edited or deleted.
    case message(ConversationID, MessageID)
    /// A participant's watermarks moved (a receipt), or they left.
    case participant(ConversationID, UserID)
    /// A conversation was started.
    case conversation(ConversationID)
    case typing(ConversationID, UserID)

    package static let channel = "orbit_chat"

    package init?(payload: String) {
        let parts = payload.split(separator: " ")
        guard parts.count == 3, let conversation = ConversationID(String(parts[0])) else { return nil }
        switch parts[1] {
        case "message": guard let id = MessageID(String(parts[2])) else { return nil }; self = .message(conversation, id)
        case "participant": guard let id = UserID(String(parts[2])) else { return nil }; self = .participant(conversation, id)
        case "conversation": self = .conversation(conversation)
        case "typing": guard let id = UserID(String(parts[2])) else { return nil }; self = .typing(conversation, id)
        default: return nil
        }
    }

    /// The events of a notification's payload (none when it is not one of ours).
    package static func events(payload: String) -> [ChatEvent] {
        let parts = payload.split(separator: " ")
        guard parts.count == 3, parts[1] == "participants", let conversation = ConversationID(String(parts[0])) else {
            return ChatEvent(payload: payload).map { [$0] } ?? []
        }
        return parts[2].split(separator: ",").compactMap { UserID(String($0)).map { .participant(conversation, $0) } }
    }

    package var conversation: ConversationID {
        switch self {
        case .message(let conversation, _), .participant(let conversation, _), .conversation(let conversation), .typing(let conversation, _):
            return conversation
        }
    }
}

/// A message of `GET /live` about chat (docs/chat.md, "Live"), for the sockets of `recipients`.
package struct ChatLiveMessage: Sendable, OmitsNilMembers {
    package enum Kind: String, Sendable, Encodable { case message, receipts, typing, changes }

    /// A participant's watermarks.
    package struct Receipt: Sendable, Encodable {
        package var userID: UserID
        package var readPosition: Int64
        package var deliveredPosition: Int64

        enum CodingKeys: String, CodingKey { case userID = "user_id", readPosition = "read_position", deliveredPosition = "delivered_position" }
    }

    package var type: Kind
    package var communityID: CommunityID
    package var conversationID: ConversationID
    /// `message`: the message (as history returns it, without `status`).
    package var message: ChatMessage?
    /// `typing`: who types.
    package var userID: UserID?
    /// `receipts`: the participants whose watermarks moved, with their watermarks now.
    package var receipts: [Receipt]?

    enum CodingKeys: String, CodingKey {
        case type, communityID = "community_id", conversationID = "conversation_id", message, userID = "user_id", receipts
    }
}

/// Someone's presence as the reader may see it (`GET /users/{id}/presence`).
package struct Presence: Sendable, Codable, Equatable {
    package var userID: UserID
    /// false: they hide their presence (`online` false, `last_seen_at` null).
    package var visible: Bool
    package var online: Bool
    package var lastSeenAt: Date?

    enum CodingKeys: String, CodingKey { case userID = "user_id", visible, online, lastSeenAt = "last_seen_at" }
}

extension ChatService {
    /// Tells the conversation's other participants that the actor is typing: a notification to
    /// every server, nothing stored. Only a participant may.
    package func typing(in conversation: ConversationID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let payload = "\(conversation) typing \(actor)"
            // Row-level security: the notification is sent only if the actor takes part.
            let sent = try await connection.query(
                "SELECT pg_notify(\(ChatEvent.channel), \(payload)) FROM conversations WHERE id = \(conversation)"
            ).count
            guard sent == 1 else { throw ServiceError.notFound("Conversation \(conversation)") }
        }
    }

    /// The presence of `user` as the actor may see it: their own, or of someone who shares an
    /// active community with them (others: not found).
    package func presence(of user: UserID, as actor: UserID) async throws -> Presence {
        try await runner.asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT user_id, visible, online, last_seen_at FROM orbit.presence(\([user.uuid])::uuid[])"
                ).first
            else { throw ServiceError.notFound("User \(user)") }
            let (id, visible, online, lastSeen) = try row.decode((UserID, Bool, Bool, Date?).self)
            return Presence(userID: id, visible: visible, online: online, lastSeenAt: lastSeen)
        }
    }

    /// Shows or hides the actor's presence from everyone else.
    package func setPresenceVisible(_ visible: Bool, as actor: UserID) async throws -> Presence {
        _ = try await runner.asUser(actor) { connection in
            try await connection.query("UPDATE users SET presence_visible = \(visible) WHERE id = \(actor)")
        }
        return try await presence(of: actor, as: actor)
    }

    // MARK: - Servers (operator)

    /// How long a socket's row stays fresh without its server refreshing it (the SQL functions
    /// of sql/200_chat.sql use the same 90 s); servers refresh every `presenceRefresh`.
    package static let presenceRefresh: Duration = .seconds(30)

    /// Operator: a live socket of `user` opened on `server`.
    package func socketOpened(_ socket: UUID, of user: UserID, on server: UUID) async throws {
        _ = try await runner.asOperator { connection in
            try await connection.query("INSERT INTO live_connections (id, user_id, server_id) VALUES (\(socket), \(user), \(server))")
        }
    }

    /// Operator: a live socket closed; the user was last seen now if it was their last.
    package func socketClosed(_ socket: UUID) async throws {
        _ = try await runner.asOperator { connection in
            try await connection.query(
                """
                WITH closed AS (DELETE FROM live_connections WHERE id = \(socket) RETURNING user_id)
                UPDATE users u SET last_seen_at = now() FROM closed WHERE u.id = closed.user_id
                """)
        }
    }

    /// Operator: refreshes the sockets of `server` (they stay online), and clears sockets no
    /// server refreshed for five minutes (their server stopped): their users were last seen then.
    package func refreshSockets(on server: UUID) async throws {
        try await runner.asOperator { connection in
            try await connection.query("UPDATE live_connections SET seen_at = now() WHERE server_id = \(server)")
            try await connection.query(
                """
                WITH stale AS (
                    DELETE FROM live_connections WHERE seen_at < now() - interval '5 minutes' RETURNING user_id, seen_at
                ), last AS (SELECT user_id, max(seen_at) AS seen FROM stale GROUP BY user_id)
                UPDATE users u SET last_seen_at = greatest(u.last_seen_at, last.seen) FROM last WHERE u.id = last.user_id
                """)
        }
    }

    /// Operator: what `events` (one batch of notifications) tell the sockets of the connected
    /// users `among`, and whose: each conversation's active participants (active members of a
    /// community not deleted), and for someone who left, that user (to pull the feed, where the
    /// conversation is gone). One transaction for the batch, a few statements per conversation,
    /// and the receipts of a conversation in one message: 200 people marking a message delivered
    /// at once make a few messages per socket, not 200.
    package func liveMessages(for events: [ChatEvent], among connected: [UserID]) async throws
        -> [(recipients: Set<UserID>, message: ChatLiveMessage)]
    {
        guard !connected.isEmpty, !events.isEmpty else { return [] }
        var order: [ConversationID] = []
        var byConversation: [ConversationID: [ChatEvent]] = [:]
        for event in events {
            if byConversation[event.conversation] == nil { order.append(event.conversation) }
            byConversation[event.conversation, default: []].append(event)
        }
        return try await runner.asOperator { connection in
            var out: [(Set<UserID>, ChatLiveMessage)] = []
            for conversation in order {
                out += try await Self.liveMessages(
                    for: byConversation[conversation] ?? [], in: conversation, among: connected, on: connection)
            }
            return out
        }
    }

    /// The most receipts one `receipts` message carries (about 8 KB).
    static let receiptsPerMessage = 100

    private static func liveMessages(
        for events: [ChatEvent], in conversation: ConversationID, among connected: [UserID], on connection: PostgresConnection
    )
        async throws -> [(Set<UserID>, ChatLiveMessage)]
    {
        guard
            let community = try await connection.query(
                "SELECT c.community_id FROM conversations c JOIN communities o ON o.id = c.community_id AND o.deleted_at IS NULL WHERE c.id = \(conversation)"
            ).first?.decode("community_id", as: CommunityID.self)
        else { return [] }
        let participants = Set(
            try await connection.query(
                """
                SELECT p.user_id FROM conversation_participants p
                JOIN members m ON m.community_id = p.community_id AND m.user_id = p.user_id AND m.left_at IS NULL
                WHERE p.conversation_id = \(conversation) AND p.left_at IS NULL AND p.user_id = ANY(\(connected.map(\.uuid)))
                """
            ).map { try $0.decode("user_id", as: UserID.self) })
        let base = ChatLiveMessage(type: .changes, communityID: community, conversationID: conversation)
        var out: [(Set<UserID>, ChatLiveMessage)] = []
        var messageIDs: [UUID] = []
        var movers: [UUID] = []
        for event in events {
            switch event {
            case .conversation:
                if !participants.isEmpty { out.append((participants, base)) }
            case .message(_, let id):
                messageIDs.append(id.uuid)
            case .participant(_, let user):
                movers.append(user.uuid)
            case .typing:
                break
            }
        }
        if !messageIDs.isEmpty, !participants.isEmpty {
            for row in try await connection.query(
                "SELECT \(unescaped: ChatMessage.columns) FROM messages m WHERE m.id = ANY(\(messageIDs)) ORDER BY m.position")
            {
                var message = base
                message.type = .message
                message.message = try ChatMessage(row: row)
                out.append((participants, message))
            }
        }
        if !movers.isEmpty {
            var receipts: [ChatLiveMessage.Receipt] = []
            for row in try await connection.query(
                """
                SELECT user_id, read_position, delivered_position, left_at FROM conversation_participants
                WHERE conversation_id = \(conversation) AND user_id = ANY(\(movers))
                """)
            {
                let (user, read, delivered, left) = try row.decode((UserID, Int64, Int64, Date?).self)
                // Someone who left: told to pull (their feed drops the conversation).
                if left != nil, connected.contains(user) { out.append(([user], base)) }
                receipts.append(.init(userID: user, readPosition: read, deliveredPosition: delivered))
            }
            // At most `receiptsPerMessage` a message: 200 receipts in one were 17 KB, past the
            // 16 KB frame many WebSocket clients accept by default (the benchmark's did, and
            // dropped the socket).
            if !participants.isEmpty {
                for start in stride(from: 0, to: receipts.count, by: receiptsPerMessage) {
                    var message = base
                    message.type = .receipts
                    message.receipts = Array(receipts[start..<min(start + receiptsPerMessage, receipts.count)])
                    out.append((participants, message))
                }
            }
        }
        for case .typing(_, let user) in events {
            // Only a participant can have sent it (ChatService.typing checks).
            let others = participants.subtracting([user])
            guard !others.isEmpty else { continue }
            var message = base
            message.type = .typing
            message.userID = user
            out.append((others, message))
        }
        return out
    }
}

/// A receipt a socket sent (docs/chat.md, "Live"): its user has `message` of `conversation` on a
/// device.
package struct DeliveredMark: Sendable, Hashable {
    package var user: UserID
    package var conversation: ConversationID
    package var message: MessageID

    package init(user: UserID, conversation: ConversationID, message: MessageID) {
        self.user = user
        self.conversation = conversation
        self.message = message
    }
}

extension ChatService {
    /// Raises the delivered watermarks of many participants at once, in one statement: the
    /// marks the sockets of a server sent within a few milliseconds. A mark counts only for an
    /// active participant of the conversation and one of its messages (anything else changes
    /// nothing), and only raises a watermark. Returns how many watermarks rose.
    @discardableResult
    package func markDelivered(_ marks: [DeliveredMark]) async throws -> Int {
        guard !marks.isEmpty else { return 0 }
        return try await runner.asOperator { connection in
            try await connection.query(
                """
                UPDATE conversation_participants p SET delivered_position = d.position
                FROM (
                    SELECT x.user_id, x.conversation_id, max(m.position) AS position
                    FROM unnest(\(marks.map(\.user.uuid)), \(marks.map(\.conversation.uuid)), \(marks.map(\.message.uuid)))
                        AS x (user_id, conversation_id, message_id)
                    JOIN messages m ON m.id = x.message_id AND m.conversation_id = x.conversation_id
                    GROUP BY x.user_id, x.conversation_id) d
                WHERE p.conversation_id = d.conversation_id AND p.user_id = d.user_id AND p.left_at IS NULL
                  AND d.position > p.delivered_position
                """
            ).affectedRows ?? 0
        }
    }
}
