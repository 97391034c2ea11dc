import Foundation
import OrbitPostgres

/// Settlements, balances and the payments that clear them (docs/money.md): "`from` paid `to`",
/// a split marked settled, the balances (snapshot + journal, exact at every commit) and the
/// fewest payments that clear them.
package struct SettlementService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }
}

extension SettlementService {
    /// Records "`from` paid `to` `amount`" (a settlement): it moves both balances toward zero.
    /// Either party or an admin may record it.
    /// - Parameters:
    ///   - settles: the currency of the debt it settles, when paid in another: the settlement
    ///     is then recorded in `settles`, `amount` converted at `rate` (1 paid currency = rate
    ///     of `settles`) rounded half away from zero to its minor unit, with what was paid and
    ///     the rate kept on it.
    ///   - rate: default the rate known to the community today (`rate(in:from:to:)`); none
    ///     known is a conflict.
    ///   - date: the day it was paid: today or earlier in the community's time zone (default today).
    ///   - notes: up to 2,000 characters.
    package func recordSettlement(
        in community: CommunityID, from: UserID, to: UserID, amount paid: Money, settles: Currency? = nil, rate: DecimalRate? = nil,
        method: String? = nil, date: CivilDate? = nil, notes: String? = nil, as actor: UserID
    ) async throws -> Expense {
        guard from != to else { throw ServiceError.invalidInput(field: "to", reason: "must be someone else than the payer") }
        try paid.requirePositive()
        let method = try method.map { try Validate.text($0, field: "method", limit: 40) }
        let notes = try notes.map { try Validate.text($0, field: "notes", limit: 2000, multiline: true) }
        let given = rate?.text
        let target = settles ?? paid.currency
        if target == paid.currency && given != nil {
            throw ServiceError.invalidInput(field: "rate", reason: "goes with a settlement in another currency than the debt's (settles)")
        }
        return try await runner.asUser(actor) { connection in
            var entry = ExpenseService.NewTransaction(
                community: community, type: .settlement, description: "Settlement" + (method.map { " (\($0))" } ?? ""), total: paid,
                paidBy: from, category: .other, notes: notes, date: date, splits: [(.user(to), paid.minorUnits)])
            if let date {
                // A payment has happened: never after today where the community is.
                let today = try await runner.today(in: community, on: connection)
                guard date <= today else {
                    throw ServiceError.conflict(field: "transaction_date", reason: "is after today (\(today)) in the community's time zone")
                }
            }
            if target != paid.currency {
                try await runner.requireMember(actor, of: community, on: connection)
                var rate = given
                if rate == nil {
                    rate = try await RateService.rate(
                        community, paid.currency, target, on: try await runner.today(in: community, on: connection), connection)
                }
                guard let rate else {
                    throw ServiceError.conflict(
                        field: "rate",
                        reason: "no rate from \(paid.currency) to \(target) is known: an admin sets one, or an operator imports the ECB's")
                }
                let converted: Int64
                do {
                    converted = try await connection.query(
                        "SELECT orbit.convert(\(paid.minorUnits), \(rate)::numeric, \(paid.currency.code), \(target.code)) AS amount"
                    ).single().decode("amount", as: Int64.self)
                } catch let error as PostgresError where error.sqlState == "22003" {
                    // orbit.convert refuses a result past the largest amount (the rate is past its bound for this amount).
                    let reason =
                        "converts \(paid) to more than the largest amount of \(target) (\(Money(minorUnits: Money.maximumMinorUnits, currency: target)))"
                    throw Self.refusal(field: "rate", reason, rateWasGiven: given != nil)
                }
                guard converted > 0 else {
                    throw Self.refusal(
                        field: "amount", "converts at \(rate) to less than the smallest amount of \(target) (\(paid) is too little)",
                        rateWasGiven: given != nil)
                }
                let total = Money(minorUnits: converted, currency: target)
                entry.total = total
                entry.splits = [(.user(to), converted)]
                entry.conversion = Conversion(paidAmount: paid.minorUnits, paidCurrency: paid.currency.code, rate: rate)
            }
            // Either party may record it; anyone else in the community must be an admin.
            if let settlement = try await ExpenseService(runner).insert(entry, as: actor, adminOnly: actor != from && actor != to, on: connection) {
                return settlement
            }
            // Nothing was written: the checks the statement holds say why.
            let role = try await runner.requireMember(actor, of: community, on: connection)
            guard role == .admin || actor == from || actor == to else {
                throw ServiceError.forbidden(rule: "only the two people concerned or an admin can record a settlement")
            }
            try await runner.requireActiveMembers([from, to], of: community, on: connection)
            throw ServiceError.changedMeanwhile
        }
    }

