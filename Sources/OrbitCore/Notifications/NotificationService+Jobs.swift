import Foundation
import Logging
import OrbitPostgres

/// The scheduled work of notifications: reminders, and delivery to devices.
///
/// Both are safe on any number of servers at once. Reminders carry a dedupe key (a unique index
/// per user), so two servers making the same reminder store it once. Delivery claims a batch of
/// rows with `FOR UPDATE SKIP LOCKED` and a lease, and marks a row delivered only if its claim is
/// still the one it holds, so each notification goes to one server.
extension NotificationService {
    /// Occurrences of series per reminder insert (one statement, one transaction each).
    static let reminderBatch = 5000

    /// Operator job: event reminders (`defaultReminderHours`, default 24, before the start, for
    /// members who have not answered "no"; occurrences of series included) and dues reminders
    /// (from 3 days before the due date, in the community's time zone, for members who still
    /// owe). Set-based: a handful of statements for all communities together, whatever their
    /// number. Returns how many reminders were created.
    package func sendReminders() async throws -> Int {
        let now = runner.now()
        var created = try await oneOffEventReminders(now: now)
        created += try await seriesReminders(now: now)
        created += try await duesReminders(now: now)
        return created
    }

    /// One-off events and the rows of single occurrences (moved, answered or cancelled ones are
    /// rows of their own) that start within their community's reminder window.
    private func oneOffEventReminders(now: Date) async throws -> Int {
        try await runner.asOperator { connection in
            try await connection.query(
                """
                INSERT INTO notifications (user_id, community_id, type, title, body, data, dedupe_key)
                SELECT m.user_id, e.community_id, 'event_reminder', left(e.title, 200), 'Starts at ' || s.iso,
                    jsonb_build_object('event_id', e.id::text, 'starts_at', s.iso),
                    'event_reminder:' || coalesce(e.recurrence_parent_id, e.id)::text || ':'
                        || floor(extract(epoch FROM coalesce(e.original_starts_at, e.starts_at)))::bigint::text
                FROM events e
                JOIN communities c ON c.id = e.community_id AND c.deleted_at IS NULL
                CROSS JOIN LATERAL (SELECT to_char(e.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS iso) s
                JOIN members m ON m.community_id = e.community_id AND m.left_at IS NULL
                WHERE e.deleted_at IS NULL AND e.recurrence_rule IS NULL
                  AND e.starts_at >= \(now) AND e.starts_at < \(now) + interval '168 hours'
                  AND e.starts_at < \(now) + make_interval(hours => coalesce((c.settings ->> 'defaultReminderHours')::int, 24))
                  AND (m.notification_prefs -> 'event_reminder') IS DISTINCT FROM 'false'::jsonb
                  AND NOT EXISTS (
                      SELECT FROM rsvps r WHERE r.event_id = e.id AND r.user_id = m.user_id AND r.family_member_id IS NULL AND r.status = 'no'
                  )
                ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                """
            ).affectedRows ?? 0
        }
    }

