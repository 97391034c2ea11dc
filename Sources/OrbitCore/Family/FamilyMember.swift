package import Foundation
import OrbitPostgres

/// A dependent a parent manages (spec: Family Members).
package struct FamilyMember: Sendable, Codable, Equatable {
    package var id: FamilyMemberID
    package var userID: UserID
    package var name: String
    package var avatarURL: String?
    /// The avatar by upload: an image their parent uploaded (`GET /media/{id}`); `avatarURL` is
    /// then its address.
    package var avatarMediaID: MediaID?
    package var createdAt: Date
    /// When their name or avatar last changed, kept by the database.
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", name, avatarURL = "avatar_url", avatarMediaID = "avatar_media_id", createdAt = "created_at", updatedAt =
            "updated_at"
    }

    static let columns = "id, user_id, name, avatar_url, avatar_media_id, created_at, updated_at"

    init(row: PostgresRow) throws {
        (id, userID, name, avatarURL, avatarMediaID, createdAt, updatedAt) = try row.decode(
            (FamilyMemberID, UserID, String, String?, MediaID?, Date, Date).self)
    }
}
