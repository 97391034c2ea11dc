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

    /// Encodes every column, `null` included (synthesized Codable would leave nil keys out).
    package func encode(to encoder: any Encoder) throws {
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
