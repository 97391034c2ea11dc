package import Foundation
import OrbitPostgres

extension NotificationService {
    /// Operator job (One By Two's `weeklyDigest`; docs/money.md, "Who hears about money"): for each
    /// user whose own time zone (`users.timezone`, UTC while unset) is in a Monday morning (08:00 to
    /// 11:59) and who has not switched `weekly_digest` off, the past seven days' money across their
    /// active communities: the new expenses with a share of theirs (how many, their shares per
    /// currency), and where they stand per currency. Nothing for someone with neither. One per
    /// user and ISO week (its dedupe key), with any number of servers. Returns how many were
    /// created.
    package func sendWeeklyDigests() async throws -> Int {
        let now = runner.now()
        return try await runner.asOperator { connection in
            let rows = try await connection.query(
                """
                WITH due AS (
                    SELECT u.id, to_char(l.local, 'IYYY-"W"IW') AS week
                    FROM users u CROSS JOIN LATERAL (SELECT \(now)::timestamptz AT TIME ZONE coalesce(u.timezone, 'UTC') AS local) l
                    WHERE NOT u.is_guest AND u.deleted_at IS NULL AND (u.notification_prefs -> 'weekly_digest') IS DISTINCT FROM 'false'::jsonb
                      AND extract(isodow FROM l.local) = 1 AND extract(hour FROM l.local) BETWEEN 8 AND 11
                      AND NOT EXISTS (
                          SELECT FROM notifications n WHERE n.user_id = u.id AND n.dedupe_key = 'weekly_digest:' || to_char(l.local, 'IYYY-"W"IW'))
                ),
                shares AS (
                    SELECT due.id AS user_id, t.currency, count(DISTINCT t.id)::bigint AS expenses, sum(s.amount)::bigint AS share
                    FROM due JOIN splits s ON s.user_id = due.id JOIN transactions t ON t.id = s.transaction_id
                    JOIN members m ON m.community_id = t.community_id AND m.user_id = due.id AND m.left_at IS NULL
                    JOIN communities c ON c.id = t.community_id AND c.deleted_at IS NULL
                    WHERE t.deleted_at IS NULL AND t.type = 'expense' AND t.created_at >= \(now)::timestamptz - interval '7 days'
                      AND t.created_at < \(now)::timestamptz
                    GROUP BY due.id, t.currency
                ),
                standing AS (
                    SELECT due.id AS user_id, b.currency, sum(b.balance)::bigint AS balance
                    FROM due JOIN balances b ON b.user_id = due.id
                    JOIN members m ON m.community_id = b.community_id AND m.user_id = due.id AND m.left_at IS NULL
                    JOIN communities c ON c.id = b.community_id AND c.deleted_at IS NULL
                    GROUP BY due.id, b.currency HAVING sum(b.balance) <> 0
                )
                SELECT due.id, due.week, coalesce(sh.currency, st.currency) AS currency, coalesce(sh.expenses, 0) AS expenses,
                    coalesce(sh.share, 0) AS share, coalesce(st.balance, 0) AS balance
                FROM shares sh FULL JOIN standing st ON st.user_id = sh.user_id AND st.currency = sh.currency
                JOIN due ON due.id = coalesce(sh.user_id, st.user_id)
                ORDER BY due.id, currency
                """
            )
            var money: [UUID: (week: String, entries: [[String: Any]])] = [:]
            for row in rows {
                let (user, week, currency, expenses, share, balance) = try row.decode((UUID, String, String, Int64, Int64, Int64).self)
                money[user, default: (week, [])].entries.append(["currency": currency, "expenses": expenses, "share": share, "balance": balance])
            }
            guard !money.isEmpty else { return 0 }
            var users: [UUID] = []
            var bodies: [String] = []
            var data: [String] = []
            var keys: [String] = []
            for (user, digest) in money.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                let json = try JSONSerialization.data(withJSONObject: ["week": digest.week, "money": digest.entries], options: [.sortedKeys])
                let text = String(decoding: json, as: UTF8.self)
                // Stored in English; the list and the push write it in the user's language.
                guard let body = NotificationText.body(.weeklyDigest, data: text, language: "en") else { continue }
                users.append(user)
                bodies.append(body)
                data.append(text)
                keys.append("weekly_digest:\(digest.week)")
            }
            return try await connection.query(
                Self.enqueue(
                    .weeklyDigest,
                    """
                    SELECT r.user_id, NULL::uuid, 'Your week in money', r.body, r.data::jsonb, r.dedupe_key, NULL::jsonb
                    FROM unnest(\(users), \(bodies)::text[], \(data)::text[], \(keys)::text[]) AS r(user_id, body, data, dedupe_key)
                    """, deduplicated: true)
            ).affectedRows ?? 0
        }
    }
}
