package import Foundation
import OrbitPostgres

/// A role in a community (spec: member_role).
package enum MemberRole: String, DatabaseEnum {
    case admin, member
}

/// A membership (spec: Members), with the member's display name for listings. A guest (`isGuest`)
/// is a person without an account whom members added by name: they share expenses as members do,
/// and sign in never (docs/money.md, "Guests").
package struct Member: Sendable, Codable, Equatable {
    package var id: MemberID
    package var communityID: CommunityID
    package var userID: UserID
    package var displayName: String?
    package var role: MemberRole
    package var nickname: String?
    package var joinedAt: Date
    package var invitedBy: UserID?
    package var leftAt: Date?
    package var isGuest: Bool
    /// In new splits among everyone (false: left out of them, still in old ones and in balances).
    package var active: Bool
    /// Their part in a split by shares that names no weights (1 to 1,000).
    package var defaultWeight: Int

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", userID = "user_id", displayName = "display_name", role, nickname
        case joinedAt = "joined_at", invitedBy = "invited_by", leftAt = "left_at", isGuest = "guest", active
        case defaultWeight = "default_weight"
    }

    /// (`users` may be joined on the left: a former member's row is no longer shared.)
    static let columns = """
        m.id, m.community_id, m.user_id, u.display_name, m.role::text AS role, m.nickname, m.joined_at, m.invited_by, m.left_at,
        coalesce(u.is_guest, false) AS is_guest, m.active, m.default_weight
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        userID = try row.decode("user_id")
        displayName = try row.decode("display_name")
        role = try row.decode("role")
        nickname = try row.decode("nickname")
        joinedAt = try row.decode("joined_at")
        invitedBy = try row.decode("invited_by")
        leftAt = try row.decode("left_at")
        isGuest = try row.decode("is_guest")
        active = try row.decode("active")
        defaultWeight = Int(try row.decode("default_weight", as: Int32.self))
    }
}

/// One's own membership: the member row and one's notification preferences (per notification
/// type; a type set to false is not sent), which other members do not see.
package struct MyMembership: Sendable, Codable, Equatable {
    package var member: Member
    package var notificationPrefs: [String: Bool]
    /// Pinned first in the member's list of communities ("my groups"), at `position` among the
    /// pinned (ascending; none after those with one).
    package var pinned: Bool
    package var position: Int?

    enum CodingKeys: String, CodingKey { case notificationPrefs = "notification_prefs", pinned, position }

    package init(member: Member, notificationPrefs: [String: Bool], pinned: Bool = false, position: Int? = nil) {
        self.member = member
        self.notificationPrefs = notificationPrefs
        self.pinned = pinned
        self.position = position
    }

    /// The member's columns, `notification_prefs`, `pinned` and `position`, in one object.
    package func encode(to encoder: any Encoder) throws {
        try member.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(notificationPrefs, forKey: .notificationPrefs)
        try container.encode(pinned, forKey: .pinned)
        try container.encode(position, forKey: .position)
    }

    package init(from decoder: any Decoder) throws {
        member = try Member(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notificationPrefs = try container.decode([String: Bool].self, forKey: .notificationPrefs)
        pinned = try container.decodeIfPresent(Bool.self, forKey: .pinned) ?? false
        position = try container.decodeIfPresent(Int.self, forKey: .position)
    }
}
