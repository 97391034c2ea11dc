package import Foundation
import OrbitPostgres

package enum CustomCategoryTag {}
package typealias CustomCategoryID = Identifier<CustomCategoryTag>

/// A community's own category (Settle Up's `groupCategories`; docs/money.md, "Categories"): a
/// name and an emoji, beside the built-in `ExpenseCategory`s. An expense with one has `category`
/// `other` and its id in `category_id`. Archived: kept by the expenses that have it, offered for
/// no new one, and unarchived at will.
package struct CustomCategory: Sendable, Codable, Equatable {
    package var id: CustomCategoryID
    package var communityID: CommunityID
    package var name: String
    package var emoji: String
    /// Nil once its creator's account is gone.
    package var createdBy: UserID?
    package var archivedAt: Date?
    package var createdAt: Date
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", name, emoji, createdBy = "created_by", archivedAt = "archived_at"
        case createdAt = "created_at", updatedAt = "updated_at"
    }

    static let columns = "id, community_id, name, emoji, created_by, archived_at, created_at, updated_at"

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        name = try row.decode("name")
        emoji = try row.decode("emoji")
        createdBy = try row.decode("created_by")
        archivedAt = try row.decode("archived_at")
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
    }
}