    /// Occurrences of series, computed in Swift (the RRULE engine, in each series' zone) for
    /// all series at once, leaving out those that have a row of their own.
    private func seriesReminders(now: Date) async throws -> Int {
        struct Due {
            var series: EventID
            var community: CommunityID
            var title: String
            var start: Date
        }
        let horizon = now.addingTimeInterval(168 * 3600)
        let due: [Due] = try await runner.asOperator { connection in
            let series = try await connection.query(
                """
                SELECT \(unescaped: Event.columns), hours.reminder_hours
                FROM events
                CROSS JOIN LATERAL (
                    SELECT coalesce((c.settings ->> 'defaultReminderHours')::int, 24) AS reminder_hours FROM communities c
                    WHERE c.id = events.community_id AND c.deleted_at IS NULL
                ) hours
                WHERE recurrence_rule IS NOT NULL AND deleted_at IS NULL AND starts_at < \(horizon)
                """
            ).map { row in (try Event(row: row), Int(try row.decode("reminder_hours", as: Int32.self))) }
            var occurrences: [Due] = []
            for (event, hours) in series where hours > 0 {
                let until = now.addingTimeInterval(Double(hours) * 3600)
                for start in try EventService.occurrences(of: event, from: now, to: until, limit: 1000) {
                    occurrences.append(Due(series: event.id, community: event.communityID, title: event.title, start: start))
                }
            }
            guard !occurrences.isEmpty else { return [] }
            // Occurrences with a row of their own are the one-off reminder's to make (or cancelled).
            let taken = Set(
                try await connection.query(
                    """
                    SELECT recurrence_parent_id, original_starts_at FROM events
                    WHERE recurrence_parent_id = ANY(\(Array(Set(occurrences.map(\.series.uuid)))))
                      AND original_starts_at >= \(now) AND original_starts_at < \(horizon)
                    """
                ).map { row in "\(try row.decode("recurrence_parent_id", as: EventID.self))/\(try row.decode("original_starts_at", as: Date.self))" }
            )
            return occurrences.filter { !taken.contains("\($0.series)/\($0.start)") }
        }
        var created = 0
        for start in stride(from: 0, to: due.count, by: Self.reminderBatch) {
            let batch = due[start..<min(start + Self.reminderBatch, due.count)]
            created += try await runner.asOperator { connection in
                try await connection.query(
                    """
                    INSERT INTO notifications (user_id, community_id, type, title, body, data, dedupe_key)
                    SELECT m.user_id, o.community_id, 'event_reminder', left(o.title, 200), 'Starts at ' || o.iso,
                        jsonb_build_object('event_id', o.series_id::text, 'starts_at', o.iso),
                        'event_reminder:' || o.series_id::text || ':' || o.epoch::text
                    FROM unnest(\(batch.map(\.series.uuid)), \(batch.map(\.community.uuid)), \(batch.map(\.title))::text[],
                            \(batch.map { Self.iso($0.start) })::text[], \(batch.map { Int64($0.start.timeIntervalSince1970.rounded(.down)) }))
                        AS o(series_id, community_id, title, iso, epoch)
                    JOIN members m ON m.community_id = o.community_id AND m.left_at IS NULL
                    WHERE (m.notification_prefs -> 'event_reminder') IS DISTINCT FROM 'false'::jsonb
                    ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                    """
                ).affectedRows ?? 0
            }
        }
        return created
    }

