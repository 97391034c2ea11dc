import Foundation
import OrbitPostgres

/// The writes of money's history (`money_activity`), for every domain that changes money
/// (expenses, settlements): each statement goes in the same pipeline, in the same database
/// transaction, as the change it records. Read back by `ExpenseService.history`.
enum MoneyHistory {
    /// Records the creation of transaction `id`, as the statement before it in the same
    /// pipeline wrote it (nothing, if it wrote nothing).
    static func recordCreation(of id: TransactionID, by actor: UserID) -> PostgresQuery {
        """
        INSERT INTO money_activity (community_id, actor_id, action, entity, entity_id, after)
        SELECT t.community_id, \(actor), 'created', t.type::text, t.id, orbit.expense_state(t.id) FROM transactions t WHERE t.id = \(id)
        """
    }

    /// Starts record `activity` of a change to a transaction (given, or the one of `split`):
    /// what it is now. `recordAfter(activity)` completes it after the change.
    static func recordBefore(
        _ activity: UUID, _ action: MoneyActivity.Action, transaction: TransactionID?, split: SplitID? = nil, by actor: UserID
    ) -> PostgresQuery {
        """
        INSERT INTO money_activity (id, community_id, actor_id, action, entity, entity_id, before)
        SELECT \(activity), t.community_id, \(actor), \(action.rawValue), t.type::text, t.id, orbit.expense_state(t.id) FROM transactions t
        WHERE t.id = coalesce(\(transaction), (SELECT s.transaction_id FROM splits s WHERE s.id = \(split)))
        """
    }

    static func recordAfter(_ activity: UUID) -> PostgresQuery {
        "UPDATE money_activity SET after = orbit.expense_state(entity_id) WHERE id = \(activity)"
    }
}
