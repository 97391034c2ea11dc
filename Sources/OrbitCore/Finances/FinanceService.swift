import Foundation
import OrbitPostgres

/// Shared money (spec: Transactions, Splits, Balances): expenses split among members,
/// settlements, balances (snapshot + journal, exact at every commit) and settle-up suggestions.
/// Amounts are integer minor units; the splits of a transaction add up to its total, checked by
/// PostgreSQL at commit.
package struct FinanceService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Adds an expense paid by `paidBy` and split among members (any member may add one).
    /// - Parameters:
    ///   - total: what was paid, more than zero.
    ///   - date: the day it was spent; today in the community's time zone when nil.
    package func addExpense(
        in community: CommunityID, description: String, total: Money, paidBy: UserID, split: SplitMethod, date: CivilDate? = nil,
        category: ExpenseCategory = .other, receiptURL: String? = nil, linkedEvent: EventID? = nil, as actor: UserID
    ) async throws -> Expense {
        let description = try Validate.text(description, field: "description", limit: 500)
        try total.requirePositive()
        let splits = try SplitCalculator.splits(of: total.minorUnits, split)
        let receiptURL = try Validate.url(receiptURL, field: "receipt_url")
        return try await runner.asUser(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            try await runner.requireActiveMembers([paidBy] + splits.map(\.user), of: community, on: connection)
            let day: CivilDate
            if let date { day = date } else { day = try await runner.today(in: community, on: connection) }
            let id = TransactionID.random()
            try await connection.query(
                """
                INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, currency, paid_by, category,
                    receipt_url, linked_event_id, transaction_date)
                VALUES (\(id), \(community), \(actor), 'expense', \(description), \(Int32(total.minorUnits)), \(total.currency.code), \(paidBy),
                    \(category)::expense_category, \(receiptURL), \(linkedEvent), \(day))
                """
            )
            try await insertSplits(splits, of: id, on: connection)
            return try await expense(id, on: connection)
        }
    }

    /// Changes an expense (its creator or an admin); new amount or split replace the splits
    /// atomically, checked against the total at commit.
    /// - Parameter total: the new total, in the expense's currency.
    package func updateExpense(
        _ id: TransactionID, description: String? = nil, total newTotal: Money? = nil, split: SplitMethod? = nil,
        category: ExpenseCategory? = nil, as actor: UserID
    ) async throws -> Expense {
        let description = try description.map { try Validate.text($0, field: "description", limit: 500) }
        try newTotal?.requirePositive()
        return try await runner.asUser(actor) { connection in
            // Locked: an edit computes the new row from the current one (the total a split
            // divides, the fields it keeps), so two edits at once must not both start from the
            // same version — the second would write the first's total back over its splits.
            // (Read once unlocked for the permission check: FOR UPDATE applies the UPDATE policy,
            // under which someone else's expense would look missing instead of forbidden.)
            try await requireExpenseEditor(try await expense(id, on: connection), actor, on: connection)
            let current = try await expense(id, on: connection, lock: true)
            let currency = try Currency.parse(current.currency)
            try newTotal?.requireCurrency(currency)
            let total = newTotal ?? Money(minorUnits: current.totalAmount, currency: currency)
            let splits: [(user: UserID, amount: Int64)]
            switch (split, newTotal) {
            case (let split?, _): splits = try SplitCalculator.splits(of: total.minorUnits, split)
            // A new total alone is split equally again among the same people.
            case (nil, _?): splits = try SplitCalculator.splits(of: total.minorUnits, .equal(current.splits.map(\.userID)))
            case (nil, nil): splits = current.splits.map { ($0.userID, $0.amount) }
            }
            return try await replace(
                current, total: total, splits: split == nil && newTotal == nil ? nil : splits, description, category, on: connection)
        }
    }

    /// Updates the transaction; `splits`, when given, replace the old ones.
    private func replace(
        _ current: Expense, total: Money, splits: [(user: UserID, amount: Int64)]?, _ description: String?, _ category: ExpenseCategory?,
        on connection: PostgresConnection
    ) async throws -> Expense {
        try await connection.query(
            """
            UPDATE transactions SET total_amount = \(Int32(total.minorUnits)), description = coalesce(\(description), description),
                category = coalesce(\(category)::expense_category, category)
            WHERE id = \(current.id)
            """
        )
        if let splits {
            try await runner.requireActiveMembers(splits.map(\.user), of: current.communityID, on: connection)
            try await connection.query("DELETE FROM splits WHERE transaction_id = \(current.id)")
            try await insertSplits(splits, of: current.id, on: connection)
        }
        return try await expense(current.id, on: connection)
    }

    /// Deletes (soft) an expense or settlement: it no longer counts in balances.
    package func deleteExpense(_ id: TransactionID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let current = try await expense(id, on: connection)
            try await requireExpenseEditor(current, actor, on: connection)
            try await connection.query("UPDATE transactions SET deleted_at = now() WHERE id = \(id)")
        }
    }

    package func expense(_ id: TransactionID, as actor: UserID) async throws -> Expense {
        try await runner.asUser(actor) { try await expense(id, on: $0) }
    }

    /// A community's expenses and settlements, newest first.
    package func expenses(
        in community: CommunityID, filter: ExpenseFilter = ExpenseFilter(), limit: Int = 50, cursor: String? = nil, as actor: UserID
    ) async throws -> Page<Expense> {
        try Validate.limit(limit, in: 1...500)
        let after = try PageCursor.decode(cursor, list: "expenses", parts: 2)
        // `to` before `from` is an empty range: nothing is dated in it (not an error, so that
        // any two valid dates make a valid request, as openapi.yaml says).
        if let from = filter.from, let to = filter.to, to < from { return Page(items: [], nextCursor: nil) }
        return try await runner.asUserReading(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Expense.columns), \(unescaped: Paging.micros("created_at")) AS cursor_us FROM transactions t
                WHERE community_id = \(community) AND deleted_at IS NULL
                  AND (\(filter.member)::uuid IS NULL OR paid_by = \(filter.member)
                       OR EXISTS (SELECT FROM splits s WHERE s.transaction_id = t.id AND s.user_id = \(filter.member)))
                  AND (\(filter.category)::expense_category IS NULL OR category = \(filter.category)::expense_category)
                  AND (\(filter.from)::date IS NULL OR transaction_date >= \(filter.from))
                  AND (\(filter.to)::date IS NULL OR transaction_date <= \(filter.to))
                  AND (\(try after?.integer(0))::bigint IS NULL
                       OR (created_at, id) < (timestamptz 'epoch' + \(try after?.integer(0)) * interval '1 microsecond', \(try after?.uuid(1))))
                ORDER BY created_at DESC, id DESC LIMIT \(limit + 1)
                """
            )
            let shown = Array(rows.prefix(limit))
            let splits = try await self.splits(of: try shown.map { try $0.decode("id", as: TransactionID.self) }, on: connection)
            return try Paging.page(
                rows, limit: limit, list: "expenses",
                item: { row in try Expense(row: row, splits: splits[try row.decode("id", as: TransactionID.self)] ?? []) },
                key: { row in [String(try row.decode("cursor_us", as: Int64.self)), try row.decode("id", as: UUID.self).uuidString] }
            )
        }
    }

    /// - Parameter lock: `FOR UPDATE`, for a read that the same transaction will write back.
    func expense(_ id: TransactionID, on connection: PostgresConnection, lock: Bool = false) async throws -> Expense {
        guard
            let row = try await connection.query(
                "SELECT \(unescaped: Expense.columns) FROM transactions WHERE id = \(id) AND deleted_at IS NULL \(unescaped: lock ? "FOR UPDATE" : "")"
            ).first
        else { throw ServiceError.notFound("Expense \(id)") }
        return try Expense(row: row, splits: try await splits(of: [id], on: connection)[id] ?? [])
    }

    /// The splits of several transactions in one query, by transaction, in user order.
    private func splits(of ids: [TransactionID], on connection: PostgresConnection) async throws -> [TransactionID: [Split]] {
        guard !ids.isEmpty else { return [:] }
        var result: [TransactionID: [Split]] = [:]
        for row in try await connection.query(
            """
            SELECT transaction_id, id, user_id, amount, is_settled, settled_at, settled_via FROM splits
            WHERE transaction_id = ANY(\(ids.map(\.uuid))) ORDER BY transaction_id, user_id
            """
        ) {
            let (transaction, id, user, amount, settled, settledAt, via) = try row.decode(
                (TransactionID, SplitID, UserID, Int32, Bool, Date?, String?).self)
            result[transaction, default: []].append(
                Split(id: id, userID: user, amount: Int64(amount), isSettled: settled, settledAt: settledAt, settledVia: via)
            )
        }
        return result
    }

    func requireExpenseEditor(_ expense: Expense, _ actor: UserID, on connection: PostgresConnection) async throws {
        let role = try await runner.requireMember(actor, of: expense.communityID, on: connection)
        guard role == .admin || expense.createdBy == actor else {
            throw ServiceError.forbidden(rule: "members can change only the expenses they logged")
        }
    }

    func insertSplits(_ splits: [(user: UserID, amount: Int64)], of id: TransactionID, on connection: PostgresConnection) async throws {
        for split in splits {
            try await connection.query("INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(id), \(split.user), \(Int32(split.amount)))")
        }
    }
}
