public import Foundation
import OrbitPostgres

public enum PostTag {}
public enum CommentTag {}
public typealias PostID = Identifier<PostTag>
public typealias CommentID = Identifier<CommentTag>

/// `posts.poll_data` (spec: "Poll Data Structure").
public struct Poll: Sendable, Codable, Equatable {
    public var question: String
    public var options: [String]
    public var allowMultiple: Bool
    public var closesAt: Date?

    public init(question: String, options: [String], allowMultiple: Bool = false, closesAt: Date? = nil) {
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
            throw ServiceError.invalidInput(field: "poll_data.closesAt", reason: "must be in the future")
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
public struct FeedPost: Sendable, Codable, Equatable {
    public var id: PostID
    public var communityID: CommunityID
    public var authorID: UserID
    public var type: String
    public var content: String?
    public var mediaURLs: [String]
    public var isPinned: Bool
    public var isAnnouncement: Bool
    public var linkedEventID: EventID?
    public var pollData: Poll?
    public var editableUntil: Date
    public var reactionCounts: [String: Int]
    public var commentCount: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var myReaction: String?
    public var myVotes: [Int]
    public var mentionedUserIDs: [UserID]

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", authorID = "author_id", type, content, mediaURLs = "media_urls", isPinned = "is_pinned"
        case isAnnouncement = "is_announcement", linkedEventID = "linked_event_id", pollData = "poll_data", editableUntil = "editable_until"
        case reactionCounts = "reaction_counts", commentCount = "comment_count", createdAt = "created_at", updatedAt = "updated_at"
        case myReaction = "my_reaction", myVotes = "my_votes", mentionedUserIDs = "mentioned_user_ids"
    }

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        authorID = try row.decode("author_id")
        type = try row.decode("type")
        content = try row.decode("content")
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
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(authorID, forKey: .authorID)
        try container.encode(type, forKey: .type)
        try container.encode(content, forKey: .content)
        try container.encode(mediaURLs, forKey: .mediaURLs)
        try container.encode(isPinned, forKey: .isPinned)
        try container.encode(isAnnouncement, forKey: .isAnnouncement)
        try container.encode(linkedEventID, forKey: .linkedEventID)
        try container.encode(pollData, forKey: .pollData)
        try container.encode(editableUntil, forKey: .editableUntil)
        try container.encode(reactionCounts, forKey: .reactionCounts)
        try container.encode(commentCount, forKey: .commentCount)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(myReaction, forKey: .myReaction)
        try container.encode(myVotes, forKey: .myVotes)
        try container.encode(mentionedUserIDs, forKey: .mentionedUserIDs)
    }
}

/// One page of a feed and the cursor of the next (nil on the last page).
public struct FeedPage: Sendable, Codable, Equatable {
    public var items: [FeedPost]
    public var nextCursor: String?

    enum CodingKeys: String, CodingKey { case items, nextCursor = "next_cursor" }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

/// Where a feed page ends: the (is_pinned, created_at, id) of its last post. Opaque to clients
/// (base64url text with a version and a checksum), and validated when it comes back.
public struct FeedCursor: Sendable, Equatable {
    public var pinned: Bool
    /// created_at in microseconds since 1970, exactly as PostgreSQL stores it.
    public var createdMicroseconds: Int64
    public var id: UUID

    public var encoded: String {
        let body = "v1.\(pinned ? 1 : 0).\(createdMicroseconds).\(id.uuidString.lowercased())"
        let text = body + "." + String(Self.checksum(body), radix: 36)
        return Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public init(pinned: Bool, createdMicroseconds: Int64, id: UUID) {
        self.pinned = pinned
        self.createdMicroseconds = createdMicroseconds
        self.id = id
    }

    /// - Throws: `ServiceError.invalidInput(field: "cursor")` for anything this server did not make.
    public init(decoding text: String) throws {
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
public struct Comment: Sendable, Codable, Equatable {
    public var id: CommentID
    public var postID: PostID
    public var authorID: UserID
    public var parentID: CommentID?
    public var content: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var deletedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, postID = "post_id", authorID = "author_id", parentID = "parent_id", content, createdAt = "created_at"
        case updatedAt = "updated_at", deletedAt = "deleted_at"
    }

    static let columns = "c.id, c.post_id, c.author_id, c.parent_id, c.content, c.created_at, c.updated_at, c.deleted_at"

    init(row: PostgresRow) throws {
        (id, postID, authorID, parentID, content, createdAt, updatedAt, deletedAt) = try row.decode(
            (CommentID, PostID, UserID, CommentID?, String?, Date, Date, Date?).self
        )
        if deletedAt != nil { content = nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(postID, forKey: .postID)
        try container.encode(authorID, forKey: .authorID)
        try container.encode(parentID, forKey: .parentID)
        try container.encode(content, forKey: .content)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(deletedAt, forKey: .deletedAt)
    }
}
