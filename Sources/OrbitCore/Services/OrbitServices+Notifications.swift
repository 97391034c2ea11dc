import Foundation
import OrbitPostgres

extension OrbitServices {
    // MARK: - Creating, in the cause's transaction

    /// Notifies the active members of `community` (except `except`) who have not switched
    /// `type` off in their `notification_prefs`, or only `only` of them. Runs in the caller's
    /// transaction, so a cause that fails leaves no notification behind.
    func notifyMembers(
        of community: CommunityID, type: String, title: String, body: String, data: [String: String], except: UserID? = nil,
        only: [UserID]? = nil, on connection: PostgresConnection
    ) async throws {
        let json = try PostgresJSON(encoding: data)
        try await connection.query(
            """
            INSERT INTO notifications (user_id, community_id, type, title, body, data)
            SELECT m.user_id, \(community), \(type)::notification_type, \(String(title.prefix(200))), \(body), \(json)
            FROM members m
            WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.user_id IS DISTINCT FROM \(except)
              AND (\(only.map { $0.map(\.uuid) })::uuid[] IS NULL OR m.user_id = ANY(\(only.map { $0.map(\.uuid) })::uuid[]))
              AND (m.notification_prefs -> \(type)) IS DISTINCT FROM 'false'::jsonb
            """
        )
    }

    // MARK: - Reading

    /// The acting user's notifications, newest first, `limit` at a time before `before`.
    public func notifications(limit: Int = 50, before: NotificationID? = nil, unreadOnly: Bool = false, as actor: UserID) async throws
        -> [AppNotification]
    {
        guard (1...200).contains(limit) else { throw ServiceError.invalidInput(field: "limit", reason: "must be between 1 and 200") }
        return try await asUser(actor) { connection in
            try await connection.query(
                """
                SELECT \(unescaped: AppNotification.columns) FROM notifications
                WHERE user_id = \(actor) AND (NOT \(unreadOnly) OR read_at IS NULL)
                  AND (\(before)::uuid IS NULL OR (created_at, id) < (SELECT b.created_at, b.id FROM notifications b WHERE b.id = \(before)))
                ORDER BY created_at DESC, id DESC LIMIT \(limit)
                """
            ).map(AppNotification.init(row:))
        }
    }

    public func unreadNotificationCount(as actor: UserID) async throws -> Int {
        try await asUser(actor) { connection in
            Int(
                try await connection.query("SELECT count(*) AS n FROM notifications WHERE user_id = \(actor) AND read_at IS NULL").single().decode(
                    "n", as: Int64.self))
        }
    }

    /// Marks one notification, or all (`id` nil), read.
    @discardableResult
    public func markNotificationsRead(_ id: NotificationID? = nil, as actor: UserID) async throws -> Int {
        try await asUser(actor) { connection in
            let changed =
                try await connection.query(
                    "UPDATE notifications SET read_at = now() WHERE user_id = \(actor) AND read_at IS NULL AND (\(id)::uuid IS NULL OR id = \(id))"
                ).affectedRows ?? 0
            if let id, changed == 0, try await connection.query("SELECT 1 FROM notifications WHERE id = \(id)").isEmpty {
                throw ServiceError.notFound("Notification \(id)")
            }
            return changed
        }
    }

    // MARK: - Scheduled

    /// Operator job: event reminders (`defaultReminderHours`, default 24, before the start, for
    /// members who have not answered "no"; occurrences of series included) and dues reminders
    /// (3 days before the due date, for members who still owe). Each reminder carries a dedupe
    /// key, so running the job again never repeats one. Returns how many were created.
    public func sendReminders() async throws -> Int {
        let now = now()
        return try await asOperator { connection in
            var created = 0
            let communities = try await connection.query(
                "SELECT \(unescaped: Community.columns) FROM communities WHERE deleted_at IS NULL"
            ).map(Community.init(row:))
            for community in communities {
                let hours = Double(community.settings.defaultReminderHours ?? 24)
                let until = now.addingTimeInterval(hours * 3600)
                guard hours > 0 else { continue }
                for entry in try await calendar(community.id, from: now, to: until, limit: 10_000, on: connection) {
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
                let soon = Self.today(now.addingTimeInterval(3 * Self.day))
                let dues = try await connection.query(
                    "SELECT \(unescaped: Dues.columns) FROM dues WHERE community_id = \(community.id) AND is_active AND due_date::text <= \(soon) AND due_date::text >= \(Self.today(now))"
                ).map(Dues.init(row:))
                for item in dues {
                    for line in try await report(for: item, on: connection) where line.outstanding > 0 {
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
    public func deliverPending(using delivery: any NotificationDelivery, limit: Int = 1000) async throws -> Int {
        let pending = try await asOperator { connection in
            try await connection.query(
                "SELECT \(unescaped: AppNotification.columns) FROM notifications WHERE delivered_at IS NULL ORDER BY created_at, id LIMIT \(limit)"
            ).map(AppNotification.init(row:))
        }
        for notification in pending {
            try await delivery.deliver(notification)
            _ = try await asOperator { connection in
                try await connection.query("UPDATE notifications SET delivered_at = now() WHERE id = \(notification.id)")
            }
        }
        return pending.count
    }
}
