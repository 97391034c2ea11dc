import Foundation
import OrbitPostgres

extension OrbitServices {
    static let expenseCategories = ["equipment", "food", "travel", "dues", "other"]

    // MARK: - Expenses

    /// Adds an expense paid by `paidBy` and split among members (any member may add one).
    /// - Parameters:
    ///   - amount: a decimal string in the currency's units, e.g. "30.00".
    ///   - date: `YYYY-MM-DD`; today (UTC) when nil.
    public func addExpense(
        in community: CommunityID, description: String, amount: String, currency code: String = "USD", paidBy: UserID, split: SplitRequest,
        date: String? = nil, category: String = "other", receiptURL: String? = nil, linkedEvent: EventID? = nil, as actor: UserID
    ) async throws -> Expense {
        let description = try Validate.text(description, field: "description", limit: 500)
        let currency = try Self.currency(code)
        let total = try Money(parsing: amount, currency: currency)
        let splits = try Self.splits(of: total, split)
        let date = try Self.date(date ?? Self.today(now()), field: "transaction_date")
        guard Self.expenseCategories.contains(category) else {
            throw ServiceError.invalidInput(field: "category", reason: "must be one of \(Self.expenseCategories.joined(separator: ", "))")
        }
        let receiptURL = try Validate.url(receiptURL, field: "receipt_url")
        return try await asUser(actor) { connection in
            try await requireMember(actor, of: community, on: connection)
            try await requireActiveMembers([paidBy] + splits.map(\.user), of: community, on: connection)
            let id = TransactionID.random()
            try await connection.query(
                """
                INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, currency, paid_by, category,
                    receipt_url, linked_event_id, transaction_date)
                VALUES (\(id), \(community), \(actor), 'expense', \(description), \(Int32(total.minorUnits)), \(currency.code), \(paidBy),
                    \(category)::expense_category, \(receiptURL), \(linkedEvent), \(date)::date)
                """
            )
            try await insertSplits(splits, of: id, on: connection)
            return try await expense(id, on: connection)
        }
    }

    /// Changes an expense (its creator or an admin); new amount or split replace the splits
    /// atomically, checked against the total at commit.
    public func updateExpense(
        _ id: TransactionID, description: String? = nil, amount: String? = nil, split: SplitRequest? = nil, category: String? = nil,
        as actor: UserID
    ) async throws -> Expense {
        let description = try description.map { try Validate.text($0, field: "description", limit: 500) }
        if let category, !Self.expenseCategories.contains(category) {
            throw ServiceError.invalidInput(field: "category", reason: "must be one of \(Self.expenseCategories.joined(separator: ", "))")
        }
        return try await asUser(actor) { connection in
            // Locked: an edit computes the new row from the current one (the total a split
            // divides, the fields it keeps), so two edits at once must not both start from the
            // same version — the second would write the first's total back over its splits.
            // (Read once unlocked for the permission check: FOR UPDATE applies the UPDATE policy,
            // under which someone else's expense would look missing instead of forbidden.)
            try await requireExpenseEditor(try await expense(id, on: connection), actor, on: connection)
            let current = try await expense(id, on: connection, lock: true)
            let currency = try Self.currency(current.currency)
            let total = try amount.map { try Money(parsing: $0, currency: currency) } ?? Money(minorUnits: current.totalAmount, currency: currency)
            let splits: [(user: UserID, amount: Int64)]
            switch (split, amount) {
            case (let split?, _): splits = try Self.splits(of: total, split)
            // A new total alone is split equally again among the same people.
            case (nil, _?): splits = try Self.splits(of: total, .equal(current.splits.map(\.userID)))
            case (nil, nil): splits = current.splits.map { ($0.userID, $0.amount) }
            }
            return try await replace(
                current, total: total, splits: split == nil && amount == nil ? nil : splits, description, category, on: connection)
        }
    }

