import OrbitPostgres

/// Who hears about money (docs/money.md, "Who hears about money"): One By Two's
/// `expense_added`, `expense_edited` and `settlement`, and a deleted expense. Each is one
/// statement in the round trip of the change that causes it, through `NotificationService`'s
/// one statement (a member who switched a type off in the community gets none; a guest gets
/// none). `data` says what the app opens (`expense_id`, `community_id`) and the recipient's
/// share (`share`, minor units of `currency`), for the app to show in the user's own format, and
/// what the text is written from in the reader's language (`kind`, `actor_name`; `NotificationText`).
enum MoneyNotifications {
    /// The recipient's share of transaction `t`, and where it is.
    private static let data: PostgresQuery = """
        jsonb_build_object('expense_id', t.id, 'community_id', t.community_id, 'share', p.amount::text, 'currency', t.currency,
            'kind', t.type::text, 'actor_name', a.display_name)
        """

    /// Rows for `NotificationService.enqueue`: one per person `p` (user_id, amount) of transaction
    /// `id` who is an active member and not `actor`, with `body` after the actor's name.
    private static func rows(_ id: TransactionID, people: PostgresQuery, body: String, by actor: UserID, where condition: PostgresQuery = "")
        -> PostgresQuery
    {
        """
        SELECT p.user_id, t.community_id, left(t.description, 200), coalesce(a.display_name, 'Someone') || \(body)::text,
            \(data), NULL::text, m.notification_prefs
        FROM transactions t
        JOIN LATERAL (\(people)) p ON true
        JOIN members m ON m.community_id = t.community_id AND m.user_id = p.user_id AND m.left_at IS NULL
        LEFT JOIN users a ON a.id = \(actor)
        WHERE t.id = \(id) AND p.user_id <> \(actor) \(condition)
        """
    }

    /// Everyone with a share of `t` (a family member's is their guardian's), with their share.
    private static let shares: PostgresQuery =
        "SELECT s.user_id, sum(s.amount)::bigint AS amount FROM splits s WHERE s.transaction_id = t.id GROUP BY s.user_id"

    /// A new expense or income: everyone with a share but its author. A new settlement: its two
    /// parties (the payer and the payee) but whoever recorded it.
    static func added(_ id: TransactionID, _ type: TransactionType, by actor: UserID) -> PostgresQuery {
        switch type {
        case .settlement:
            return NotificationService.enqueue(
                .settlementRecorded,
                rows(
                    id,
                    people:
                        "SELECT t.paid_by AS user_id, t.total_amount::bigint AS amount UNION SELECT s.user_id, s.amount FROM splits s WHERE s.transaction_id = t.id",
                    body: " recorded a payment between you and another member", by: actor))
        case .income:
            return NotificationService.enqueue(
                .expenseAdded, rows(id, people: shares, body: " recorded money received for the group, with a share of yours", by: actor))
        case .expense, .dues:
            return NotificationService.enqueue(.expenseAdded, rows(id, people: shares, body: " added an expense you share in", by: actor))
        }
    }

    /// An edit: those whose share changed, old or new (all of them when the currency changed),
    /// but its author. `before` is each person's share before the edit.
    static func edited(_ id: TransactionID, before: [UserID: Int64], currencyChanged: Bool, by actor: UserID) -> PostgresQuery {
        let users = Array(before.keys)
        let people: PostgresQuery = """
            SELECT coalesce(n.user_id, o.user_id) AS user_id, coalesce(n.amount, 0) AS amount
            FROM (\(shares)) n
            FULL JOIN unnest(\(users.map(\.uuid))::uuid[], \(users.map { before[$0] ?? 0 })::bigint[]) AS o (user_id, amount) ON o.user_id = n.user_id
            WHERE n.amount IS DISTINCT FROM o.amount OR \(currencyChanged)
            """
        return NotificationService.enqueue(.expenseEdited, rows(id, people: people, body: " changed an expense you share in", by: actor))
    }

    /// A delete, when it happened in this transaction: everyone with a share but its author.
    static func deleted(_ id: TransactionID, by actor: UserID) -> PostgresQuery {
        NotificationService.enqueue(
            .expenseDeleted, rows(id, people: shares, body: " deleted an expense you shared in", by: actor, where: "AND t.deleted_at = now()"))
    }
}