    /// Marks one split settled (the split's user, the payer, or an admin).
    /// - Returns: the expense with the split now settled.
    @discardableResult
    package func settleSplit(_ id: SplitID, via: String?, as actor: UserID) async throws -> Expense {
        let via = try via.map { try Validate.text($0, field: "settled_via", limit: 50) }
        return try await runner.asUser(actor) { connection in
            // One round trip: the split marked settled, only if the actor may (an active member
            // of the expense's community who is its debtor, its payer or an admin), and the
            // expense as it is now. The reads find the transaction through the split.
            let activity = UUID()
            let results = try await connection.pipeline([
                MoneyHistory.recordBefore(activity, .settled, transaction: nil, split: id, by: actor),
                """
                UPDATE splits s SET is_settled = true, settled_at = coalesce(s.settled_at, now()), settled_via = \(via)
                FROM transactions t
                WHERE s.id = \(id) AND t.id = s.transaction_id AND t.deleted_at IS NULL
                  AND EXISTS (
                      SELECT FROM members m WHERE m.community_id = t.community_id AND m.user_id = \(actor) AND m.left_at IS NULL
                        AND (m.role = 'admin' OR s.user_id = \(actor) OR t.paid_by = \(actor)))
                """,
                MoneyHistory.recordAfter(activity),
                """
                SELECT \(unescaped: Expense.columns) FROM transactions
                WHERE id = (SELECT transaction_id FROM splits WHERE id = \(id)) AND deleted_at IS NULL
                """,
                """
                SELECT \(unescaped: ExpenseService.splitColumns) FROM \(unescaped: ExpenseService.splitSource)
                WHERE s.transaction_id = (SELECT transaction_id FROM splits WHERE id = \(id)) ORDER BY \(unescaped: ExpenseService.splitOrder)
                """,
                """
                SELECT transaction_id, user_id, amount FROM transaction_payers
                WHERE transaction_id = (SELECT transaction_id FROM splits WHERE id = \(id)) ORDER BY user_id
                """,
            ])
            if results[1].affectedRows == 1, let row = results[3].first {
                return try Expense(row: row, payers: try results[5].map(Payer.init(row:)), splits: try results[4].map(Split.init(row:)))
            }
            // Nothing was written: say why.
            guard
                let row = try await connection.query(
                    """
                    SELECT s.user_id, t.paid_by, t.community_id FROM splits s JOIN transactions t ON t.id = s.transaction_id
                    WHERE s.id = \(id) AND t.deleted_at IS NULL
                    """
                ).first
            else { throw ServiceError.notFound("Split \(id)") }
            let (user, payer, community) = try row.decode((UserID, UserID, CommunityID).self)
            let role = try await runner.requireMember(actor, of: community, on: connection)
            guard role == .admin || actor == user || actor == payer else {
                throw ServiceError.forbidden(rule: "only the split's debtor, the payer or an admin can mark it settled")
            }
            throw ServiceError.changedMeanwhile
        }
    }

    /// Balances of a community, per member and currency (positive = is owed), exact at this moment.
    package func balances(in community: CommunityID, as actor: UserID) async throws -> [Balance] {
        try await runner.asUserReading(actor) { connection in try await balances(in: community, as: actor, on: connection) }
    }

    func balances(in community: CommunityID, as actor: UserID, on connection: PostgresConnection) async throws -> [Balance] {
        try await runner.queryAsMember(
            actor, of: community, on: connection,
            "SELECT user_id, currency, balance FROM balances WHERE community_id = \(community) AND balance <> 0 ORDER BY currency, balance DESC, user_id"
        ).map { row in
            let (user, currency, balance) = try row.decode((UserID, String, Int64).self)
            return Balance(userID: user, currency: currency, balance: balance)
        }
    }

    /// The payments that clear the community's balances, per currency.
    /// - Parameter simplify: the fewest payments (`SettleUp.payments`), or each pair's own debt
    ///   (`pairs(in:as:)`, Settle Up's `minimizeDebts` off); nil: the community's `minimizeDebts`
    ///   setting, on by default.
    package func settleUpSuggestions(in community: CommunityID, simplify: Bool? = nil, as actor: UserID) async throws -> [SettleUp.Payment] {
        switch try await owed(in: community, simplify: simplify, as: actor) {
        case .pairs(let debts): debts.map { SettleUp.Payment(from: $0.from, to: $0.to, amount: $0.amount, currency: $0.currency) }
        case .balances(let balances): SettleUp.payments(balances.map { (user: $0.userID, currency: $0.currency, balance: $0.balance) })
        }
    }

