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
        guard let cause else {
            return """
                INSERT INTO notifications (user_id, community_id, type, title, body, data)
                SELECT m.user_id, \(community), \(type)::notification_type, \(String(title.prefix(200))), \(body), \(json)
                FROM members m
                WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.user_id IS DISTINCT FROM \(except)
                  AND (\(users)::uuid[] IS NULL OR m.user_id = ANY(\(users)::uuid[]))
                  AND (m.notification_prefs -> \(type.rawValue)) IS DISTINCT FROM 'false'::jsonb
                """
        }
        return """
            INSERT INTO notifications (user_id, community_id, type, title, body, data)
            SELECT m.user_id, \(community), \(type)::notification_type, \(String(title.prefix(200))), \(body), \(json)
            FROM members m
            WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.user_id IS DISTINCT FROM \(except)
              AND (\(users)::uuid[] IS NULL OR m.user_id = ANY(\(users)::uuid[]))
              AND (m.notification_prefs -> \(type.rawValue)) IS DISTINCT FROM 'false'::jsonb
              AND EXISTS (SELECT FROM \(unescaped: cause.table.rawValue) WHERE id = \(cause.id))
            """
    }

    // MARK: - Reading

    /// The acting user's notifications, newest first, `limit` at a time after `cursor`.
    package func list(limit: Int = 50, cursor: String? = nil, unreadOnly: Bool = false, as actor: UserID) async throws
        -> Page<AppNotification>
    {
        try Validate.limit(limit, in: 1...200)
        let after = try PageCursor.decode(cursor, list: "notifications", parts: 2)
        return try await runner.asUser(actor) { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: AppNotification.columns), \(unescaped: Paging.micros("created_at")) AS cursor_us FROM notifications
                WHERE user_id = \(actor) AND (NOT \(unreadOnly) OR read_at IS NULL)
                  AND \(try Paging.after(after))
                ORDER BY created_at DESC, id DESC LIMIT \(limit + 1)
                """
            )
            return try Paging.page(
                rows, limit: limit, list: "notifications", item: AppNotification.init(row:),
                key: Paging.timeAndID)
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
