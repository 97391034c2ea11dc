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
        let json = try PostgresJSON(encoding: data)
        try await connection.query(
            """
            INSERT INTO notifications (user_id, community_id, type, title, body, data)
            SELECT m.user_id, \(community), \(type)::notification_type, \(String(title.prefix(200))), \(body), \(json)
            FROM members m
            WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.user_id IS DISTINCT FROM \(except)
              AND (\(only.map { $0.map(\.uuid) })::uuid[] IS NULL OR m.user_id = ANY(\(only.map { $0.map(\.uuid) })::uuid[]))
              AND (m.notification_prefs -> \(type.rawValue)) IS DISTINCT FROM 'false'::jsonb
            """
        )
    }

    // MARK: - Reading

    /// The acting user's notifications, newest first, `limit` at a time before `before`.
    package func list(limit: Int = 50, before: NotificationID? = nil, unreadOnly: Bool = false, as actor: UserID) async throws
        -> [AppNotification]
    {
        try Validate.limit(limit, in: 1...200)
        return try await runner.asUser(actor) { connection in
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
