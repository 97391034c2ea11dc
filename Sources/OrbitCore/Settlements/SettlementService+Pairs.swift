import Foundation
import OrbitPostgres

/// Who owes whom, pair by pair (docs/money.md "Who owes whom"): the ledger's lines between each
/// two people, read from the pairs' snapshot and journal (`pair_balances`), never by adding up
/// the ledger; and the entries behind one pair's figure.
extension SettlementService {
    /// Every pair's debt in each currency whose lines do not cancel: `from` owes `to`, largest
    /// first per currency. For every person, what they are owed less what they owe over their
    /// pairs is their balance.
    package func pairs(in community: CommunityID, as actor: UserID) async throws -> [PairDebt] {
        try await runner.asUserReading(actor) { connection in
            try await pairs(in: community, as: actor, on: connection)
        }
    }

    func pairs(in community: CommunityID, as actor: UserID, on connection: PostgresConnection) async throws -> [PairDebt] {
        // Both directions are kept: the positive one names who owes whom.
        try await runner.queryAsMember(
            actor, of: community, on: connection,
            """
            SELECT counterparty_id, user_id, balance, currency FROM pair_balances
            WHERE community_id = \(community) AND balance > 0
            ORDER BY currency, balance DESC, counterparty_id, user_id
            """
        ).map { row in
            let (from, to, amount, currency) = try row.decode((UserID, UserID, Int64, String).self)
            return PairDebt(from: from, to: to, amount: amount, currency: currency)
        }
    }

    /// The order of a pair's entries: newest first.
    static let pairEntryOrder = Paging.Keyset.timeAndID("pair-entries", time: "t.created_at", id: "t.id")

    /// Where the actor stands with `member` (a member of the community now or before; the actor
    /// themself is even, with no entries): the figure in each currency (positive = `member` owes the actor) and a page of the unsettled
    /// expenses and settlements behind it. The entries of one currency add up to its figure.
    package func pair(
        in community: CommunityID, with member: UserID, limit: Int = 50, cursor: String? = nil, as actor: UserID
    ) async throws -> PairStatement {
        try Validate.limit(limit, in: 1...500)
        let after = try Self.pairEntryOrder.decode(cursor)
        if member == actor {
            // Everyone is even with themself: no pair, no entries (a split of one's own share
            // is no debt).
            return try await runner.asUserReading(actor) { connection in
                try await runner.requireMember(actor, of: community, on: connection)
                return PairStatement(memberID: actor, balances: [], entries: [], nextCursor: nil)
            }
        }
        return try await runner.asUserReading(actor) { connection in
            // One round trip: the actor's membership, the member's, the figure and the page.
            // Each line between the two, signed from the actor's side: a share the member owes
            // on what the actor paid (+), the actor's share of what the member paid (−), and what
            // one of them paid on behalf of the other as a co-payer (+ when the actor did).
            let results = try await connection.pipeline([
                RequestRunner.membershipQuery(actor, in: community),
                "SELECT EXISTS (SELECT FROM members WHERE community_id = \(community) AND user_id = \(member)) AS known",
                """
                SELECT currency, balance FROM pair_balances
                WHERE community_id = \(community) AND user_id = \(actor) AND counterparty_id = \(member) AND balance <> 0
                ORDER BY currency
                """,
                """
                WITH lines AS (
                    SELECT s.transaction_id, s.amount::bigint AS amount FROM splits s
                    WHERE s.user_id = \(member) AND NOT s.is_settled AND s.community_id = \(community)
                      AND EXISTS (SELECT FROM transactions t WHERE t.id = s.transaction_id AND t.paid_by = \(actor))
                    UNION ALL
                    SELECT s.transaction_id, -s.amount::bigint FROM splits s
                    WHERE s.user_id = \(actor) AND NOT s.is_settled AND s.community_id = \(community)
                      AND EXISTS (SELECT FROM transactions t WHERE t.id = s.transaction_id AND t.paid_by = \(member))
                    UNION ALL
                    SELECT p.transaction_id, p.amount::bigint FROM transaction_payers p
                    WHERE p.user_id = \(actor) AND p.community_id = \(community)
                      AND EXISTS (SELECT FROM transactions t WHERE t.id = p.transaction_id AND t.paid_by = \(member))
                    UNION ALL
                    SELECT p.transaction_id, -p.amount::bigint FROM transaction_payers p
                    WHERE p.user_id = \(member) AND p.community_id = \(community)
                      AND EXISTS (SELECT FROM transactions t WHERE t.id = p.transaction_id AND t.paid_by = \(actor))
                )
                SELECT t.id, t.type::text AS type, t.description, t.transaction_date, t.currency, sum(owed.amount)::bigint AS amount,
                    \(unescaped: Self.pairEntryOrder.columns)
                FROM lines l JOIN transactions t ON t.id = l.transaction_id
                -- An income's lines are turned: its receiver owes the shares (it has no payer rows).
                CROSS JOIN LATERAL (VALUES (CASE WHEN t.type = 'income' THEN -l.amount ELSE l.amount END)) AS owed(amount)
                WHERE t.deleted_at IS NULL AND \(try Self.pairEntryOrder.after(after))
                GROUP BY t.id
                HAVING sum(owed.amount) <> 0
                ORDER BY \(unescaped: Self.pairEntryOrder.order) LIMIT \(limit + 1)
                """,
            ])
            guard try RequestRunner.membership(in: results[0]) != nil else { throw ServiceError.notFound("Community \(community)") }
            guard try results[1].single().decode("known", as: Bool.self) else { throw ServiceError.notFound("Member \(member)") }
            let figures = try results[2].map { row in
                let (currency, balance) = try row.decode((String, Int64).self)
                return PairStatement.Figure(currency: currency, balance: balance)
            }
            let page = try Self.pairEntryOrder.page(results[3], limit: limit) { row in
                PairStatement.Entry(
                    transactionID: try row.decode("id"), type: try row.decode("type"), description: try row.decode("description"),
                    transactionDate: try row.decode("transaction_date"), currency: try row.decode("currency"),
                    amount: try row.decode("amount"))
            }
            return PairStatement(memberID: member, balances: figures, entries: page.items, nextCursor: page.nextCursor)
        }
    }

    /// Whether settle-up simplifies by default in `community`: its `minimizeDebts` setting, on
    /// unless turned off.
    static func minimizesDebts(_ community: CommunityID, on connection: PostgresConnection) async throws -> Bool {
        let row = try await connection.query(
            "SELECT coalesce((settings ->> 'minimizeDebts')::boolean, true) AS minimize FROM communities WHERE id = \(community)"
        ).first
        return try row?.decode("minimize", as: Bool.self) ?? true
    }
}