    /// What settle-up clears: the balances (simplified), or each pair's debts.
    private enum Owed: Sendable {
        case balances([Balance])
        case pairs([PairDebt])
    }

    /// `simplify`, or when nil the community's `minimizeDebts`, and what it clears, in one read.
    private func owed(in community: CommunityID, simplify: Bool?, as actor: UserID) async throws -> Owed {
        try await runner.asUserReading(actor) { connection in
            let minimize: Bool
            if let simplify { minimize = simplify } else { minimize = try await Self.minimizesDebts(community, on: connection) }
            if minimize {
                return .balances(try await balances(in: community, as: actor, on: connection))
            }
            return .pairs(try await pairs(in: community, as: actor, on: connection))
        }
    }

    /// Payments that clear every balance, all in `currency`: each balance in another currency
    /// converted at the rate known to the community today (`rate(in:from:to:)`), rounded half
    /// away from zero to `currency`'s minor unit, then the same matching as per currency. The
    /// rounding of each converted balance may leave a member's total a unit or so off what the
    /// rates say; suggestions never ask more than the converted balances. A currency without a
    /// known rate is a conflict naming it.
    ///
    /// With `simplify` false (or nil and the community's `minimizeDebts` off), each pair's
    /// debts instead, each converted the same way, and the two directions of a pair netted.
    package func settleUpSuggestions(
        in community: CommunityID, currency: Currency, simplify: Bool? = nil, as actor: UserID
    ) async throws -> [SettleUp.Payment] {
        let balances: [Balance]
        switch try await owed(in: community, simplify: simplify, as: actor) {
        case .pairs(let debts): return try await pairwise(debts, in: community, currency: currency, as: actor)
        case .balances(let owed): balances = owed
        }
        let converted = try await runner.asUserReading(actor) { connection in
            let today = try await runner.today(in: community, on: connection)
            return try await connection.query(
                """
                SELECT x.user_id, x.currency, orbit.convert(x.balance, orbit.exchange_rate(\(community), x.currency, \(currency.code), \(today)),
                    x.currency, \(currency.code)) AS converted
                FROM unnest(\(balances.map(\.userID.uuid)), \(balances.map(\.currency))::text[], \(balances.map(\.balance))) AS x (user_id, currency, balance)
                """
            ).map { try $0.decode((UserID, String, Int64?).self) }
        }
        if let missing = converted.first(where: { $0.2 == nil }) {
            throw ServiceError.conflict(
                field: "in", reason: "no rate from \(missing.1) to \(currency) is known: an admin sets one, or an operator imports the ECB's")
        }
        var totals: [UserID: Int64] = [:]
        for (user, _, amount) in converted { totals[user, default: 0] += amount ?? 0 }
        // Rounding may leave the totals a few units off zero: match no more than the smaller side.
        var entries = totals.map { (user: $0.key, currency: currency.code, balance: $0.value) }
        let excess = entries.map(\.balance).reduce(0, +)
        if excess != 0 {
            // Take the difference off the largest balances of the larger side, one unit each.
            let sign: Int64 = excess > 0 ? 1 : -1
            var order = entries.indices.filter { entries[$0].balance * sign > 0 }
                .sorted {
                    abs(entries[$0].balance) != abs(entries[$1].balance)
                        ? abs(entries[$0].balance) > abs(entries[$1].balance) : entries[$0].user < entries[$1].user
                }
            var left = abs(excess)
            while left > 0, !order.isEmpty {
                for index in order where left > 0 {
                    entries[index].balance -= sign
                    left -= 1
                }
                order.removeAll { entries[$0].balance == 0 }
            }
        }
        return SettleUp.payments(entries)
    }

