package import Foundation
import OrbitPostgres

extension ChoreService {
    /// How long before an occurrence is due its assignees hear of it.
    static let dueSoonWindow: TimeInterval = 2 * 3600

    /// Operator job (with the other reminders): "due soon" for each occurrence of a live chore
    /// due within the next two hours and not yet done, to each assignee — a user, or a child's
    /// parent — unless they switched `chore_due` off. A dedupe key per assignee and occurrence
    /// makes it once, on any number of servers. Returns how many were created.
    ///
    /// Each series is expanded over the next two hours only (`dueSoon`), not from its first
    /// occurrence, and series that have ended are not read at all (issue 37, item 8).
    package func sendDueReminders() async throws -> Int {
        let now = runner.now()
        let horizon = now.addingTimeInterval(Self.dueSoonWindow)
        return try await runner.asOperator { connection in
            let chores = try await connection.query(
                """
                SELECT \(unescaped: Chore.columns) FROM chores c JOIN communities k ON k.id = c.community_id AND k.deleted_at IS NULL
                WHERE c.archived_at IS NULL AND c.due_at IS NOT NULL
                  AND ((c.recurrence_rule IS NOT NULL AND (c.recurrence_ends_at IS NULL OR c.recurrence_ends_at >= \(now)))
                       OR (c.due_at >= \(now) AND c.due_at < \(horizon)))
                """
            ).map(Chore.init(row:))
            var ids: [UUID] = []
            var occurrences: [Date] = []
            var ended: [(id: UUID, at: Date)] = []
            for var chore in chores {
                // A series set before its end was kept (or whose rule changed): its end, once.
                if chore.recurrenceRule != nil, chore.recurrenceEndsAt == nil,
                    let end = try Self.lastOccurrence(rule: chore.recurrenceRule, start: chore.dueAt, zone: chore.recurrenceTimezone)
                {
                    chore.recurrenceEndsAt = end
                    ended.append((chore.id.uuid, end))
                }
                var periods = 0
                if let due = try Self.dueSoon(of: chore, now: now, periodsVisited: &periods) {
                    ids.append(chore.id.uuid)
                    occurrences.append(due)
                }
            }
            if !ended.isEmpty {
                try await connection.query(
                    """
                    UPDATE chores c SET recurrence_ends_at = e.at FROM unnest(\(ended.map(\.id)), \(ended.map(\.at))) AS e(id, at)
                    WHERE c.id = e.id AND c.recurrence_ends_at IS NULL
                    """)
            }
            guard !ids.isEmpty else { return 0 }
            return try await connection.query(
                NotificationService.enqueue(
                    .choreDue,
                    """
                    SELECT m.user_id, c.community_id, left('Due soon: ' || c.title, 200),
                        coalesce(f.name || ': ', '') || c.points || ' points, due ' || to_char(d.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                        jsonb_build_object('chore_id', c.id::text, 'occurrence_at', to_char(d.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
                        'chore_due:' || c.id::text || ':' || floor(extract(epoch FROM d.at))::bigint::text || ':' || a.holder_id::text,
                        m.notification_prefs
                    FROM unnest(\(ids), \(occurrences)) AS d(chore_id, at)
                    JOIN chores c ON c.id = d.chore_id
                    JOIN chore_assignees a ON a.chore_id = c.id
                    LEFT JOIN family_members f ON f.id = a.family_member_id
                    JOIN members m ON m.community_id = c.community_id AND m.left_at IS NULL
                        AND (m.user_id = a.user_id OR m.user_id IN (
                            SELECT g.user_id FROM family_guardians g WHERE g.family_member_id = a.family_member_id AND g.accepted_at IS NOT NULL
                        ))
                    WHERE NOT EXISTS (
                          SELECT FROM chore_completions x WHERE x.chore_id = c.id AND x.occurrence_at = d.at AND x.status <> 'rejected'
                      )
                    """, deduplicated: true)
            ).affectedRows ?? 0
        }
    }

    /// The occurrence of `chore` due in the next two hours after `now`, if any, expanding its
    /// series over those hours only (from the period before `now`; a COUNT rule through its
    /// known end), and counting the periods that took.
    package static func dueSoon(of chore: Chore, now: Date, periodsVisited: inout Int) throws -> Date? {
        let horizon = now.addingTimeInterval(dueSoonWindow)
        guard let series = try series(of: chore) else {
            return chore.dueAt.flatMap { $0 >= now && $0 < horizon ? $0 : nil }
        }
        return series.occurrences(from: now, to: horizon, limit: 1, periodsVisited: &periodsVisited).first { $0 >= now && $0 < horizon }
    }
}
