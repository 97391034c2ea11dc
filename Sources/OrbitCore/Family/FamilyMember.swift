package import Foundation
import OrbitPostgres

/// A dependent a parent manages (spec: Family Members).
package struct FamilyMember: Sendable, Codable, Equatable {
    package var id: FamilyMemberID
    package var userID: UserID
    package var name: String
    package var avatarURL: String?
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", name, avatarURL = "avatar_url", createdAt = "created_at"
    }

    static let columns = "id, user_id, name, avatar_url, created_at"

    init(row: PostgresRow) throws {
        (id, userID, name, avatarURL, createdAt) = try row.decode((FamilyMemberID, UserID, String, String?, Date).self)
    }
}
