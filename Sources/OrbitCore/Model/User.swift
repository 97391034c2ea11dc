public import Foundation
import OrbitPostgres

/// An account (spec: Users).
public struct User: Sendable, Codable, Equatable {
    public var id: UserID
    public var appleID: String
    public var email: String
    public var displayName: String
    public var avatarURL: String?
    public var createdAt: Date
    public var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, appleID = "apple_id", email, displayName = "display_name", avatarURL = "avatar_url"
        case createdAt = "created_at", updatedAt = "updated_at"
    }

    /// Encodes every column, `null` included (synthesized Codable would leave nil keys out).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(appleID, forKey: .appleID)
        try container.encode(email, forKey: .email)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(avatarURL, forKey: .avatarURL)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }

    static let columns = "id, apple_id, email, display_name, avatar_url, created_at, updated_at"

    init(row: PostgresRow) throws {
        (id, appleID, email, displayName, avatarURL, createdAt, updatedAt) = try row.decode(
            (UserID, String, String, String, String?, Date, Date).self
        )
    }
}

/// A dependent a parent manages (spec: Family Members).
public struct FamilyMember: Sendable, Codable, Equatable {
    public var id: FamilyMemberID
    public var userID: UserID
    public var name: String
    public var avatarURL: String?
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", name, avatarURL = "avatar_url", createdAt = "created_at"
    }

    /// Encodes every column, `null` included (synthesized Codable would leave nil keys out).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(userID, forKey: .userID)
        try container.encode(name, forKey: .name)
        try container.encode(avatarURL, forKey: .avatarURL)
        try container.encode(createdAt, forKey: .createdAt)
    }

    static let columns = "id, user_id, name, avatar_url, created_at"

    init(row: PostgresRow) throws {
        (id, userID, name, avatarURL, createdAt) = try row.decode((FamilyMemberID, UserID, String, String?, Date).self)
    }
}
