package import Foundation
import OrbitPostgres

/// A person of a community: a user (an active member) or a family member (a child, whose
/// parent is one). Chores are done and points held by holders; an expense's shares belong to
/// them, a family member's owed by their parent. In JSON, `user_id` and `family_member_id`, one
/// of them null. Ordered by id (byte order), user and family member ids alike.
package enum Holder: Sendable, Equatable, Hashable, Codable, Comparable, CustomStringConvertible {
    case user(UserID)
    case familyMember(FamilyMemberID)

    package var userID: UserID? {
        if case .user(let id) = self { id } else { nil }
    }

    package var familyMemberID: FamilyMemberID? {
        if case .familyMember(let id) = self { id } else { nil }
    }

    package var id: UUID {
        switch self {
        case .user(let id): id.uuid
        case .familyMember(let id): id.uuid
        }
    }

    package var description: String { id.uuidString.lowercased() }

    package static func < (lhs: Holder, rhs: Holder) -> Bool {
        UserID(lhs.id) < UserID(rhs.id)
    }

    enum CodingKeys: String, CodingKey { case userID = "user_id", familyMemberID = "family_member_id" }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let user = try container.decodeIfPresent(UserID.self, forKey: .userID) {
            self = .user(user)
        } else {
            self = .familyMember(try container.decode(FamilyMemberID.self, forKey: .familyMemberID))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userID, forKey: .userID)
        try container.encode(familyMemberID, forKey: .familyMemberID)
    }

    /// From a row's `user_id` and `family_member_id`.
    init(row: PostgresRow) throws {
        if let user = try row.decode("user_id", as: UserID?.self) {
            self = .user(user)
        } else {
            self = .familyMember(try row.decode("family_member_id", as: FamilyMemberID.self))
        }
    }
}