    /// Dues that are due within three days (or today) in their community's time zone, for each
    /// member who still owes: every member active now, or who left after the dues were made.
    private func duesReminders(now: Date) async throws -> Int {
        // Every local date is within a day of the UTC date: select around it, then decide per
        // community in its own zone.
        let utcToday = CivilDate(containing: now)
        return try await runner.asOperator { connection in
            let rows = try await connection.query(
                """
                SELECT d.id, d.community_id, d.name, d.currency, d.due_date, m.user_id, c.settings ->> 'timezone' AS timezone,
                    (d.amount - coalesce((SELECT sum(p.amount_paid) FROM dues_payments p WHERE p.dues_id = d.id AND p.user_id = m.user_id), 0))::bigint
                        AS outstanding
                FROM dues d
                JOIN communities c ON c.id = d.community_id AND c.deleted_at IS NULL
                JOIN members m ON m.community_id = d.community_id AND (m.left_at IS NULL OR m.left_at >= d.created_at)
                WHERE d.is_active AND d.due_date >= \(utcToday.adding(days: -1)) AND d.due_date <= \(utcToday.adding(days: 4))
                  AND (m.notification_prefs -> 'payment_request') IS DISTINCT FROM 'false'::jsonb
                """
            )
            var users: [UUID] = []
            var communities: [UUID] = []
            var titles: [String] = []
            var bodies: [String] = []
            var data: [String] = []
            var keys: [String] = []
            for row in rows {
                let outstanding = try row.decode("outstanding", as: Int64.self)
                let dueDate = try row.decode("due_date", as: CivilDate.self)
                let timezone = try row.decode("timezone", as: String?.self)
                let today = CivilDate(containing: now, in: CommunitySettings(timezone: timezone).timeZone)
                guard outstanding > 0, dueDate >= today, dueDate <= today.adding(days: 3) else { continue }
                let dues = try row.decode("id", as: DuesID.self)
                let currency = Currency(try row.decode("currency", as: String.self)) ?? .usd
                users.append(try row.decode("user_id", as: UUID.self))
                communities.append(try row.decode("community_id", as: UUID.self))
                titles.append("Reminder: \(try row.decode("name", as: String.self))")
                bodies.append("\(Money(minorUnits: outstanding, currency: currency)) due \(dueDate)")
                data.append(try PostgresJSON(encoding: ["dues_id": dues.description]).text)
                keys.append("payment_reminder:\(dues)")
            }
            guard !users.isEmpty else { return 0 }
            return try await connection.query(
                """
                INSERT INTO notifications (user_id, community_id, type, title, body, data, dedupe_key)
                SELECT r.user_id, r.community_id, 'payment_request', left(r.title, 200), r.body, r.data::jsonb, r.dedupe_key
                FROM unnest(\(users), \(communities), \(titles)::text[], \(bodies)::text[], \(data)::text[], \(keys)::text[]) AS r(user_id, community_id, title, body, data, dedupe_key)
                ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                """
            ).affectedRows ?? 0
        }
    }

    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    // MARK: - Delivery

    /// How long a server's claim on a batch holds: a server that dies with a batch claimed
    /// leaves it to the others after this long.
    static let deliveryLease: TimeInterval = 300

    /// Operator job: hands undelivered notifications to `delivery`, at most `limit` per call, in
    /// claimed batches. A notification is marked delivered only by the claim that delivered it;
    /// a delivery that fails is left for another attempt after the lease.
    /// - Returns: how many were delivered.
    package func deliverPending(using delivery: any NotificationDelivery, limit: Int = 1000, batch: Int = 100) async throws -> Int {
        let claim = UUID()
        var delivered = 0
        while delivered < limit {
            let now = runner.now()
            let claimed = try await runner.asOperator { connection in
                try await connection.query(
                    """
                    UPDATE notifications SET delivery_claim = \(claim), delivery_claimed_at = \(now)
                    WHERE id IN (
                        SELECT id FROM notifications
                        WHERE delivered_at IS NULL
                          AND (delivery_claimed_at IS NULL OR delivery_claimed_at < \(now.addingTimeInterval(-Self.deliveryLease)))
                        ORDER BY created_at, id LIMIT \(min(batch, limit - delivered))
                        FOR UPDATE SKIP LOCKED
                    )
                    RETURNING \(unescaped: AppNotification.columns)
                    """
                ).map(AppNotification.init(row:))
            }
            guard !claimed.isEmpty else { break }
            var done: [UUID] = []
            for notification in claimed.sorted(by: { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }) {
                do {
                    try await delivery.deliver(notification)
                    done.append(notification.id.uuid)
                } catch {
                    Self.logger.warning(
                        "a notification could not be delivered; it is retried after the lease",
                        metadata: ["notification_id": "\(notification.id)", "error": "\(error)"]
                    )
                }
            }
            let marked = try await runner.asOperator { connection in
                try await connection.query(
                    """
                    UPDATE notifications SET delivered_at = now()
                    WHERE id = ANY(\(done)) AND delivered_at IS NULL AND delivery_claim = \(claim)
                    """
                ).affectedRows ?? 0
            }
            delivered += marked
            if done.count < claimed.count { break }
        }
        return delivered
    }

    static let logger = Logger(label: "orbit.notifications")
}
