public import Foundation
import OrbitPostgres

/// A role in a community (spec: member_role).
public enum MemberRole: String, Sendable, Codable, CaseIterable {
    case admin, member
}

/// A membership (spec: Members), with the member's display name for listings.
public struct Member: Sendable, Codable, Equatable {
    public var id: MemberID
    public var communityID: CommunityID
    public var userID: UserID
    public var displayName: String?
    public var role: MemberRole
    public var nickname: String?
    public var joinedAt: Date
    public var invitedBy: UserID?
    public var leftAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", userID = "user_id", displayName = "display_name", role, nickname
        case joinedAt = "joined_at", invitedBy = "invited_by", leftAt = "left_at"
    }

    /// Encodes every column, `null` included (synthesized Codable would leave nil keys out).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(userID, forKey: .userID)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(role, forKey: .role)
        try container.encode(nickname, forKey: .nickname)
        try container.encode(joinedAt, forKey: .joinedAt)
        try container.encode(invitedBy, forKey: .invitedBy)
        try container.encode(leftAt, forKey: .leftAt)
    }

    static let columns = """
        m.id, m.community_id, m.user_id, u.display_name, m.role::text AS role, m.nickname, m.joined_at, m.invited_by, m.left_at
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        userID = try row.decode("user_id")
        displayName = try row.decode("display_name")
        let roleName = try row.decode("role", as: String.self)
        role = MemberRole(rawValue: roleName) ?? .member
        nickname = try row.decode("nickname")
        joinedAt = try row.decode("joined_at")
        invitedBy = try row.decode("invited_by")
        leftAt = try row.decode("left_at")
    }
}

/// An entry of a community's audit log (spec: Audit Log).
public struct AuditEntry: Sendable, Codable, Equatable {
    public var id: AuditEntryID
    public var communityID: CommunityID?
    public var userID: UserID
    public var action: String
    public var targetType: String?
    public var targetID: UUID?
    public var metadata: String
    /// The client's IP address, for actions that came through the HTTP API.
    public var ipAddress: String?
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", userID = "user_id", action, targetType = "target_type", targetID = "target_id"
        case metadata, ipAddress = "ip_address", createdAt = "created_at"
    }

    /// Encodes every column, `null` included (synthesized Codable would leave nil keys out).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(userID, forKey: .userID)
        try container.encode(action, forKey: .action)
        try container.encode(targetType, forKey: .targetType)
        try container.encode(targetID, forKey: .targetID)
        try container.encode(metadata, forKey: .metadata)
        try container.encode(ipAddress, forKey: .ipAddress)
        try container.encode(createdAt, forKey: .createdAt)
    }

    static let columns =
        "id, community_id, user_id, action, target_type, target_id, metadata::text AS metadata, host(ip_address) AS ip_address, created_at"

    init(row: PostgresRow) throws {
        (id, communityID, userID, action, targetType, targetID, metadata, ipAddress, createdAt) = try row.decode(
            (AuditEntryID, CommunityID?, UserID, String, String?, UUID?, String, String?, Date).self
        )
    }
}
