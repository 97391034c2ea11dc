package import Foundation
import OrbitPostgres

package enum ConversationTag {}
package enum MessageTag {}
package typealias ConversationID = Identifier<ConversationTag>
package typealias MessageID = Identifier<MessageTag>

/// `community`: the whole community (every active member takes part); `group`: chosen members,
/// with a title; `direct`: two members.
package enum ConversationKind: String, Sendable, Codable, CaseIterable {
    case community, group, direct
}

/// How far one's own message got: stored; on every other participant's device; read by all.
package enum MessageStatus: String, Sendable, Codable {
    case sent, delivered, read
}

/// A conversation as one participant sees it: with its last message and their unread count.
package struct Conversation: Sendable, Codable, Equatable {
    package struct LastMessage: Sendable, Codable, Equatable {
        package var id: MessageID
        package var senderID: UserID?
        /// nil once deleted.
        package var text: String?
        package var createdAt: Date

        enum CodingKeys: String, CodingKey { case id, senderID = "sender_id", text, createdAt = "created_at" }
    }

    package var id: ConversationID
    package var communityID: CommunityID
    package var kind: ConversationKind
    package var title: String?
    package var createdBy: UserID?
    /// The other person of a direct conversation.
    package var withUserID: UserID?
    package var participantCount: Int
    package var lastMessage: LastMessage?
    package var unreadCount: Int
    /// The reader's own watermarks: the last message they read, and the last on a device of theirs.
    package var readPosition: Int64
    package var deliveredPosition: Int64
    /// Receipts: every other active participant has read (has on a device) the messages up to
    /// these positions; nil when nobody else takes part. One's own message at or below them is
    /// `read` (`delivered`).
    package var othersReadPosition: Int64?
    package var othersDeliveredPosition: Int64?
    package var mutedUntil: Date?
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", kind, title, createdBy = "created_by", withUserID = "with_user_id"
        case participantCount = "participant_count", lastMessage = "last_message", unreadCount = "unread_count"
        case readPosition = "read_position", deliveredPosition = "delivered_position", othersReadPosition = "others_read_position"
        case othersDeliveredPosition = "others_delivered_position"
        case mutedUntil = "muted_until", createdAt = "created_at"
    }

    /// The columns `init(row:)` reads: `c` the conversation, `p` the reader's participation.
    static let columns = """
        c.id, c.community_id, c.kind, c.title, c.created_by, c.created_at, c.last_message_id, c.last_message_sender_id,
        c.last_message_text, c.last_message_at, p.muted_until, p.read_position, p.delivered_position,
        CASE WHEN c.kind = 'direct' THEN CASE WHEN c.direct_user_low = p.user_id THEN c.direct_user_high ELSE c.direct_user_low END END AS with_user_id,
        (SELECT count(*) FROM conversation_participants x WHERE x.conversation_id = c.id AND x.left_at IS NULL) AS participant_count,
        (SELECT count(*) FROM messages m
         WHERE m.conversation_id = c.id AND m.position > p.read_position AND m.sender_id IS DISTINCT FROM p.user_id AND m.deleted_at IS NULL
        ) AS unread_count,
        (SELECT min(x.read_position) FROM conversation_participants x WHERE x.conversation_id = c.id AND x.left_at IS NULL AND x.user_id <> p.user_id
        ) AS others_read_position,
        (SELECT min(x.delivered_position) FROM conversation_participants x
         WHERE x.conversation_id = c.id AND x.left_at IS NULL AND x.user_id <> p.user_id) AS others_delivered_position
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        guard let kind = ConversationKind(rawValue: try row.decode("kind", as: String.self)) else {
            throw ServiceError.conflict("A conversation of an unknown kind.")
        }
        self.kind = kind
        title = try row.decode("title")
        createdBy = try row.decode("created_by")
        createdAt = try row.decode("created_at")
        if let lastID = try row.decode("last_message_id", as: MessageID?.self), let lastAt = try row.decode("last_message_at", as: Date?.self) {
            lastMessage = LastMessage(
                id: lastID, senderID: try row.decode("last_message_sender_id"), text: try row.decode("last_message_text"), createdAt: lastAt)
        }
        mutedUntil = try row.decode("muted_until")
        withUserID = try row.decode("with_user_id")
        participantCount = Int(try row.decode("participant_count", as: Int64.self))
        unreadCount = Int(try row.decode("unread_count", as: Int64.self))
        readPosition = try row.decode("read_position")
        deliveredPosition = try row.decode("delivered_position")
        othersReadPosition = try row.decode("others_read_position")
        othersDeliveredPosition = try row.decode("others_delivered_position")
    }
}

/// A message of a conversation. `status` is there for the reader's own messages only, derived
/// from the other participants' watermarks (no row per message per reader).
package struct ChatMessage: Sendable, Codable, Equatable {
    package var id: MessageID
    package var conversationID: ConversationID
    package var senderID: UserID?
    /// 1, 2, 3… in the conversation, in the order stored.
    package var position: Int64
    /// nil once deleted (or when the content is encrypted).
    package var text: String?
    /// End-to-end encrypted content (docs/e2e.md): the ciphertext in base64, exactly as sent.
    package var contentEncrypted: String?
    /// The community key version of `contentEncrypted`; nil for plaintext.
    package var encryptionVersion: Int?
    package var clientMessageID: String?
    package var status: MessageStatus?
    package var createdAt: Date
    package var editedAt: Date?
    package var deletedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, conversationID = "conversation_id", senderID = "sender_id", position, text, contentEncrypted = "content_encrypted"
        case encryptionVersion = "encryption_version"
        case clientMessageID = "client_message_id", status, createdAt = "created_at", editedAt = "edited_at", deletedAt = "deleted_at"
    }

    static let columns = """
        m.id, m.conversation_id, m.sender_id, m.position, m.text, m.content_encrypted, m.encryption_version, m.client_message_id, m.created_at,
        m.edited_at, m.deleted_at
        """

    init(row: PostgresRow) throws {
        let encryption: Int32?
        let ciphertext: Data?
        (id, conversationID, senderID, position, text, ciphertext, encryption, clientMessageID, createdAt, editedAt, deletedAt) = try row.decode(
            (MessageID, ConversationID, UserID?, Int64, String?, Data?, Int32?, String?, Date, Date?, Date?).self)
        contentEncrypted = ciphertext?.base64EncodedString()
        encryptionVersion = encryption.map(Int.init)
        if deletedAt != nil {
            text = nil
            contentEncrypted = nil
            encryptionVersion = nil
        }
    }
}
