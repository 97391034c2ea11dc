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
        let entry = NewTransaction(
            community: community, type: .expense, description: description, total: total, paidBy: paidBy, category: category,
            receiptURL: receiptURL, linkedEvent: linkedEvent, date: date, splits: splits)
        return try await runner.asUser(actor) { connection in
            if let expense = try await insert(entry, as: actor, adminOnly: false, on: connection) { return expense }
            // Nothing was written: the checks the statement holds say why.
            try await runner.requireMember(actor, of: community, on: connection)
            try await runner.requireActiveMembers(entry.people, of: community, on: connection)
            throw ServiceError.changedMeanwhile
        }
    }

    /// A transaction about to be written with its splits.
    struct NewTransaction {
        var community: CommunityID
        var type: TransactionType
        var description: String
        var total: Money
        var paidBy: UserID
        var category: ExpenseCategory
        var receiptURL: String?
        var linkedEvent: EventID?
        /// Nil: today in the community's time zone, by the services' clock.
        var date: CivilDate?
        var splits: [(user: UserID, amount: Int64)]

        /// Everyone the transaction names, once each.
        var people: [UserID] { Array(Set([paidBy] + splits.map(\.user))).sorted() }
    }

    /// Writes `entry` and its splits in one statement, and returns it, if the acting user is an
    /// active member of the community (an admin, with `adminOnly`) and everyone it names is an
    /// active member too; nil, with nothing written, otherwise. Its date, when not given, is
    /// today in the community's time zone (`orbit.civil_date` with the services' clock). The
    /// database still checks the rest: row-level security, payer and split users members, and
    /// at COMMIT that the splits add up to the total.
    func insert(_ entry: NewTransaction, as actor: UserID, adminOnly: Bool, on connection: PostgresConnection) async throws -> Expense? {
        let id = TransactionID.random()
        let people = entry.people
        let rows = try await connection.query(
            """
            WITH allowed AS (
                SELECT c.settings ->> 'timezone' AS timezone FROM communities c
                JOIN members actor ON actor.community_id = c.id AND actor.user_id = \(actor) AND actor.left_at IS NULL
                WHERE c.id = \(entry.community) AND (NOT \(adminOnly) OR actor.role = 'admin')
                  AND (SELECT count(*) FROM members m WHERE m.community_id = c.id AND m.left_at IS NULL AND m.user_id = ANY(\(people.map(\.uuid))))
                      = \(people.count)
            ),
            t AS (
                INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, currency, paid_by, category,
                    receipt_url, linked_event_id, transaction_date)
                SELECT \(id), \(entry.community), \(actor), \(entry.type)::transaction_type, \(entry.description), \(Int32(entry.total.minorUnits)),
                    \(entry.total.currency.code), \(entry.paidBy), \(entry.category)::expense_category, \(entry.receiptURL), \(entry.linkedEvent),
                    coalesce(\(entry.date), orbit.civil_date(\(runner.now()), allowed.timezone))
                FROM allowed
                RETURNING \(unescaped: Expense.columns)
            ),
            s AS (
                INSERT INTO splits (transaction_id, community_id, user_id, amount)
                SELECT t.id, t.community_id, x.user_id, x.amount
                FROM t, unnest(\(entry.splits.map(\.user.uuid)), \(entry.splits.map { Int32($0.amount) })) AS x (user_id, amount)
                RETURNING \(unescaped: Self.splitColumns)
            )
            SELECT t.*, \(unescaped: Self.splitResultColumns) FROM t LEFT JOIN s ON true ORDER BY s.user_id
            """
        )
        guard let first = rows.first else { return nil }
        return try Expense(row: first, splits: try rows.compactMap(Split.init(resultRow:)))
    }

    /// A split's columns, and as they come back beside their transaction's (`Split(resultRow:)`).
    static let splitColumns = "transaction_id, id, user_id, amount, is_settled, settled_at, settled_via"
    static let splitResultColumns = """
        s.id AS split_id, s.user_id AS split_user_id, s.amount AS split_amount, s.is_settled AS split_is_settled,
        s.settled_at AS split_settled_at, s.settled_via AS split_settled_via
        """

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
            // FOR UPDATE applies the UPDATE policy, under which an expense the actor may not
            // edit looks missing: only then is it read again unlocked, for the right error.
            guard let current = try await lockedForEdit(id, actor, on: connection) else {
                try await requireExpenseEditor(try await expense(id, on: connection), actor, on: connection)
                throw ServiceError.changedMeanwhile
            }
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

    /// The expense, locked, if the acting user may edit it (its creator, or an admin of its
    /// community, an active member either way); nil otherwise.
    private func lockedForEdit(_ id: TransactionID, _ actor: UserID, on connection: PostgresConnection) async throws -> Expense? {
        let results = try await connection.pipeline([
            """
            SELECT \(unescaped: Expense.columns) FROM transactions t
            WHERE t.id = \(id) AND t.deleted_at IS NULL
              AND EXISTS (
                  SELECT FROM members m WHERE m.community_id = t.community_id AND m.user_id = \(actor) AND m.left_at IS NULL
                    AND (m.role = 'admin' OR t.created_by = \(actor)))
            FOR UPDATE
            """,
            "SELECT \(unescaped: Self.splitColumns) FROM splits WHERE transaction_id = \(id) ORDER BY user_id",
        ])
        guard let row = results[0].first else { return nil }
        return try Expense(row: row, splits: try results[1].map(Split.init(row:)))
    }

    /// Updates the transaction; `splits`, when given, replace the old ones, if every one of
    /// their people is an active member. One round trip.
    private func replace(
        _ current: Expense, total: Money, splits: [(user: UserID, amount: Int64)]?, _ description: String?, _ category: ExpenseCategory?,
        on connection: PostgresConnection
    ) async throws -> Expense {
        var statements: [PostgresQuery] = [
            """
            UPDATE transactions SET total_amount = \(Int32(total.minorUnits)), description = coalesce(\(description), description),
                category = coalesce(\(category)::expense_category, category)
            WHERE id = \(current.id)
            RETURNING \(unescaped: Expense.columns)
            """
        ]
        let people = Array(Set((splits ?? []).map(\.user))).sorted()
        if let splits {
            statements.append("DELETE FROM splits WHERE transaction_id = \(current.id)")
            statements.append(
                """
                INSERT INTO splits (transaction_id, community_id, user_id, amount)
                SELECT \(current.id), \(current.communityID), x.user_id, x.amount
                FROM unnest(\(splits.map(\.user.uuid)), \(splits.map { Int32($0.amount) })) AS x (user_id, amount)
                WHERE (SELECT count(*) FROM members m
                       WHERE m.community_id = \(current.communityID) AND m.left_at IS NULL AND m.user_id = ANY(\(people.map(\.uuid))))
                      = \(people.count)
                """
            )
        }
        statements.append("SELECT \(unescaped: Self.splitColumns) FROM splits WHERE transaction_id = \(current.id) ORDER BY user_id")
        let results = try await connection.pipeline(statements)
        if let splits, results[2].affectedRows != splits.count {
            // Someone named is not an active member: say who (the transaction rolls back).
            try await runner.requireActiveMembers(people, of: current.communityID, on: connection)
            throw ServiceError.changedMeanwhile
        }
        guard let row = results[0].first else { throw ServiceError.notFound("Expense \(current.id)") }
        return try Expense(row: row, splits: try results[results.count - 1].map(Split.init(row:)))
    }

    /// Deletes (soft) an expense or settlement: it no longer counts in balances.
    package func deleteExpense(_ id: TransactionID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let deleted = try await connection.query(
                """
                UPDATE transactions t SET deleted_at = now()
                WHERE t.id = \(id) AND t.deleted_at IS NULL
                  AND EXISTS (
                      SELECT FROM members m WHERE m.community_id = t.community_id AND m.user_id = \(actor) AND m.left_at IS NULL
                        AND (m.role = 'admin' OR t.created_by = \(actor)))
                """
            )
            guard deleted.affectedRows == 1 else {
                // Nothing was deleted: the checks the statement holds say why.
                try await requireExpenseEditor(try await expense(id, on: connection), actor, on: connection)
                throw ServiceError.changedMeanwhile
            }
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
                key: Paging.timeAndID
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
            SELECT \(unescaped: Self.splitColumns) FROM splits
            WHERE transaction_id = ANY(\(ids.map(\.uuid))) ORDER BY transaction_id, user_id
            """
        ) {
            result[try row.decode("transaction_id", as: TransactionID.self), default: []].append(try Split(row: row))
        }
        return result
    }

    func requireExpenseEditor(_ expense: Expense, _ actor: UserID, on connection: PostgresConnection) async throws {
        let role = try await runner.requireMember(actor, of: expense.communityID, on: connection)
        guard role == .admin || expense.createdBy == actor else {
            throw ServiceError.forbidden(rule: "members can change only the expenses they logged")
        }
    }
}
