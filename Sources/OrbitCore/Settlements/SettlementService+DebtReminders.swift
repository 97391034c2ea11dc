package import Foundation
import OrbitPostgres

extension SettlementService {
    /// When in its week a community's debt reminders go: Monday from 09:00 in its zone.
    static let debtReminderHour = 9

    /// Operator job (Settle Up's `remindOldDebts`; docs/money.md, "Who hears about money"): in each
    /// community that turns `settings.remindOldDebts` on, whose week (ISO 8601, in its own zone)
    /// has reached Monday 09:00, a `debt_reminder` to each member who owes, in a currency, more
    /// than `remindOldDebtsThreshold` whole units both now and counting only the money entered
    /// `remindOldDebtsDays` ago or earlier: the part of their debt that is that old. One per
    /// member, community, currency and week: the week's dedupe key keeps it so with any number of
    /// servers. Guests are nobody to remind; archived and deleted communities are passed by.
    /// Returns how many reminders were created.
    package func sendDebtReminders() async throws -> Int {
        let now = runner.now()
        return try await runner.asOperator { connection in
            let communities = try await connection.query(
                """
                SELECT id, settings ->> 'timezone' AS timezone FROM communities
                WHERE deleted_at IS NULL AND archived_at IS NULL AND settings -> 'remindOldDebts' = 'true'::jsonb
                """
            )
            var due: [UUID] = []
            var weeks: [String] = []
            for row in communities {
                let zone = CommunitySettings(timezone: try row.decode("timezone", as: String?.self)).timeZone
                guard let week = Self.reminderWeek(of: now, in: zone) else { continue }
                due.append(try row.decode("id", as: UUID.self))
                weeks.append(week)
            }
            guard !due.isEmpty else { return 0 }
            return try await connection.query(
                NotificationService.enqueue(
                    .debtReminder,
                    """
                    WITH due AS (
                        SELECT c.id AS community_id, c.name, d.week,
                            coalesce((c.settings ->> 'remindOldDebtsDays')::int, 14) AS days,
                            coalesce((c.settings ->> 'remindOldDebtsThreshold')::bigint, 0) AS threshold
                        FROM unnest(\(due), \(weeks)::text[]) AS d (community_id, week) JOIN communities c ON c.id = d.community_id
                    ),
                    old AS (
                        SELECT e.community_id, e.user_id, e.currency, sum(e.amount)::bigint AS balance
                        FROM orbit.balance_entries e JOIN due ON due.community_id = e.community_id
                        WHERE e.changed_at <= \(now)::timestamptz - make_interval(days => due.days)
                        GROUP BY e.community_id, e.user_id, e.currency
                    ),
                    owed AS (
                        SELECT due.community_id, due.name, due.week, due.days, b.user_id, b.currency,
                            least(-b.balance, -old.balance) AS amount, orbit.currency_exponent(b.currency) AS exponent
                        FROM due
                        JOIN balances b ON b.community_id = due.community_id
                        JOIN old ON old.community_id = b.community_id AND old.user_id = b.user_id AND old.currency = b.currency
                        WHERE b.balance < 0 AND old.balance < 0
                          AND least(-b.balance, -old.balance) > due.threshold * (10::numeric ^ orbit.currency_exponent(b.currency))
                    )
                    SELECT o.user_id, o.community_id, left(o.name, 200),
                        'You have owed ' || to_char(o.amount / (10::numeric ^ o.exponent), 'FM999999999990' || CASE WHEN o.exponent > 0 THEN '.' || repeat('0', o.exponent) ELSE '' END)
                            || ' ' || o.currency || ' for more than ' || o.days || ' days: settle up',
                        jsonb_build_object('community_id', o.community_id, 'currency', o.currency, 'owed', o.amount, 'days', o.days),
                        'debt_reminder:' || o.community_id::text || ':' || o.currency || ':' || o.week,
                        m.notification_prefs
                    FROM owed o JOIN members m ON m.community_id = o.community_id AND m.user_id = o.user_id AND m.left_at IS NULL
                    """, deduplicated: true)
            ).affectedRows ?? 0
        }
    }

    /// The ISO 8601 week (`2026-W48`) `instant` is in, in `zone`, once that week's Monday 09:00
    /// has come there; nil before it.
    static func reminderWeek(of instant: Date, in zone: TimeZone) -> String? {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear, .weekday, .hour], from: instant)
        guard let year = parts.yearForWeekOfYear, let week = parts.weekOfYear, let weekday = parts.weekday, let hour = parts.hour else {
            return nil
        }
        // Monday is weekday 2 in every Gregorian calendar.
        if weekday == 2, hour < debtReminderHour { return nil }
        return "\(year)-W\(week < 10 ? "0" : "")\(week)"
    }
}
