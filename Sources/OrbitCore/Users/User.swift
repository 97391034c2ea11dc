package import Foundation
import OrbitPostgres

/// An account (spec: Users).
package struct User: Sendable, Codable, Equatable {
    package var id: UserID
    package var appleID: String
    package var email: String
    package var displayName: String
    package var avatarURL: String?
    /// A BCP 47 tag (`hi-IN`): the language of the user's notifications and pushes, their
    /// amounts and dates formatted by its locale (`NotificationText`); nil: English.
    package var language: String?
    /// An IANA time zone name: when the weekly digest comes (Monday morning there); nil: UTC.
    package var timezone: String?
    package var createdAt: Date
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, appleID = "apple_id", email, displayName = "display_name", avatarURL = "avatar_url", language, timezone
        case createdAt = "created_at", updatedAt = "updated_at"
    }

    static let columns = "id, apple_id, email, display_name, avatar_url, language, timezone, created_at, updated_at"

    init(row: PostgresRow) throws {
        (id, appleID, email, displayName, avatarURL, language, timezone, createdAt, updatedAt) = try row.decode(
            (UserID, String, String, String, String?, String?, String?, Date, Date).self
        )
    }
}

/// What any co-member may see of a user.
package struct PublicProfile: Sendable, Codable, Equatable {
    package var id: UserID
    package var displayName: String
    package var avatarURL: String?

    enum CodingKeys: String, CodingKey { case id, displayName = "display_name", avatarURL = "avatar_url" }

    init(row: PostgresRow) throws {
        (id, displayName, avatarURL) = try row.decode((UserID, String, String?).self)
    }
}
