import OrbitPostgres

/// A user's notification preferences across their communities (One By Two's `expenses`,
/// `settlements`, `reminders`, `weeklyDigest`; docs/api.md, "Notification preferences"). Each
/// switch covers a group of notification types; a member's switch of a type in one community
/// (`members.notification_prefs`) overrides it there. On unless switched off.
package struct NotificationPreferences: Sendable, Codable, Equatable {
    package var expenses: Bool
    package var settlements: Bool
    package var reminders: Bool
    package var weeklyDigest: Bool

    enum CodingKeys: String, CodingKey {
        case expenses, settlements, reminders, weeklyDigest = "weekly_digest"
    }

    package init(expenses: Bool = true, settlements: Bool = true, reminders: Bool = true, weeklyDigest: Bool = true) {
        self.expenses = expenses
        self.settlements = settlements
        self.reminders = reminders
        self.weeklyDigest = weeklyDigest
    }

    /// The stored switches (`users.notification_prefs`); a key not stored is on.
    init(stored: [String: Bool]) {
        self.init(
            expenses: stored["expenses"] ?? true, settlements: stored["settlements"] ?? true, reminders: stored["reminders"] ?? true,
            weeklyDigest: stored["weekly_digest"] ?? true)
    }
}

extension NotificationType {
    /// The user's switch that covers this type (`NotificationPreferences`' key), if any.
    var preferenceGroup: String? {
        switch self {
        case .expenseAdded, .expenseEdited, .expenseDeleted: "expenses"
        case .settlementRecorded: "settlements"
        case .nudge, .debtReminder: "reminders"
        case .weeklyDigest: "weekly_digest"
        default: nil
        }
    }
}

extension UserService {
    /// The acting user's notification preferences.
    package func notificationPreferences(as actor: UserID) async throws -> NotificationPreferences {
        try await runner.asUser(actor) { connection in
            guard let row = try await connection.query("SELECT notification_prefs FROM users WHERE id = \(actor) AND deleted_at IS NULL").first
            else { throw ServiceError.notFound("User \(actor)") }
            return NotificationPreferences(stored: try row.decode("notification_prefs", as: PostgresJSON.self).decode([String: Bool].self))
        }
    }

    /// Sets some of the acting user's switches; nil leaves one as it is. Returns them all.
    package func updateNotificationPreferences(
        expenses: Bool? = nil, settlements: Bool? = nil, reminders: Bool? = nil, weeklyDigest: Bool? = nil, as actor: UserID
    ) async throws -> NotificationPreferences {
        var changes: [String: Bool] = [:]
        changes["expenses"] = expenses
        changes["settlements"] = settlements
        changes["reminders"] = reminders
        changes["weekly_digest"] = weeklyDigest
        let patch = try PostgresJSON(encoding: changes)
        return try await runner.asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    """
                    UPDATE users SET notification_prefs = notification_prefs || \(patch)::jsonb
                    WHERE id = \(actor) AND deleted_at IS NULL RETURNING notification_prefs
                    """
                ).first
            else { throw ServiceError.notFound("User \(actor)") }
            return NotificationPreferences(stored: try row.decode("notification_prefs", as: PostgresJSON.self).decode([String: Bool].self))
        }
    }
}
