package import Foundation
import OrbitPostgres

package enum PostTag {}
package enum CommentTag {}
package typealias PostID = Identifier<PostTag>
package typealias CommentID = Identifier<CommentTag>

/// What a post is (spec: post_type).
package enum PostType: String, DatabaseEnum {
    case text, photo, announcement, poll, eventShare = "event_share"
}

/// A reaction to a post (spec: reaction_type).
package enum ReactionType: String, DatabaseEnum {
    case like, love, laugh, celebrate
}

/// What a new post is.
package struct PostDraft: Sendable {
    package var type: PostType
    package var content: String?
    package var mediaURLs: [String]
    /// Uploads of the community (photo posts); their URLs are added to `mediaURLs`.
    package var mediaIDs: [MediaID]
    package var poll: Poll?
    package var linkedEventID: EventID?
    package var isAnnouncement: Bool
    /// The text as ciphertext instead (docs/e2e.md), in a community with end-to-end encryption.
    package var encrypted: EncryptedContent?

    package init(
        type: PostType = .text, content: String? = nil, mediaURLs: [String] = [], mediaIDs: [MediaID] = [], poll: Poll? = nil,
        linkedEventID: EventID? = nil, isAnnouncement: Bool = false, encrypted: EncryptedContent? = nil
    ) {
        self.type = type
        self.content = content
        self.encrypted = encrypted
        self.mediaURLs = mediaURLs
        self.mediaIDs = mediaIDs
        self.poll = poll
        self.linkedEventID = linkedEventID
        self.isAnnouncement = isAnnouncement
    }
}

/// `posts.poll_data` (spec: "Poll Data Structure").
package struct Poll: Sendable, Codable, Equatable, OmitsNilMembers {
    package var question: String
    package var options: [String]
    package var allowMultiple: Bool
    package var closesAt: Date?

    package init(question: String, options: [String], allowMultiple: Bool = false, closesAt: Date? = nil) {
        self.question = question
        self.options = options
        self.allowMultiple = allowMultiple
        self.closesAt = closesAt
    }

    /// Question 1–200 characters; 2–20 options, each 1–100 characters, distinct (ignoring case);
    /// a closing time in the future.
    func validated(now: Date) throws -> Poll {
        let question = try Validate.text(question, field: "poll_data.question", limit: 200)
        let options = try options.map { try Validate.text($0, field: "poll_data.options", limit: 100) }
        guard (2...20).contains(options.count) else {
            throw ServiceError.invalidInput(field: "poll_data.options", reason: "must hold 2 to 20 options")
        }
        guard Set(options.map { $0.lowercased() }).count == options.count else {
            throw ServiceError.invalidInput(field: "poll_data.options", reason: "must be different from each other")
        }
        if let closesAt, closesAt <= now {
            throw ServiceError.conflict(field: "poll_data.closesAt", reason: "must be in the future")
        }
        return Poll(question: question, options: options, allowMultiple: allowMultiple, closesAt: closesAt)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// A post as the feed shows it to one reader: its counts, and the reader's own reaction and
/// votes.
package struct FeedPost: Sendable, Codable, Equatable {
    package var id: PostID
    package var communityID: CommunityID
    package var authorID: UserID
    package var type: PostType
    /// The text; nil for a photo without one, and for ciphertext.
    package var content: String?
    /// End-to-end encrypted content (docs/e2e.md): the ciphertext in base64, exactly as sent.
    package var contentEncrypted: String?
    /// The community key version of `contentEncrypted`; 0 for plaintext.
    package var encryptionVersion: Int
    package var mediaURLs: [String]
    package var isPinned: Bool
    package var isAnnouncement: Bool
    package var linkedEventID: EventID?
    package var pollData: Poll?
    package var editableUntil: Date
    package var reactionCounts: [String: Int]
    package var commentCount: Int
    package var createdAt: Date
    package var updatedAt: Date
    package var myReaction: ReactionType?
    package var myVotes: [Int]
    package var mentionedUserIDs: [UserID]
    /// For a poll: the votes per option, in the poll's order.
    package var pollResults: [Int]?

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", authorID = "author_id", type, content, contentEncrypted = "content_encrypted"
        case encryptionVersion = "encryption_version", mediaURLs = "media_urls", isPinned = "is_pinned"
        case isAnnouncement = "is_announcement", linkedEventID = "linked_event_id", pollData = "poll_data", editableUntil = "editable_until"
        case reactionCounts = "reaction_counts", commentCount = "comment_count", createdAt = "created_at", updatedAt = "updated_at"
        case myReaction = "my_reaction", myVotes = "my_votes", mentionedUserIDs = "mentioned_user_ids", pollResults = "poll_results"
    }

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        authorID = try row.decode("author_id")
        type = try row.decode("type")
        content = try row.decode("content")
        contentEncrypted = try row.decode("content_encrypted", as: Data?.self)?.base64EncodedString()
        encryptionVersion = Int(try row.decode("encryption_version", as: Int32.self))
        mediaURLs = try row.decode("media_urls", as: PostgresJSON.self).decode()
        isPinned = try row.decode("is_pinned")
        isAnnouncement = try row.decode("is_announcement")
        linkedEventID = try row.decode("linked_event_id")
        pollData = try row.decode("poll_data", as: PostgresJSON?.self).map { try Poll.decoder.decode(Poll.self, from: Data($0.text.utf8)) }
        editableUntil = try row.decode("editable_until")
        reactionCounts = try row.decode("reaction_counts", as: PostgresJSON.self).decode()
        commentCount = Int(try row.decode("comment_count", as: Int32.self))
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        myReaction = try row.decode("my_reaction")
        myVotes = try row.decode("my_votes", as: [Int32].self).map(Int.init)
        mentionedUserIDs = try row.decode("mentioned_user_ids", as: [UUID].self).map(UserID.init)
        pollResults = try row.decode("poll_results", as: [Int32]?.self)?.map(Int.init)
    }
}

