package import Foundation
import OrbitPostgres

/// Money's history (issue 24, item 6): each creation, edit, deletion and settled split of an
/// expense or a settlement, with who did it and the transaction before and after
/// (`orbit.expense_state`), written in the same database transaction as the change and read by
/// every member of the community; and dues created, changed or paid, recorded by trigger
/// (`orbit.record_dues_activity`, sql/160_dues.sql).
extension ExpenseService {
    /// The order of money-activity: newest first.
    static let historyOrder = Paging.Keyset.timeAndID("money-activity")

    /// A community's money history, newest first: all of it, or one transaction's or dues'.
    package func history(
        in community: CommunityID, transaction: TransactionID? = nil, dues: DuesID? = nil, limit: Int = 50, cursor: String? = nil,
        as actor: UserID
    ) async throws -> Page<MoneyActivity> {
        try Validate.limit(limit, in: 1...500)
        let after = try Self.historyOrder.decode(cursor)
        let entity = transaction?.uuid ?? dues?.uuid
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: MoneyActivity.columns), \(unescaped: Self.historyOrder.columns) FROM money_activity
                WHERE community_id = \(community) AND (\(entity)::uuid IS NULL OR entity_id = \(entity))
                  AND \(try Self.historyOrder.after(after))
                ORDER BY \(unescaped: Self.historyOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.historyOrder.page(rows, limit: limit, item: MoneyActivity.init(row:))
        }
    }
}

/// One change of money's history: who did what to which transaction, and what it was before
/// and after.
package struct MoneyActivity: Sendable, Codable, Equatable {
    package enum Action: String, Sendable, Codable {
        /// `paid`: a dues payment recorded; `refunded`: one the payment provider refunded (no
        /// actor: the provider); `disputed`, `disputeLost`, `disputeWon`: the payer's bank
        /// disputes one made online, took it back, or let it stand (no actor); `restored`: a
        /// deleted expense or settlement brought back (undo).
        case created, edited, deleted, restored, settled, paid, refunded, disputed
        case disputeLost = "dispute_lost", disputeWon = "dispute_won"
    }

    package var id: UUID
    package var communityID: CommunityID
    /// Nil once the user's account is deleted.
    package var actorID: UserID?
    package var action: Action
    /// expense, settlement or dues.
    package var entity: String
    /// The transaction's id, or the dues'.
    package var entityID: UUID
    package var before: ExpenseState?
    package var after: ExpenseState?
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", actorID = "actor_id", action, entity, entityID = "entity_id", before, after
        case createdAt = "created_at"
    }

    static let columns = "id, community_id, actor_id, action, entity, entity_id, before, after, created_at"

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        actorID = try row.decode("actor_id")
        let action: String = try row.decode("action")
        guard let known = Action(rawValue: action) else { throw ServiceError.conflict("Unknown money activity \(action)") }
        self.action = known
        entity = try row.decode("entity")
        entityID = try row.decode("entity_id")
        before = try row.decode("before", as: PostgresJSON?.self)?.decode(ExpenseState.self)
        after = try row.decode("after", as: PostgresJSON?.self)?.decode(ExpenseState.self)
        createdAt = try row.decode("created_at")
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(actorID, forKey: .actorID)
        try container.encode(action, forKey: .action)
        try container.encode(entity, forKey: .entity)
        // Lower case, as every other id the API writes.
        try container.encode(entityID.uuidString.lowercased(), forKey: .entityID)
        try container.encode(before, forKey: .before)
        try container.encode(after, forKey: .after)
        try container.encode(createdAt, forKey: .createdAt)
    }
}

/// A transaction as money's history shows it (`orbit.expense_state`), or dues in the same
/// shape (`orbit.dues_state`: the name as description, the due date as transaction date, what
/// each member has paid as payers, no paid_by and no splits, deleted when deactivated).
package struct ExpenseState: Sendable, Codable, Equatable {
    package struct Share: Sendable, Codable, Equatable {
        package var userID: UserID
        package var familyMemberID: FamilyMemberID?
        package var amount: Int64
        package var isSettled: Bool

        enum CodingKeys: String, CodingKey {
            case userID = "user_id", familyMemberID = "family_member_id", amount, isSettled = "is_settled"
        }
    }

    /// expense, settlement or dues.
    package var type: String
    package var description: String
    package var totalAmount: Int64
    package var currency: String
    /// Nil for dues.
    package var paidBy: UserID?
    package var category: ExpenseCategory
    /// The community's own category, if it has one (absent from states recorded before them).
    package var categoryID: CustomCategoryID?
    package var transactionDate: CivilDate
    /// `HH:MM`, if given (absent from states recorded before times of day).
    package var transactionTime: String?
    /// The receipt's upload, if any.
    package var receiptMediaID: MediaID?
    package var linkedEventID: EventID?
    package var deleted: Bool
    /// An expense's split as entered (absent from states recorded before it was kept).
    package var splitInput: SplitMethod?
    /// Absent from states recorded before expenses had notes.
    package var notes: String?
    package var payers: [Payer]
    package var splits: [Share]

    enum CodingKeys: String, CodingKey {
        case type, description, totalAmount = "total_amount", currency, paidBy = "paid_by", category, categoryID = "category_id", transactionDate =
            "transaction_date"
        case transactionTime = "transaction_time", receiptMediaID = "receipt_media_id"
        case linkedEventID = "linked_event_id", deleted, splitInput = "split_input", notes, payers, splits
    }
}
