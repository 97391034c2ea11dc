package import Foundation
import Logging
import OrbitPostgres

/// The scheduled work of notifications: reminders, and delivery to devices.
///
/// Both are safe on any number of servers at once. Reminders carry a dedupe key (a unique index
/// per user), so two servers making the same reminder store it once. Delivery hands each
/// notification out once and sends each push from one server, at most once per device
/// (`deliverPending`).
extension NotificationService {
    /// Occurrences of series per reminder insert (one statement, one transaction each).
    static let reminderBatch = 5000

    /// Operator job: event reminders (`defaultReminderHours`, default 24, before the start, for
    /// members who have not answered "no"; occurrences of series included) and dues reminders
    /// (from 3 days before the due date, in the community's time zone, for members who still
    /// owe), and chores due within two hours (`ChoreService.sendDueReminders`). Set-based: a
    /// handful of statements for all communities together, whatever their
    /// number. Returns how many reminders were created.
    package func sendReminders() async throws -> Int {
        let now = runner.now()
        var created = try await oneOffEventReminders(now: now)
        created += try await seriesReminders(now: now)
        created += try await duesReminders(now: now)
        created += try await ChoreService(runner).sendDueReminders()
        return created
    }

    /// One-off events and the rows of single occurrences (moved, answered or cancelled ones are
    /// rows of their own) that start within their community's reminder window.
    private func oneOffEventReminders(now: Date) async throws -> Int {
        try await runner.asOperator { connection in
            try await connection.query(
                Self.enqueue(
                    .eventReminder,
                    """
                    SELECT m.user_id, e.community_id, left(e.title, 200), 'Starts at ' || s.iso,
                        jsonb_build_object('event_id', e.id::text, 'starts_at', s.iso),
                        'event_reminder:' || coalesce(e.recurrence_parent_id, e.id)::text || ':'
                            || floor(extract(epoch FROM coalesce(e.original_starts_at, e.starts_at)))::bigint::text,
                        m.notification_prefs
                    FROM events e
                    JOIN communities c ON c.id = e.community_id AND c.deleted_at IS NULL
                    CROSS JOIN LATERAL (SELECT to_char(e.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS iso) s
                    JOIN members m ON m.community_id = e.community_id AND m.left_at IS NULL
                    WHERE e.deleted_at IS NULL AND e.recurrence_rule IS NULL
                      AND e.starts_at >= \(now) AND e.starts_at < \(now) + interval '168 hours'
                      AND e.starts_at < \(now) + make_interval(hours => coalesce((c.settings ->> 'defaultReminderHours')::int, 24))
                      AND NOT EXISTS (
                          SELECT FROM rsvps r WHERE r.event_id = e.id AND r.user_id = m.user_id AND r.family_member_id IS NULL AND r.status = 'no'
                      )
                    """, deduplicated: true)
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
                    Self.enqueue(
                        .eventReminder,
                        """
                        SELECT m.user_id, o.community_id, left(o.title, 200), 'Starts at ' || o.iso,
                            jsonb_build_object('event_id', o.series_id::text, 'starts_at', o.iso),
                            'event_reminder:' || o.series_id::text || ':' || o.epoch::text, m.notification_prefs
                        FROM unnest(\(batch.map(\.series.uuid)), \(batch.map(\.community.uuid)), \(batch.map(\.title))::text[],
                                \(batch.map { Self.iso($0.start) })::text[], \(batch.map { Int64($0.start.timeIntervalSince1970.rounded(.down)) }))
                            AS o(series_id, community_id, title, iso, epoch)
                        JOIN members m ON m.community_id = o.community_id AND m.left_at IS NULL
                        """, deduplicated: true)
                ).affectedRows ?? 0
            }
        }
        return created
    }

    /// Dues that are due within three days (or today) in their community's time zone, for each
    /// member who still owes (`dues_owed`: every member active now, or who left after the dues
    /// were made; for dues per attendee, the attendees).
    private func duesReminders(now: Date) async throws -> Int {
        // Every local date is within a day of the UTC date: select around it, then decide per
        // community in its own zone.
        let utcToday = CivilDate(containing: now)
        return try await runner.asOperator { connection in
            let rows = try await connection.query(
                """
                SELECT d.id, d.community_id, d.name, d.currency, d.due_date, m.user_id, c.settings ->> 'timezone' AS timezone,
                    (o.amount_due - coalesce((SELECT sum(p.amount_paid) FROM dues_payments p WHERE p.dues_id = d.id AND p.user_id = m.user_id), 0))::bigint
                        AS outstanding
                FROM dues d
                JOIN communities c ON c.id = d.community_id AND c.deleted_at IS NULL
                JOIN dues_owed o ON o.dues_id = d.id
                JOIN members m ON m.community_id = d.community_id AND m.user_id = o.user_id
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
            // Sent whatever the member's notification_prefs say (as it always was): no preferences.
            return try await connection.query(
                Self.enqueue(
                    .paymentRequest,
                    """
                    SELECT r.user_id, r.community_id, left(r.title, 200), r.body, r.data::jsonb, r.dedupe_key, NULL::jsonb
                    FROM unnest(\(users), \(communities), \(titles)::text[], \(bodies)::text[], \(data)::text[], \(keys)::text[])
                        AS r(user_id, community_id, title, body, data, dedupe_key)
                    """, deduplicated: true)
            ).affectedRows ?? 0
        }
    }

    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    // MARK: - Delivery

    /// How many times a push is tried before it is given up.
    static let pushAttempts = 5
    /// A push not sent within this long after its notification is dropped (also its
    /// `apns-expiration`): a day-old "new post" is noise.
    package static let pushLifetime: TimeInterval = 86_400
    /// A push claimed this long ago without an outcome belongs to a server that stopped; it is
    /// marked failed, never sent again.
    static let abandonedSend: TimeInterval = 3600
    /// Pushes sent at once by one server (APNs multiplexes them over one HTTP/2 connection).
    static let sendWidth = 32

    /// Operator job: hands undelivered notifications out and sends the pushes that are due, at
    /// most `limit` of each per call, in batches of `batch`.
    ///
    /// Handing out is one statement per batch: it marks the notifications delivered and queues a
    /// push for each device of their users, so a notification is handed out once whatever the
    /// number of servers. Sending claims due pushes (`queued` → `sending`) and commits before
    /// anything is sent, then records each outcome (migrations/0018_push_deliveries.sql): a push
    /// reaches each device at most once; one that cannot have arrived is retried with backoff.
    package func deliverPending(using sender: any PushSender, limit: Int = 1000, batch: Int = 100) async throws -> DeliveryReport {
        var report = DeliveryReport()
        let now = runner.now()
        while report.notifications < limit {
            let size = min(batch, limit - report.notifications)
            let (notifications, queued) = try await runner.asOperator { connection in
                try await connection.query(
                    """
                    WITH handed AS (
                        UPDATE notifications SET delivered_at = now()
                        WHERE id IN (
                            SELECT id FROM notifications WHERE delivered_at IS NULL
                            ORDER BY created_at, id LIMIT \(size)
                            FOR UPDATE SKIP LOCKED
                        )
                        RETURNING id, user_id
                    ), queued AS (
                        INSERT INTO push_deliveries (notification_id, device_id, next_attempt_at)
                        SELECT h.id, d.id, \(now) FROM handed h JOIN devices d ON d.user_id = h.user_id
                        ON CONFLICT DO NOTHING
                        RETURNING 1
                    )
                    SELECT (SELECT count(*) FROM handed), (SELECT count(*) FROM queued)
                    """
                ).single().decode((Int64, Int64).self)
            }
            report.notifications += Int(notifications)
            report.queued += Int(queued)
            if notifications < size { break }
        }
        report.failed += try await runner.asOperator { connection in
            try await connection.query(
                """
                UPDATE push_deliveries SET state = 'failed', finished_at = now(),
                    error = 'no outcome was recorded: the server sending it stopped'
                WHERE state = 'sending' AND claimed_at < \(now.addingTimeInterval(-Self.abandonedSend))
                """
            ).affectedRows ?? 0
        }
        var claimedSoFar = 0
        while claimedSoFar < limit {
            let (pushes, dropped) = try await claimDuePushes(limit: min(batch, limit - claimedSoFar))
            claimedSoFar += pushes.count + dropped
            report.failed += dropped
            guard !pushes.isEmpty else {
                if dropped == 0 { break }
                continue
            }
            let outcomes = await withTaskGroup(of: (Int, PushOutcome).self) { group in
                var outcomes = [PushOutcome?](repeating: nil, count: pushes.count)
                var next = 0
                while next < min(Self.sendWidth, pushes.count) {
                    let index = next
                    group.addTask { (index, await sender.send(pushes[index])) }
                    next += 1
                }
                while let (index, outcome) = await group.next() {
                    outcomes[index] = outcome
                    if next < pushes.count {
                        let index = next
                        group.addTask { (index, await sender.send(pushes[index])) }
                        next += 1
                    }
                }
                return outcomes.map { $0 ?? .failed(reason: "no outcome") }
            }
            try await record(outcomes, of: pushes, into: &report)
        }
        return report
    }

    /// Claims up to `limit` due pushes: marks them `sending` and returns them with what sending
    /// needs. Pushes whose device moved to another user or whose notification is older than
    /// `pushLifetime` are marked failed instead (the second count).
    private func claimDuePushes(limit: Int) async throws -> ([Push], Int) {
        let now = runner.now()
        let rows = try await runner.asOperator { connection in
            try await connection.query(
                """
                WITH due AS (
                    SELECT notification_id, device_id FROM push_deliveries
                    WHERE state = 'queued' AND next_attempt_at <= \(now)
                    ORDER BY next_attempt_at LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), claimed AS (
                    UPDATE push_deliveries p
                    SET attempts = p.attempts + 1, claimed_at = now(),
                        state = CASE WHEN d.id IS NULL OR n.created_at < \(now.addingTimeInterval(-Self.pushLifetime)) THEN 'failed' ELSE 'sending' END,
                        finished_at = CASE WHEN d.id IS NULL OR n.created_at < \(now.addingTimeInterval(-Self.pushLifetime)) THEN now() END,
                        error = CASE WHEN d.id IS NULL THEN 'the device moved to another user'
                                     WHEN n.created_at < \(now.addingTimeInterval(-Self.pushLifetime)) THEN 'expired before it could be sent' END
                    FROM due
                    JOIN notifications n ON n.id = due.notification_id
                    LEFT JOIN devices d ON d.id = due.device_id AND d.user_id = n.user_id
                    WHERE p.notification_id = due.notification_id AND p.device_id = due.device_id AND p.state = 'queued'
                    RETURNING p.state, p.attempts, p.device_id, d.token, d.environment, d.bundle_id,
                        n.id, n.user_id, n.community_id, n.type::text AS type, n.title, n.body, n.data::text AS data, n.read_at, n.created_at
                )
                -- The badge: unread notifications, chat's counted as unread messages (a push per
                -- message is only for those sent while the user was away).
                SELECT c.*,
                    (SELECT count(*) FROM notifications u WHERE u.user_id = c.user_id AND u.read_at IS NULL AND u.type <> 'chat_message')
                    + (SELECT count(*) FROM conversation_participants p
                       JOIN members m ON m.community_id = p.community_id AND m.user_id = p.user_id AND m.left_at IS NULL
                       JOIN messages x ON x.conversation_id = p.conversation_id AND x.position > p.read_position
                       WHERE p.user_id = c.user_id AND p.left_at IS NULL AND x.sender_id IS DISTINCT FROM p.user_id AND x.deleted_at IS NULL)
                    AS badge,
                    (SELECT u.language FROM users u WHERE u.id = c.user_id) AS language
                FROM claimed c
                """
            )
        }
        var pushes: [Push] = []
        var dropped = 0
        for row in rows {
            let (state, attempt, deviceID, token, environment, bundleID) = try row.decode(
                (String, Int, DeviceID, String?, APNsEnvironment?, String?).self)
            guard state == "sending", let token, let environment, let bundleID else {
                dropped += 1
                continue
            }
            // In the user's language (NotificationText).
            let notification = try AppNotification(columnsNamedIn: row).localized(to: try row.decode("language", as: String?.self))
            pushes.append(
                Push(
                    notification: notification, deviceID: deviceID, token: token, environment: environment, bundleID: bundleID,
                    badge: try row.decode("badge", as: Int.self), attempt: attempt))
        }
        return (pushes, dropped)
    }

    /// Writes how each send ended, removes devices APNs no longer knows, and counts it all.
    private func record(_ outcomes: [PushOutcome], of pushes: [Push], into report: inout DeliveryReport) async throws {
        let now = runner.now()
        var states: [String] = []
        var nextAttempts: [Date] = []
        var apnsIDs: [String] = []
        var errors: [String] = []
        var unregistered: [UUID] = []
        for (push, outcome) in zip(pushes, outcomes) {
            var state = "failed"
            var next = now
            var apnsID = ""
            var error = ""
            switch outcome {
            case .sent(let id):
                state = "sent"
                apnsID = id ?? ""
                report.sent += 1
            case .retry(let reason, let after):
                error = reason
                if push.attempt < Self.pushAttempts {
                    state = "queued"
                    let backoff = after.map { TimeInterval($0.components.seconds) } ?? 60 * pow(2, Double(push.attempt - 1))
                    next = now.addingTimeInterval(min(max(backoff, 1), 3600))
                    report.retrying += 1
                } else {
                    error = "gave up after \(push.attempt) attempts: \(reason)"
                    report.failed += 1
                }
            case .failed(let reason):
                error = reason
                report.failed += 1
            case .unregistered(let reason):
                error = reason
                unregistered.append(push.deviceID.uuid)
                report.failed += 1
            }
            states.append(state)
            nextAttempts.append(next)
            apnsIDs.append(apnsID)
            errors.append(error)
        }
        let notificationIDs = pushes.map(\.notification.id.uuid)
        let deviceIDs = pushes.map(\.deviceID.uuid)
        report.devicesRemoved += try await runner.asOperator { connection in
            try await connection.query(
                """
                UPDATE push_deliveries p
                SET state = o.state, next_attempt_at = o.next_attempt_at, apns_id = NULLIF(o.apns_id, ''), error = NULLIF(o.error, ''),
                    finished_at = CASE WHEN o.state = 'queued' THEN NULL ELSE now() END
                FROM unnest(\(notificationIDs)::uuid[], \(deviceIDs)::uuid[], \(states)::text[], \(nextAttempts)::timestamptz[],
                            \(apnsIDs)::text[], \(errors)::text[])
                    AS o(notification_id, device_id, state, next_attempt_at, apns_id, error)
                WHERE p.notification_id = o.notification_id AND p.device_id = o.device_id AND p.state = 'sending'
                """
            )
            guard !unregistered.isEmpty else { return 0 }
            // A token registered again after the push was claimed is the app's new word on it.
            return try await connection.query(
                """
                DELETE FROM devices d USING push_deliveries p
                WHERE d.id = ANY(\(unregistered)) AND p.device_id = d.id AND p.claimed_at IS NOT NULL AND d.updated_at <= p.claimed_at
                  AND p.notification_id = ANY(\(notificationIDs))
                """
            ).affectedRows ?? 0
        }
    }

    static let logger = Logger(label: "orbit.notifications")
}
