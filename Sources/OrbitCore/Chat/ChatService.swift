package import Foundation
import OrbitPostgres

/// Chat inside communities (docs/chat.md): the community's conversation, groups and direct
/// conversations, messages with receipts derived from watermarks. Row-level security lets only
/// a conversation's active participants (active members of its community) read or write it;
/// the checks here name the rule first.
package struct ChatService: Sendable {
    let runner: RequestRunner

    package init(_ runner: RequestRunner) { self.runner = runner }

    /// How long a sender may edit a message.
    static let editWindow: TimeInterval = 15 * 60
    /// The most people a group holds (the database holds to it too).
    static let groupLimit = 256

    /// Starts a group (chosen members and the actor, a title) or a direct conversation (the
    /// actor and one other member). A direct conversation that exists already is returned as it
    /// is (`created` false).
    package func start(
        in community: CommunityID, kind: ConversationKind, with users: [UserID], title: String? = nil, as actor: UserID
    ) async throws -> (conversation: Conversation, created: Bool) {
        let others = Array(Set(users).subtracting([actor])).sorted()
        let title = try title.map { try Validate.text($0, field: "title", limit: 100) }
        switch kind {
        case .community:
            throw ServiceError.invalidInput(field: "kind", reason: "must be group or direct (every community has its conversation already)")
        case .direct:
            guard users.count == 1 else {
                throw ServiceError.invalidInput(field: "user_ids", reason: "must name exactly one other member for a direct conversation")
            }
            guard title == nil else { throw ServiceError.invalidInput(field: "title", reason: "is for groups only") }
            // Well-formed, but oneself: the state (who is asking) refuses it.
            guard let other = others.first else { throw ServiceError.conflict(field: "user_ids", reason: "must name someone other than you") }
            return try await runner.asUser(actor) { connection in
                try await runner.requireMember(actor, of: community, on: connection)
                try await runner.requireActiveMembers([other], of: community, on: connection)
                let (low, high) = actor < other ? (actor, other) : (other, actor)
                if let existing = try await Self.direct(in: community, low, high, reader: actor, on: connection) {
                    return (existing, false)
                }
                let id = ConversationID.new(in: .conversations)
                do {
                    // In a savepoint: the same pair starting it at the same moment meets the
                    // unique index, and then the other's conversation is the one.
                    try await connection.withTransaction { connection in
                        try await connection.query(
                            """
                            INSERT INTO conversations (id, community_id, kind, created_by, direct_user_low, direct_user_high)
                            VALUES (\(id), \(community), 'direct', \(actor), \(low), \(high))
                            """)
                        try await connection.query(
                            """
                            INSERT INTO conversation_participants (conversation_id, user_id, community_id)
                            SELECT \(id), u, \(community) FROM unnest(\([actor.uuid, other.uuid])::uuid[]) AS u
                            """)
                    }
                } catch let error as PostgresError where error.sqlState == "23505" {
                    if let existing = try await Self.direct(in: community, low, high, reader: actor, on: connection) { return (existing, false) }
                    throw error
                }
                return (try await Self.conversation(id, reader: actor, on: connection), true)
            }
        case .group:
            guard !users.isEmpty else { throw ServiceError.invalidInput(field: "user_ids", reason: "must name at least one other member") }
            guard !others.isEmpty else { throw ServiceError.conflict(field: "user_ids", reason: "must name someone other than you") }
            guard others.count + 1 <= Self.groupLimit else {
                throw ServiceError.invalidInput(
                    field: "user_ids", reason: "must name at most \(Self.groupLimit - 1) others (a group holds \(Self.groupLimit))")
            }
            return try await runner.asUser(actor) { connection in
                try await runner.requireMember(actor, of: community, on: connection)
                try await runner.requireActiveMembers(others, of: community, on: connection)
                let id = ConversationID.new(in: .conversations)
                try await connection.query(
                    "INSERT INTO conversations (id, community_id, kind, title, created_by) VALUES (\(id), \(community), 'group', \(title), \(actor))")
                try await connection.query(
                    """
                    INSERT INTO conversation_participants (conversation_id, user_id, community_id)
                    SELECT \(id), u, \(community) FROM unnest(\(([actor] + others).map(\.uuid))::uuid[]) AS u
                    """)
                return (try await Self.conversation(id, reader: actor, on: connection), true)
            }
        }
    }

    /// The order of conversations: newest activity first.
    static let conversationOrder = Paging.Keyset.timeAndID("conversations", time: "coalesce(c.last_message_at, c.created_at)", id: "c.id")

    /// The actor's conversations, newest activity first (optionally of one community).
    package func list(in community: CommunityID? = nil, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<Conversation> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.conversationOrder.decode(cursor)
        return try await runner.asUser(actor) { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Conversation.columns), \(unescaped: Self.conversationOrder.columns)
                FROM conversations c JOIN conversation_participants p ON p.conversation_id = c.id AND p.user_id = \(actor) AND p.left_at IS NULL
                WHERE (\(community)::uuid IS NULL OR c.community_id = \(community))
                  AND \(try Self.conversationOrder.after(after))
                ORDER BY \(unescaped: Self.conversationOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.conversationOrder.page(rows, limit: limit, item: Conversation.init(row:))
        }
    }

    /// One conversation of the actor's.
    package func get(_ id: ConversationID, as actor: UserID) async throws -> Conversation {
        try await runner.asUser(actor) { try await Self.conversation(id, reader: actor, on: $0) }
    }

    /// Sends a message. With `clientMessageID`, a resend (the same sender and id) stores nothing
    /// and returns the first message (`created` false), however many are sent at once.
    /// With `encrypted`, the message is ciphertext (docs/e2e.md) and `text` is left out.
    package func send(
        to conversation: ConversationID, text: String?, encrypted: EncryptedContent? = nil, clientMessageID: String? = nil, as actor: UserID
    ) async throws -> (message: ChatMessage, created: Bool) {
        let text = try text.map { try Validate.text($0, field: "text", limit: 4000, multiline: true) }
        try EncryptedContent.requireOneForm(text, encrypted, field: "text", required: true)
        let clientMessageID = try clientMessageID.map(Self.validClientID)
        return try await runner.asUser(actor) { connection in
            _ = try await Self.access(conversation, on: connection)
            // The trigger numbers the message under the conversation's row lock, and stores
            // nothing for a resend (no row returned).
            let rows = try await connection.query(
                """
                INSERT INTO messages AS m (id, conversation_id, sender_id, text, content_encrypted, encryption_version, client_message_id)
                VALUES (
                    \(MessageID.random()), \(conversation), \(actor), \(text), \(encrypted?.ciphertext), \(encrypted?.keyVersion)::int,
                    \(clientMessageID))
                RETURNING \(unescaped: ChatMessage.columns)
                """)
            if let row = rows.first {
                var message = try ChatMessage(row: row)
                message.status = .sent
                try await Self.queuePushes(for: message, on: connection)
                return (message, true)
            }
            guard let clientMessageID,
                let row = try await connection.query(
                    "SELECT \(unescaped: ChatMessage.columns) FROM messages m WHERE m.sender_id = \(actor) AND m.client_message_id = \(clientMessageID)"
                ).first
            else { throw ServiceError.changedMeanwhile }
            let message = try ChatMessage(row: row)
            guard message.conversationID == conversation else {
                throw ServiceError.conflict(field: "client_message_id", reason: "was used for a message of another conversation")
            }
            // Other text under the same id while the message is as first sent (not edited or
            // deleted since, when any text would do): another message, not a resend (issue 38).
            if message.editedAt == nil, message.deletedAt == nil,
                message.text != text || message.contentEncrypted != encrypted?.ciphertext.base64EncodedString()
            {
                throw ResendDiffers(stored: try await Self.withStatus([message], in: conversation, reader: actor, on: connection)[0])
            }
            return (try await Self.withStatus([message], in: conversation, reader: actor, on: connection)[0], false)
        }
    }

    /// A `client_message_id` sent again with other text: `stored` is the message it names.
    package struct ResendDiffers: Error, Sendable {
        package var stored: ChatMessage
    }

    /// A page of messages, newest first.
    package func history(of conversation: ConversationID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<ChatMessage>
    {
        try Validate.limit(limit, in: 1...200)
        let after = try PageCursor.decode(cursor, list: "messages", parts: 1)
        return try await runner.asUser(actor) { connection in
            _ = try await Self.access(conversation, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: ChatMessage.columns) FROM messages m
                WHERE m.conversation_id = \(conversation) AND (\(try after?.integer(0))::bigint IS NULL OR m.position < \(try after?.integer(0)))
                ORDER BY m.position DESC LIMIT \(limit + 1)
                """)
            let page = try Paging.page(rows, limit: limit, list: "messages", item: ChatMessage.init(row:)) { row in
                [String(try row.decode("position", as: Int64.self))]
            }
            return Page(items: try await Self.withStatus(page.items, in: conversation, reader: actor, on: connection), nextCursor: page.nextCursor)
        }
    }

    /// Which watermark `markRead`/`markDelivered` raise.
    package enum Watermark: Sendable { case read, delivered }

    /// Raises the actor's read (or delivered) watermark to `message` (never lowers it; read
    /// implies delivered). Returns the conversation with the new unread count.
    package func mark(_ watermark: Watermark, upTo message: MessageID, in conversation: ConversationID, as actor: UserID) async throws
        -> Conversation
    {
        try await runner.asUser(actor) { connection in
            _ = try await Self.access(conversation, on: connection)
            let query: PostgresQuery = """
                UPDATE conversation_participants AS p
                SET read_position = CASE WHEN \(watermark == .read) THEN greatest(p.read_position, m.position) ELSE p.read_position END,
                    delivered_position = greatest(p.delivered_position, m.position)
                FROM messages m
                WHERE m.id = \(message) AND m.conversation_id = \(conversation) AND p.conversation_id = \(conversation) AND p.user_id = \(actor)
                """
            guard try await connection.query(query).affectedRows == 1 else { throw ServiceError.notFound("Message \(message) in this conversation") }
            if watermark == .read {
                // The pushes of what is read now are read too (they leave the badge).
                try await connection.query(
                    """
                    UPDATE notifications n SET read_at = now()
                    FROM conversation_participants p
                    WHERE n.user_id = \(actor) AND n.type = 'chat_message' AND n.read_at IS NULL AND n.data ->> 'conversation_id' = \(conversation.description)
                      AND (n.data ->> 'position')::bigint <= p.read_position AND p.conversation_id = \(conversation) AND p.user_id = \(actor)
                    """)
            }
            return try await Self.conversation(conversation, reader: actor, on: connection)
        }
    }

    /// Edits one's own message within 15 minutes of sending it (new text, or new ciphertext).
    package func edit(_ message: MessageID, text: String?, encrypted: EncryptedContent? = nil, as actor: UserID) async throws -> ChatMessage {
        let text = try text.map { try Validate.text($0, field: "text", limit: 4000, multiline: true) }
        try EncryptedContent.requireOneForm(text, encrypted, field: "text", required: true)
        return try await runner.asUser(actor) { connection in
            let current = try await Self.message(message, on: connection)
            guard current.senderID == actor else { throw ServiceError.forbidden(rule: "only the sender edits a message") }
            guard current.deletedAt == nil else { throw ServiceError.conflict(field: "message", reason: "was deleted") }
            guard runner.now().timeIntervalSince(current.createdAt) <= Self.editWindow else {
                throw ServiceError.forbidden(rule: "a message can be edited for 15 minutes after it was sent")
            }
            // The UPDATE checks the deletion itself: one that committed after the read above
            // leaves nothing to edit.
            guard
                let row = try await connection.query(
                    """
                    UPDATE messages AS m SET text = \(text), content_encrypted = \(encrypted?.ciphertext),
                        encryption_version = \(encrypted?.keyVersion)::int, edited_at = now()
                    WHERE m.id = \(message) AND m.deleted_at IS NULL RETURNING \(unescaped: ChatMessage.columns)
                    """
                ).first
            else { throw ServiceError.conflict(field: "message", reason: "was deleted") }
            return try await Self.withStatus([try ChatMessage(row: row)], in: current.conversationID, reader: actor, on: connection)[0]
        }
    }

    /// Deletes a message: one's own, or any in the community conversation as an admin. Its
    /// text is gone; the message stays as a deleted placeholder, in its place.
    package func delete(_ message: MessageID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let current = try await Self.message(message, on: connection)
            guard current.deletedAt == nil else { return }
            if current.senderID != actor {
                let conversation = try await Self.access(current.conversationID, on: connection)
                guard conversation.kind == .community,
                    try await runner.membership(actor, in: conversation.community, on: connection) == .admin
                else {
                    throw ServiceError.forbidden(rule: "only the sender deletes a message, or an admin in the community conversation")
                }
            }
            try await connection.query(
                "UPDATE messages SET text = NULL, content_encrypted = NULL, encryption_version = NULL, deleted_at = now() WHERE id = \(message) AND deleted_at IS NULL"
            )
        }
    }

    /// Leaves a group. (The community conversation is left by leaving the community; a direct
    /// conversation is muted, not left.)
    package func leave(_ conversation: ConversationID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let current = try await Self.access(conversation, on: connection)
            guard current.kind == .group else {
                throw ServiceError.conflict(
                    field: "conversation",
                    reason: current.kind == .community ? "is the community's: leave the community to leave it" : "is direct: mute it instead")
            }
            try await connection.query(
                "UPDATE conversation_participants SET left_at = now() WHERE conversation_id = \(conversation) AND user_id = \(actor)")
        }
    }

    /// Removes someone from a group (its starter); their access ends at once.
    package func remove(_ user: UserID, from conversation: ConversationID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let current = try await Self.access(conversation, on: connection)
            guard current.kind == .group, current.startedBy == actor else {
                throw ServiceError.forbidden(rule: "only the starter of a group removes people from it")
            }
            let removed = try await connection.query(
                "UPDATE conversation_participants SET left_at = now() WHERE conversation_id = \(conversation) AND user_id = \(user) AND left_at IS NULL"
            ).affectedRows
            guard removed == 1 else { throw ServiceError.notFound("Participant \(user)") }
        }
    }

    /// Mutes the conversation for the actor until `until` (nil: unmutes): no pushes meanwhile.
    package func mute(_ conversation: ConversationID, until: Date?, as actor: UserID) async throws -> Conversation {
        try await runner.asUser(actor) { connection in
            _ = try await Self.access(conversation, on: connection)
            try await connection.query(
                "UPDATE conversation_participants SET muted_until = \(until) WHERE conversation_id = \(conversation) AND user_id = \(actor)")
            return try await Self.conversation(conversation, reader: actor, on: connection)
        }
    }

    // MARK: - Reading

    /// The conversation's kind, community and starter, if the reader takes part in it (row-level
    /// security shows it to active participants only): the check before a write or a page,
    /// without the counts `conversation` computes.
    static func access(_ id: ConversationID, on connection: PostgresConnection) async throws
        -> (kind: ConversationKind, community: CommunityID, startedBy: UserID?)
    {
        guard let row = try await connection.query("SELECT kind, community_id, created_by FROM conversations WHERE id = \(id)").first,
            let kind = ConversationKind(rawValue: try row.decode("kind", as: String.self))
        else { throw ServiceError.notFound("Conversation \(id)") }
        return (kind, try row.decode("community_id"), try row.decode("created_by"))
    }

    static func conversation(_ id: ConversationID, reader: UserID, on connection: PostgresConnection) async throws -> Conversation {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: Conversation.columns)
                FROM conversations c JOIN conversation_participants p ON p.conversation_id = c.id AND p.user_id = \(reader) AND p.left_at IS NULL
                WHERE c.id = \(id)
                """
            ).first
        else { throw ServiceError.notFound("Conversation \(id)") }
        return try Conversation(row: row)
    }

    /// The direct conversation of `low` and `high` in `community`, if `reader` takes part in it.
    /// One that exists but that they no longer take part in (they left the community since)
    /// cannot be started again.
    static func direct(in community: CommunityID, _ low: UserID, _ high: UserID, reader: UserID, on connection: PostgresConnection) async throws
        -> Conversation?
    {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: Conversation.columns)
                FROM conversations c JOIN conversation_participants p ON p.conversation_id = c.id AND p.user_id = \(reader) AND p.left_at IS NULL
                WHERE c.community_id = \(community) AND c.kind = 'direct' AND c.direct_user_low = \(low) AND c.direct_user_high = \(high)
                """
            ).first
        else { return nil }
        return try Conversation(row: row)
    }

    static func message(_ id: MessageID, on connection: PostgresConnection) async throws -> ChatMessage {
        guard let row = try await connection.query("SELECT \(unescaped: ChatMessage.columns) FROM messages m WHERE m.id = \(id)").first else {
            throw ServiceError.notFound("Message \(id)")
        }
        return try ChatMessage(row: row)
    }

    /// The reader's own messages get their status from the lowest watermarks of the others.
    static func withStatus(_ messages: [ChatMessage], in conversation: ConversationID, reader: UserID, on connection: PostgresConnection) async throws
        -> [ChatMessage]
    {
        guard messages.contains(where: { $0.senderID == reader }) else { return messages }
        let row = try await connection.query(
            """
            SELECT min(read_position) AS read, min(delivered_position) AS delivered FROM conversation_participants
            WHERE conversation_id = \(conversation) AND user_id <> \(reader) AND left_at IS NULL
            """
        ).single()
        let read = try row.decode("read", as: Int64?.self)
        let delivered = try row.decode("delivered", as: Int64?.self)
        return messages.map { message in
            guard message.senderID == reader else { return message }
            var message = message
            if let read, read >= message.position {
                message.status = .read
            } else if let delivered, delivered >= message.position {
                message.status = .delivered
            } else {
                message.status = .sent
            }
            return message
        }
    }

    /// Queues a push of a new message for its participants who will not see it on a live socket
    /// (orbit.chat_push_recipients: not the sender, not the muted, none with a fresh socket): a
    /// `chat_message` notification each, in the sending transaction, which push delivery hands
    /// out (every server's live listener wakes delivery when a message is stored).
    static func queuePushes(for message: ChatMessage, on connection: PostgresConnection) async throws {
        // Muting is chat's own (orbit.chat_push_recipients), not a community preference: no preferences.
        try await connection.query(
            NotificationService.enqueue(
                .chatMessage,
                """
                SELECT r.user_id, c.community_id,
                    left(coalesce(u.display_name, 'Someone') || CASE WHEN c.kind = 'direct' THEN '' ELSE ' in ' || coalesce(c.title, o.name) END, 200),
                    \(message.text ?? "")::text,
                    jsonb_build_object('conversation_id', c.id::text, 'message_id', \(message.id.description)::text, 'position', \(String(message.position))::text),
                    NULL::text, NULL::jsonb
                FROM conversations c
                JOIN communities o ON o.id = c.community_id
                JOIN users u ON u.id = \(message.senderID)
                CROSS JOIN LATERAL orbit.chat_push_recipients(c.id) AS r(user_id)
                WHERE c.id = \(message.conversationID)
                """))
    }

    static func validClientID(_ value: String) throws -> String {
        guard (1...100).contains(value.count), value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw ServiceError.invalidInput(field: "client_message_id", reason: "must be 1 to 100 visible ASCII characters (a UUID)")
        }
        return value
    }
}
