import Foundation
import OrbitPostgres

/// The scheduled work of notifications: reminders, and delivery to devices.
extension NotificationService {
    /// Operator job: event reminders (`defaultReminderHours`, default 24, before the start, for
    /// members who have not answered "no"; occurrences of series included) and dues reminders
    /// (3 days before the due date, for members who still owe). Each reminder carries a dedupe
    /// key, so running the job again never repeats one. Returns how many were created.
    package func sendReminders() async throws -> Int {
        let now = runner.now()
        return try await runner.asOperator { connection in
            var created = 0
            let communities = try await connection.query(
                "SELECT \(unescaped: Community.columns) FROM communities WHERE deleted_at IS NULL"
            ).map(Community.init(row:))
            for community in communities {
                let hours = Double(community.settings.defaultReminderHours ?? 24)
                let until = now.addingTimeInterval(hours * 3600)
                guard hours > 0 else { continue }
                for entry in try await EventService.calendar(of: community.id, from: now, to: until, limit: 10_000, on: connection) {
                    let key =
                        "event_reminder:\(entry.seriesID ?? entry.eventID):\(Int((entry.occurrenceStartsAt ?? entry.startsAt).timeIntervalSince1970))"
                    let data = try PostgresJSON(
                        encoding: ["event_id": entry.eventID.description, "starts_at": entry.startsAt.formatted(.iso8601)]
                    )
                    created +=
                        try await connection.query(
                            """
                            INSERT INTO notifications (user_id, community_id, type, title, body, data, dedupe_key)
                            SELECT m.user_id, \(community.id), 'event_reminder', \(String(entry.title.prefix(200))),
                                \("Starts at \(entry.startsAt.formatted(.iso8601))"), \(data), \(key)
                            FROM members m
                            WHERE m.community_id = \(community.id) AND m.left_at IS NULL
                              AND (m.notification_prefs -> 'event_reminder') IS DISTINCT FROM 'false'::jsonb
                              AND NOT EXISTS (
                                  SELECT FROM rsvps r WHERE r.event_id = \(entry.eventID) AND \(entry.isComputed) = false
                                    AND r.user_id = m.user_id AND r.family_member_id IS NULL AND r.status = 'no'
                              )
                            ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                            """
                        ).affectedRows ?? 0
                }
                let today = CivilDate(containing: now)
                let soon = today.adding(days: 3)
                let dues = try await connection.query(
                    """
                    SELECT \(unescaped: Dues.columns) FROM dues
                    WHERE community_id = \(community.id) AND is_active AND due_date <= \(soon) AND due_date >= \(today)
                    """
                ).map(Dues.init(row:))
                for item in dues {
                    for line in try await DuesService.report(for: item, today: today, on: connection) where line.outstanding > 0 {
                        let data = try PostgresJSON(encoding: ["dues_id": item.id.description])
                        created +=
                            try await connection.query(
                                """
                                INSERT INTO notifications (user_id, community_id, type, title, body, data, dedupe_key)
                                SELECT \(line.userID), \(community.id), 'payment_request', \("Reminder: \(item.name)"),
                                    \("\(Money(minorUnits: line.outstanding, currency: Currency(item.currency) ?? .usd)) due \(item.dueDate)"), \(data),
                                    \("payment_reminder:\(item.id)")
                                WHERE NOT EXISTS (
                                    SELECT FROM members m WHERE m.community_id = \(community.id) AND m.user_id = \(line.userID)
                                      AND (m.notification_prefs -> 'payment_request') = 'false'::jsonb
                                )
                                ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                                """
                            ).affectedRows ?? 0
                    }
                }
            }
            return created
        }
    }

    /// Operator job: hands undelivered notifications to `delivery` and marks them delivered.
    package func deliverPending(using delivery: any NotificationDelivery, limit: Int = 1000) async throws -> Int {
        let pending = try await runner.asOperator { connection in
            try await connection.query(
                "SELECT \(unescaped: AppNotification.columns) FROM notifications WHERE delivered_at IS NULL ORDER BY created_at, id LIMIT \(limit)"
            ).map(AppNotification.init(row:))
        }
        for notification in pending {
            try await delivery.deliver(notification)
            _ = try await runner.asOperator { connection in
                try await connection.query("UPDATE notifications SET delivered_at = now() WHERE id = \(notification.id)")
            }
        }
        return pending.count
    }
}