/// One page of a feed and the cursor of the next (nil on the last page).
package struct FeedPage: Sendable, Codable, Equatable {
    package var items: [FeedPost]
    package var nextCursor: String?

    enum CodingKeys: String, CodingKey { case items, nextCursor = "next_cursor" }

    package init(items: [FeedPost], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// Where a feed page ends: the (is_pinned, created_at, id) of its last post. Opaque to clients
/// (base64url text with a version and a checksum), and validated when it comes back.
package struct FeedCursor: Sendable, Equatable {
    package var pinned: Bool
    /// created_at in microseconds since 1970, exactly as PostgreSQL stores it.
    package var createdMicroseconds: Int64
    package var id: UUID

    package var encoded: String {
        let body = "v1.\(pinned ? 1 : 0).\(createdMicroseconds).\(id.uuidString.lowercased())"
        let text = body + "." + String(Self.checksum(body), radix: 36)
        return Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package init(pinned: Bool, createdMicroseconds: Int64, id: UUID) {
        self.pinned = pinned
        self.createdMicroseconds = createdMicroseconds
        self.id = id
    }

    /// - Throws: `ServiceError.invalidInput(field: "cursor")` for anything this server did not make.
    package init(decoding text: String) throws {
        let invalid = ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this feed")
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 200, let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { throw invalid }
        let parts = decoded.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == "v1", parts[1] == "0" || parts[1] == "1", let micros = Int64(parts[2]),
            let id = UUID(uuidString: parts[3]), parts[4] == String(Self.checksum(parts[0...3].joined(separator: ".")), radix: 36)
        else { throw invalid }
        self.init(pinned: parts[1] == "1", createdMicroseconds: micros, id: id)
    }

    /// FNV-1a: catches edited or truncated cursors (it is not a secret; RLS guards the data).
    static func checksum(_ text: String) -> UInt32 {
        text.utf8.reduce(2_166_136_261 as UInt32) { ($0 ^ UInt32($1)) &* 16_777_619 }
    }
}

/// A comment (spec: Comments). A deleted comment that still has replies is listed with no content.
package struct Comment: Sendable, Codable, Equatable {
    package var id: CommentID
    package var postID: PostID
    package var authorID: UserID
    package var parentID: CommentID?
    /// The text; nil once deleted, and for ciphertext.
    package var content: String?
    /// End-to-end encrypted content (docs/e2e.md): the ciphertext in base64, exactly as sent.
    package var contentEncrypted: String?
    /// The community key version of `contentEncrypted`; 0 for plaintext.
    package var encryptionVersion: Int
    package var createdAt: Date
    package var updatedAt: Date
    package var deletedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, postID = "post_id", authorID = "author_id", parentID = "parent_id", content, contentEncrypted = "content_encrypted"
        case encryptionVersion = "encryption_version", createdAt = "created_at", updatedAt = "updated_at", deletedAt = "deleted_at"
    }

    static let columns = """
        c.id, c.post_id, c.author_id, c.parent_id, c.content, c.content_encrypted, c.encryption_version, c.created_at, c.updated_at, c.deleted_at
        """

    init(row: PostgresRow) throws {
        let ciphertext: Data?
        let version: Int32
        (id, postID, authorID, parentID, content, ciphertext, version, createdAt, updatedAt, deletedAt) = try row.decode(
            (CommentID, PostID, UserID, CommentID?, String?, Data?, Int32, Date, Date, Date?).self
        )
        contentEncrypted = ciphertext?.base64EncodedString()
        encryptionVersion = Int(version)
        if deletedAt != nil || contentEncrypted != nil { content = nil }
        if deletedAt != nil { contentEncrypted = nil }
    }
}