    /// Each pair's debts in `currency`, converted at the rates known today and netted per pair
    /// (docs/money.md): no simplification across people.
    private func pairwise(_ pairs: [PairDebt], in community: CommunityID, currency: Currency, as actor: UserID) async throws -> [SettleUp.Payment] {
        let converted = try await runner.asUserReading(actor) { connection in
            let today = try await runner.today(in: community, on: connection)
            return try await connection.query(
                """
                SELECT x.from_user, x.to_user, x.currency,
                    orbit.convert(x.amount, orbit.exchange_rate(\(community), x.currency, \(currency.code), \(today)), x.currency, \(currency.code)) AS converted
                FROM unnest(\(pairs.map(\.from.uuid)), \(pairs.map(\.to.uuid)), \(pairs.map(\.currency))::text[], \(pairs.map(\.amount)))
                    AS x (from_user, to_user, currency, amount)
                """
            ).map { try $0.decode((UserID, UserID, String, Int64?).self) }
        }
        if let missing = converted.first(where: { $0.3 == nil }) {
            throw ServiceError.conflict(
                field: "in", reason: "no rate from \(missing.2) to \(currency) is known: an admin sets one, or an operator imports the ECB's")
        }
        // Net each pair: the smaller id first, positive when it owes the other.
        var net: [Pair: Int64] = [:]
        for (from, to, _, amount) in converted {
            let amount = amount ?? 0
            if from < to {
                net[Pair(first: from, second: to), default: 0] += amount
            } else {
                net[Pair(first: to, second: from), default: 0] -= amount
            }
        }
        return net.filter { $0.value != 0 }
            .map { pair, amount in
                amount > 0
                    ? SettleUp.Payment(from: pair.first, to: pair.second, amount: amount, currency: currency.code)
                    : SettleUp.Payment(from: pair.second, to: pair.first, amount: -amount, currency: currency.code)
            }
            .sorted { $0.amount != $1.amount ? $0.amount > $1.amount : ($0.from, $0.to) < ($1.from, $1.to) }
    }

    private struct Pair: Hashable {
        var first: UserID
        var second: UserID
    }

    /// Operator: refreshes the materialized balances snapshot without blocking readers, records
    /// the MVCC snapshot it was computed with, and prunes the journal entries it now contains.
    ///
    /// Refreshes run one at a time, on any number of servers: the refresh locks the snapshot's
    /// state row table with `NOWAIT` before its MVCC snapshot is taken (a lock statement does not
    /// fix a REPEATABLE READ snapshot; the first query does), so a refresh that finds another one
    /// running gives up at once instead of waiting behind it, and the snapshot it records is
    /// never older than the last one recorded. Both the lock and the settings end with the
    /// transaction, which keeps this safe behind a transaction-mode pooler; `timeout` bounds it.
    /// - Returns: how long it took, or nil when another refresh was running.
    @discardableResult
    package func refreshBalancesSnapshot(timeout: Duration = .seconds(600)) async throws -> Duration? {
        let clock = ContinuousClock()
        let start = clock.now
        let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        do {
            try await runner.pool.withTransaction(TransactionOptions(isolation: .repeatableRead)) { connection in
                try await connection.executeScript(
                    """
                    SET LOCAL ROLE orbit_admin;
                    LOCK TABLE orbit_private.balance_snapshot_state IN SHARE ROW EXCLUSIVE MODE NOWAIT;
                    SET LOCAL statement_timeout = \(milliseconds);
                    SET LOCAL lock_timeout = \(milliseconds)
                    """
                )
                // The first query fixes the transaction's snapshot; both REFRESHes compute with
                // it, so the balances and the pairs always come from the same lines.
                let snapshot: String = try await connection.query("SELECT pg_current_snapshot()::text AS s").single().decode("s")
                try await connection.executeScript(
                    """
                    REFRESH MATERIALIZED VIEW CONCURRENTLY orbit_private.balances_snapshot;
                    REFRESH MATERIALIZED VIEW CONCURRENTLY orbit_private.pair_balances_snapshot
                    """
                )
                try await connection.query(
                    """
                    INSERT INTO orbit_private.balance_snapshot_state (singleton, snapshot, refreshed_at) VALUES (true, \(snapshot)::pg_snapshot, now())
                    ON CONFLICT (singleton) DO UPDATE SET snapshot = excluded.snapshot, refreshed_at = excluded.refreshed_at
                    """
                )
            }
        } catch let error as PostgresError where error.isLockNotAvailable {
            return nil
        }
        try await runner.asOperator { connection in
            try await connection.query(
                """
                DELETE FROM orbit_private.balance_journal j USING orbit_private.balance_snapshot_state state
                WHERE pg_visible_in_snapshot(j.xid, state.snapshot)
                """
            )
        }
        return clock.now - start
    }

}

extension SettlementService {
    /// A conversion that cannot be recorded: with the rate in the request, the request is wrong
    /// (400); with the community's rate of the day, the request is valid and the state refuses it
    /// (409, docs/api.md).
    fileprivate static func refusal(field: String, _ reason: String, rateWasGiven: Bool) -> ServiceError {
        rateWasGiven ? .invalidInput(field: field, reason: reason) : .conflict(field: field, reason: reason)
    }
}