    /// Updates the transaction; `splits`, when given, replace the old ones.
    private func replace(
        _ current: Expense, total: Money, splits: [(user: UserID, amount: Int64)]?, _ description: String?, _ category: String?,
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
            try await requireActiveMembers(splits.map(\.user), of: current.communityID, on: connection)
            try await connection.query("DELETE FROM splits WHERE transaction_id = \(current.id)")
            try await insertSplits(splits, of: current.id, on: connection)
        }
        return try await expense(current.id, on: connection)
    }

    /// Deletes (soft) an expense or settlement: it no longer counts in balances.
    public func deleteExpense(_ id: TransactionID, as actor: UserID) async throws {
        try await asUser(actor) { connection in
            let current = try await expense(id, on: connection)
            try await requireExpenseEditor(current, actor, on: connection)
            try await connection.query("UPDATE transactions SET deleted_at = now() WHERE id = \(id)")
        }
    }

    public func expense(_ id: TransactionID, as actor: UserID) async throws -> Expense {
        try await asUser(actor) { try await expense(id, on: $0) }
    }

    /// A community's expenses and settlements, newest first.
    public func expenses(in community: CommunityID, limit: Int = 50, as actor: UserID) async throws -> [Expense] {
        guard (1...500).contains(limit) else { throw ServiceError.invalidInput(field: "limit", reason: "must be between 1 and 500") }
        return try await asUser(actor) { connection in
            try await requireMember(actor, of: community, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Expense.columns) FROM transactions
                WHERE community_id = \(community) AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT \(limit)
                """
            )
            let splits = try await self.splits(of: try rows.map { try $0.decode("id", as: TransactionID.self) }, on: connection)
            return try rows.map { row in try Expense(row: row, splits: splits[try row.decode("id", as: TransactionID.self)] ?? []) }
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
        let role = try await requireMember(actor, of: expense.communityID, on: connection)
        guard role == .admin || expense.createdBy == actor else {
            throw ServiceError.forbidden(rule: "members can change only the expenses they logged")
        }
    }

    private func insertSplits(_ splits: [(user: UserID, amount: Int64)], of id: TransactionID, on connection: PostgresConnection) async throws {
        for split in splits {
            try await connection.query("INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(id), \(split.user), \(Int32(split.amount)))")
        }
    }

    func requireActiveMembers(_ users: [UserID], of community: CommunityID, on connection: PostgresConnection) async throws {
        let wanted = Set(users)
        let found = Set(
            try await connection.query(
                "SELECT user_id FROM members WHERE community_id = \(community) AND left_at IS NULL AND user_id = ANY(\(wanted.map(\.uuid)))"
            ).map { try $0.decode("user_id", as: UserID.self) }
        )
        if let missing = wanted.subtracting(found).sorted().first {
            throw ServiceError.invalidInput(field: "user", reason: "\(missing) is not a member of this community")
        }
    }

    static func splits(of total: Money, _ request: SplitRequest) throws -> [(user: UserID, amount: Int64)] {
        switch request {
        case .equal(let users): return try SplitCalculator.splits(of: total.minorUnits, .equal(users))
        case .shares(let weights): return try SplitCalculator.splits(of: total.minorUnits, .shares(weights))
        case .exact(let amounts):
            let parsed = try amounts.mapValues { try Money(parsing: $0, currency: total.currency, field: "parts", allowZero: true).minorUnits }
            return try SplitCalculator.splits(of: total.minorUnits, .exact(parsed))
        case .percent(let percentages):
            // Percentages with up to two decimals, in hundredths of a percent.
            let parsed = try percentages.mapValues { text in
                try Money(parsing: text, currency: Currency("USD")!, field: "parts", allowZero: true).minorUnits
            }
            return try SplitCalculator.splits(of: total.minorUnits, .percent(parsed))
        }
    }

    static func currency(_ code: String) throws -> Currency {
        guard let currency = Currency(code) else {
            throw ServiceError.invalidInput(field: "currency", reason: "\(code) is not an ISO 4217 currency code")
        }
        return currency
    }

    static func date(_ text: String, field: String) throws -> String {
        guard let local = LocalDateTime(parsing: text + "T00:00"), local.date.description == text else {
            throw ServiceError.invalidInput(field: field, reason: "must be a date such as 2026-12-31")
        }
        return text
    }

    static func today(_ now: Date) -> String {
        CivilDate(dayNumber: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).description
    }

    // MARK: - Settlements, balances, suggestions

    /// Records "`from` paid `to` `amount`" (a settlement): it moves both balances toward zero.
    /// Either party or an admin may record it.
    public func recordSettlement(
        in community: CommunityID, from: UserID, to: UserID, amount: String, currency code: String = "USD", method: String? = nil,
        as actor: UserID
    ) async throws -> Expense {
        guard from != to else { throw ServiceError.invalidInput(field: "to", reason: "must be someone else than the payer") }
        let currency = try Self.currency(code)
        let total = try Money(parsing: amount, currency: currency)
        let method = try method.map { try Validate.text($0, field: "method", limit: 40) }
        return try await asUser(actor) { connection in
            let role = try await requireMember(actor, of: community, on: connection)
            guard role == .admin || actor == from || actor == to else {
                throw ServiceError.forbidden(rule: "only the two people concerned or an admin can record a settlement")
            }
            try await requireActiveMembers([from, to], of: community, on: connection)
            let id = TransactionID.random()
            try await connection.query(
                """
                INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, currency, paid_by, category, transaction_date)
                VALUES (\(id), \(community), \(actor), 'settlement', \("Settlement" + (method.map { " (\($0))" } ?? "")), \(Int32(total.minorUnits)),
                    \(currency.code), \(from), 'other', \(Self.today(now()))::date)
                """
            )
            try await insertSplits([(to, total.minorUnits)], of: id, on: connection)
            return try await expense(id, on: connection)
        }
    }

    /// Marks one split settled (the split's user, the payer, or an admin).
    public func settleSplit(_ id: SplitID, via: String?, as actor: UserID) async throws {
        let via = try via.map { try Validate.text($0, field: "settled_via", limit: 50) }
        try await asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT s.user_id, t.paid_by, t.community_id FROM splits s JOIN transactions t ON t.id = s.transaction_id WHERE s.id = \(id)"
                ).first
            else { throw ServiceError.notFound("Split \(id)") }
            let (user, payer, community) = try row.decode((UserID, UserID, CommunityID).self)
            let role = try await requireMember(actor, of: community, on: connection)
            guard role == .admin || actor == user || actor == payer else {
                throw ServiceError.forbidden(rule: "only the split's debtor, the payer or an admin can mark it settled")
            }
            try await connection.query("UPDATE splits SET is_settled = true, settled_at = now(), settled_via = \(via) WHERE id = \(id)")
        }
    }

    /// Balances of a community, per member and currency (positive = is owed), exact at this moment.
    public func balances(in community: CommunityID, as actor: UserID) async throws -> [Balance] {
        try await asUser(actor) { connection in
            try await requireMember(actor, of: community, on: connection)
            return try await connection.query(
                "SELECT user_id, currency, balance FROM balances WHERE community_id = \(community) AND balance <> 0 ORDER BY currency, balance DESC, user_id"
            ).map { row in
                let (user, currency, balance) = try row.decode((UserID, String, Int64).self)
                return Balance(userID: user, currency: currency, balance: balance)
            }
        }
    }

    /// The fewest payments that clear the community's balances, per currency.
    public func settleUpSuggestions(in community: CommunityID, as actor: UserID) async throws -> [SettleUp.Payment] {
        let balances = try await balances(in: community, as: actor)
        return SettleUp.payments(balances.map { (user: $0.userID, currency: $0.currency, balance: $0.balance) })
    }

    /// Operator: refreshes the materialized balances snapshot without blocking readers, records
    /// the MVCC snapshot it was computed with, and prunes the journal entries it now contains.
    /// Refreshes run one at a time (an advisory lock taken before the snapshot).
    public func refreshBalancesSnapshot() async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try await pool.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(Self.refreshLockKey))")
            do {
                try await connection.withTransaction(TransactionOptions(isolation: .repeatableRead, localSettings: ["role": "orbit_admin"])) {
                    connection in
                    // The first statement fixes the transaction's snapshot; REFRESH computes with it.
                    let snapshot: String = try await connection.query("SELECT pg_current_snapshot()::text AS s").single().decode("s")
                    try await connection.executeScript("REFRESH MATERIALIZED VIEW CONCURRENTLY orbit_private.balances_snapshot")
                    try await connection.query(
                        """
                        INSERT INTO orbit_private.balance_snapshot_state (singleton, snapshot, refreshed_at) VALUES (true, \(snapshot)::pg_snapshot, now())
                        ON CONFLICT (singleton) DO UPDATE SET snapshot = excluded.snapshot, refreshed_at = excluded.refreshed_at
                        """
                    )
                }
                try await connection.withTransaction(TransactionOptions(localSettings: ["role": "orbit_admin"])) { connection in
                    try await connection.query(
                        """
                        DELETE FROM orbit_private.balance_journal j USING orbit_private.balance_snapshot_state state
                        WHERE pg_visible_in_snapshot(j.xid, state.snapshot)
                        """
                    )
                }
                try await connection.query("SELECT pg_advisory_unlock(\(Self.refreshLockKey))")
            } catch {
                // Closing the session would release it too; do not leave it to that.
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.refreshLockKey))")
                throw error
            }
        }
        return clock.now - start
    }

    static let refreshLockKey: Int64 = 0x6F72_6269_7462_616C
}
