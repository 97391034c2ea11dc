package import Foundation
import OrbitPostgres

/// A community's own categories (docs/money.md, "Categories"): any member adds one; its creator
/// or an admin renames it, changes its emoji, archives and unarchives it. Never deleted: the
/// expenses that have one keep it. Row-level security holds who may (sql/152_categories.sql);
/// the database refuses an archived category on a new or changed expense.
extension ExpenseService {
    /// The longest category name, in characters.
    package static let categoryNameLimit = 50
    /// The longest emoji, in code points: a flag is 2, a family of four 7, with its joiners.
    package static let emojiLimit = 16

    /// The order of a community's categories: oldest first, as they were added.
    static let categoryOrder = Paging.Keyset.timeAndID("categories", newestFirst: false)

    /// A community's own categories (members), oldest first; archived ones only with `archived`.
    package func categories(
        of community: CommunityID, archived: Bool = false, limit: Int = 100, cursor: String? = nil, as actor: UserID
    ) async throws -> Page<CustomCategory> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.categoryOrder.decode(cursor)
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: CustomCategory.columns), \(unescaped: Self.categoryOrder.columns) FROM expense_categories
                WHERE community_id = \(community) AND (\(archived) OR archived_at IS NULL)
                  AND \(try Self.categoryOrder.after(after))
                ORDER BY \(unescaped: Self.categoryOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.categoryOrder.page(rows, limit: limit, item: CustomCategory.init(row:))
        }
    }

    /// Adds a category named `name` with `emoji` to `community` (any member). A name in use
    /// there (case aside) is a conflict; an archived category's name may be taken again.
    package func addCategory(
        named name: String, emoji: String, to community: CommunityID, as actor: UserID
    ) async throws -> CustomCategory {
        let name = try Validate.text(name, field: "name", limit: Self.categoryNameLimit)
        let emoji = try Self.validEmoji(emoji)
        return try await runner.asUser(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            let row = try await connection.query(
                """
                INSERT INTO expense_categories (id, community_id, name, emoji, created_by)
                VALUES (\(CustomCategoryID.random()), \(community), \(name), \(emoji), \(actor))
                RETURNING \(unescaped: CustomCategory.columns)
                """
            ).single()
            let category = try CustomCategory(row: row)
            try await runner.audit(
                "expense_category.created", by: actor, community: community, target: ("expense_category", category.id.uuid),
                metadata: ["name": name, "emoji": emoji], on: connection)
            return category
        }
    }

    /// Renames a category, changes its emoji, archives or unarchives it (its creator, while a
    /// member, or an admin); nil leaves a field as it is. Unarchiving takes its name back only
    /// if no category in use has it meanwhile (409).
    package func updateCategory(
        _ id: CustomCategoryID, in community: CommunityID? = nil, name: String? = nil, emoji: String? = nil, archived: Bool? = nil,
        as actor: UserID
    ) async throws -> CustomCategory {
        let name = try name.map { try Validate.text($0, field: "name", limit: Self.categoryNameLimit) }
        let emoji = try emoji.map(Self.validEmoji)
        return try await runner.asUser(actor) { connection in
            let current = try await category(id, in: community, on: connection)
            guard
                let row = try await connection.query(
                    """
                    UPDATE expense_categories SET name = coalesce(\(name), name), emoji = coalesce(\(emoji), emoji),
                        archived_at = CASE WHEN \(archived)::boolean IS NULL THEN archived_at WHEN \(archived)::boolean THEN coalesce(archived_at, now()) END
                    WHERE id = \(id)
                    RETURNING \(unescaped: CustomCategory.columns)
                    """
                ).first
            else { throw ServiceError.forbidden(rule: "only its creator or an admin changes a category") }
            let changed = try CustomCategory(row: row)
            var metadata: [String: String] = [:]
            if changed.name != current.name { metadata["name"] = changed.name }
            if changed.emoji != current.emoji { metadata["emoji"] = changed.emoji }
            if (changed.archivedAt == nil) != (current.archivedAt == nil) { metadata["archived"] = String(changed.archivedAt != nil) }
            try await runner.audit(
                "expense_category.updated", by: actor, community: changed.communityID, target: ("expense_category", id.uuid),
                metadata: metadata, on: connection)
            return changed
        }
    }

    /// A category of a community the actor is a member of (row-level security hides the
    /// others); of `community`, when given (the API's path names it).
    func category(_ id: CustomCategoryID, in community: CommunityID? = nil, on connection: PostgresConnection) async throws -> CustomCategory {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: CustomCategory.columns) FROM expense_categories
                WHERE id = \(id) AND (\(community)::uuid IS NULL OR community_id = \(community))
                """
            ).first
        else { throw ServiceError.notFound("Category \(id)") }
        return try CustomCategory(row: row)
    }

    /// An emoji as the apps' pickers give it: one line, no spaces or control characters, at
    /// most `emojiLimit` code points (what the table holds). Which glyph it is stays the app's.
    static func validEmoji(_ emoji: String) throws -> String {
        let emoji = try Validate.text(emoji, field: "emoji", limit: Self.emojiLimit)
        guard emoji.unicodeScalars.count <= Self.emojiLimit else {
            throw ServiceError.invalidInput(field: "emoji", reason: "must be at most \(Self.emojiLimit) code points")
        }
        return emoji
    }
}
