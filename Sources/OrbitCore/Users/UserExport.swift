package import Foundation
import OrbitPostgres

/// What OrbitCove keeps about a user themselves (GDPR article 20's portable copy; docs/api.md,
/// "Users and family"): the account, its preferences, its payment handles, its family and its
/// memberships. A community's content and money are each community's export
/// (`GET /communities/{id}/export`).
package struct UserExport: Sendable, Codable, Equatable {
    package struct Membership: Sendable, Codable, Equatable {
        package var communityID: CommunityID
        package var communityName: String
        package var role: String
        package var nickname: String?
        package var joinedAt: Date
        package var leftAt: Date?

        enum CodingKeys: String, CodingKey {
            case communityID = "community_id", communityName = "community_name", role, nickname, joinedAt = "joined_at", leftAt = "left_at"
        }
    }

    package var exportedAt: Date
    package var user: User
    package var notificationPreferences: NotificationPreferences
    package var paymentHandles: PaymentHandles
    package var family: [FamilyMember]
    package var memberships: [Membership]

    enum CodingKeys: String, CodingKey {
        case exportedAt = "exported_at", user, notificationPreferences = "notification_preferences", paymentHandles = "payment_handles"
        case family, memberships
    }
}

extension UserService {
    /// The acting user's own data, in one read.
    package func exportData(as actor: UserID) async throws -> UserExport {
        let now = runner.now()
        let (user, family, memberships) = try await runner.asUser(actor) { connection in
            guard
                let user = try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE id = \(actor) AND deleted_at IS NULL")
                    .first.map(User.init(row:))
            else { throw ServiceError.notFound("User \(actor)") }
            let family = try await connection.query(
                "SELECT \(unescaped: FamilyMember.columns) FROM family_members WHERE user_id = \(actor) ORDER BY created_at, id"
            ).map(FamilyMember.init(row:))
            let memberships = try await connection.query(
                """
                SELECT m.community_id, c.name, m.role::text, m.nickname, m.joined_at, m.left_at
                FROM members m JOIN communities c ON c.id = m.community_id
                WHERE m.user_id = \(actor) ORDER BY m.joined_at, m.community_id
                """
            ).map { row in
                let (community, name, role, nickname, joined, left) = try row.decode((CommunityID, String, String, String?, Date, Date?).self)
                return UserExport.Membership(
                    communityID: community, communityName: name, role: role, nickname: nickname, joinedAt: joined, leftAt: left)
            }
            return (user, family, memberships)
        }
        return UserExport(
            exportedAt: now, user: user, notificationPreferences: try await notificationPreferences(as: actor),
            paymentHandles: try await PaymentService(runner).handles(as: actor), family: family, memberships: memberships)
    }
}
