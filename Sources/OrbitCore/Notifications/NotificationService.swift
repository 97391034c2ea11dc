import Foundation
import OrbitPostgres

/// Notifications (spec: Notifications): written in the transaction of what caused them, read
/// and marked read by their user, reminders made by a scheduled job, and delivery to devices.
package struct NotificationService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    // MARK: - Creating, in the cause's transaction

    /// Notifies the active members of `community` (except `except`) who have not switched
    /// `type` off in their `notification_prefs`, or only `only` of them. Runs in the caller's
    /// transaction, so a cause that fails leaves no notification behind.
    static func notifyMembers(
        of community: CommunityID, type: NotificationType, title: String, body: String, data: [String: String], except: UserID? = nil,
        only: [UserID]? = nil, on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            notifyMembersStatement(of: community, type: type, title: title, body: body, data: data, except: except, only: only))
    }

    /// `notifyMembers`' statement, to send in a pipeline; with `ifWritten`, it notifies only if
    /// that row exists (the cause, written by an earlier statement of the pipeline unless refused).
    static func notifyMembersStatement(
        of community: CommunityID, type: NotificationType, title: String, body: String, data: [String: String], except: UserID? = nil,
        only: [UserID]? = nil, ifWritten cause: WrittenRow? = nil
    ) throws -> PostgresQuery {
        let json = try PostgresJSON(encoding: data)
        let users = only.map { $0.map(\.uuid) }
        let written: PostgresQuery = cause.map { "AND EXISTS (SELECT FROM \(unescaped: $0.table.rawValue) WHERE id = \($0.id))" } ?? ""
        return enqueue(
            type,
            """
            SELECT m.user_id, \(community)::uuid, \(String(title.prefix(200)))::text, \(body)::text, \(json)::jsonb, NULL::text,
                m.notification_prefs
            FROM members m
            WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.user_id IS DISTINCT FROM \(except)
              AND (\(users)::uuid[] IS NULL OR m.user_id = ANY(\(users)::uuid[]))
              \(written)
            """)
    }

    /// The one statement that writes notifications, whatever their cause: `rows` selects each
    /// one's `(user_id, community_id, title, body, data, dedupe_key, preferences)`, in that order.
    /// `preferences` is the recipient's `members.notification_prefs` in the community, read from
    /// the member row the statement found them by: a member who switched `type` off gets none,
    /// and one who switched it on gets it. NULL where no community preference applies. Where the
    /// community says nothing of `type`, the user's own switch of its group decides
    /// (`users.notification_prefs`, `NotificationPreferences`); on unless switched off. A guest (docs/money.md, "Guests") is nobody to
    /// notify: they have no account to read them.
    /// - Parameters:
    ///   - deduplicated: a row whose `dedupe_key` its user already has is skipped (a reminder is
    ///     sent once, with any number of servers). Only for the jobs, which run as the operator:
    ///     `ON CONFLICT` needs the right to read the rows it may conflict with, and row-level
    ///     security lets `orbit_app` read only its own user's notifications, so a request that
    ///     notifies others would be refused.
    static func enqueue(
        _ type: NotificationType, _ rows: PostgresQuery, deduplicated: Bool = false
    ) -> PostgresQuery {
        let onConflict: PostgresQuery = deduplicated ? "ON CONFLICT (user_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING" : ""
        return """
            INSERT INTO notifications (user_id, community_id, type, title, body, data, dedupe_key)
            SELECT n.user_id, n.community_id, \(type)::notification_type, n.title, n.body, n.data, n.dedupe_key
            FROM (\(rows)) AS n(user_id, community_id, title, body, data, dedupe_key, preferences)
            LEFT JOIN users u ON u.id = n.user_id
            WHERE CASE WHEN jsonb_typeof(n.preferences -> \(type.rawValue)) = 'boolean' THEN (n.preferences -> \(type.rawValue))::boolean
                       ELSE (u.notification_prefs -> \(type.preferenceGroup ?? "")) IS DISTINCT FROM 'false'::jsonb END
              AND NOT coalesce(u.is_guest, false)
            \(onConflict)
            """
    }

    // MARK: - Reading

    /// The order of notifications: newest first.
    static let notificationOrder = Paging.Keyset.timeAndID("notifications")

    /// The acting user's notifications, newest first, `limit` at a time after `cursor`.
    package func list(limit: Int = 50, cursor: String? = nil, unreadOnly: Bool = false, as actor: UserID) async throws
        -> Page<AppNotification>
    {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.notificationOrder.decode(cursor)
        return try await runner.asUser(actor) { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: AppNotification.columns), \(unescaped: Self.notificationOrder.columns),
                    (SELECT u.language FROM users u WHERE u.id = \(actor)) AS reader_language
                FROM notifications
                WHERE user_id = \(actor) AND (NOT \(unreadOnly) OR read_at IS NULL)
                  AND \(try Self.notificationOrder.after(after))
                ORDER BY \(unescaped: Self.notificationOrder.order) LIMIT \(limit + 1)
                """
            )
            // In the reader's language (NotificationText).
            return try Self.notificationOrder.page(rows, limit: limit) { row in
                try AppNotification(row: row).localized(to: try row.decode("reader_language", as: String?.self))
            }
        }
    }

    package func unreadCount(as actor: UserID) async throws -> Int {
        try await runner.asUser(actor) { connection in
            Int(
                try await connection.query("SELECT count(*) AS n FROM notifications WHERE user_id = \(actor) AND read_at IS NULL").single().decode(
                    "n", as: Int64.self))
        }
    }

    /// Marks one notification, or all (`id` nil), read.
    @discardableResult
    package func markRead(_ id: NotificationID? = nil, as actor: UserID) async throws -> Int {
        try await runner.asUser(actor) { connection in
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
}
