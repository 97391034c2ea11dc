package import Foundation
import OrbitPostgres

extension ChoreService {
    /// What an admin changes of a chore; nil leaves a field as it is, `.some(nil)` clears an
    /// optional one.
    package struct ChoreChange: Sendable {
        package var title: String?
        package var description: String??
        package var points: Int?
        package var difficulty: ChoreDifficulty?
        package var category: String??
        /// A one-off chore's due time (nil clears it), or a recurring chore's first occurrence.
        package var dueAt: Date??
        /// A new RRULE, or `.some(nil)` to make the chore one-off.
        package var recurrenceRule: String??
        package var requiresApproval: Bool?
        /// Whether marking it done needs a photo from now on.
        package var requiresPhoto: Bool?
        package var completionWindowDays: Int?
        /// The people who do it, all of them (user or family member ids).
        package var assignees: [UUID]?
        /// A recurring chore's last day, in the community's zone: its rule ends there (`UNTIL`).
        package var endsOn: CivilDate?

        package init(
            title: String? = nil, description: String?? = nil, points: Int? = nil, difficulty: ChoreDifficulty? = nil, category: String?? = nil,
            dueAt: Date?? = nil, recurrenceRule: String?? = nil, requiresApproval: Bool? = nil, completionWindowDays: Int? = nil,
            assignees: [UUID]? = nil, endsOn: CivilDate? = nil, requiresPhoto: Bool? = nil
        ) {
            self.requiresPhoto = requiresPhoto
            self.title = title
            self.description = description
            self.points = points
            self.difficulty = difficulty
            self.category = category
            self.dueAt = dueAt
            self.recurrenceRule = recurrenceRule
            self.requiresApproval = requiresApproval
            self.completionWindowDays = completionWindowDays
            self.assignees = assignees
            self.endsOn = endsOn
        }
    }

    /// Changes a chore (admins; docs/chores.md, "Chores change"). Points already earned stay as
    /// they were credited: a new `points` counts for completions approved from now on. New
    /// assignees replace the old ones; their completions stay.
    package func update(_ id: ChoreID, _ change: ChoreChange, as actor: UserID) async throws -> Chore {
        let title = try change.title.map { try Validate.text($0, field: "title", limit: 200) }
        let description = try change.description.map { try $0.map { try Validate.text($0, field: "description", limit: 2000, multiline: true) } }
        let category = try change.category.map { try $0.map { try Validate.text($0, field: "category", limit: 50) } }
        if let points = change.points, !(1...1000).contains(points) {
            throw ServiceError.invalidInput(field: "points", reason: "must be from 1 to 1000")
        }
        if let assignees = change.assignees, !(1...50).contains(Set(assignees).count) {
            throw ServiceError.invalidInput(field: "assignees", reason: "must name from 1 to 50 people (user or family member ids)")
        }
        if let days = change.completionWindowDays, !(0...31).contains(days) {
            throw ServiceError.invalidInput(field: "completion_window_days", reason: "must be from 0 (today only) to 31")
        }
        if let rule = change.recurrenceRule ?? nil { _ = try RecurrenceRule.parsed(rule) }
        return try await runner.asUser(actor) { connection in
            guard let current = try await chore(id, on: connection) else { throw ServiceError.notFound("Chore \(id)") }
            let role = try await runner.requireMember(actor, of: current.communityID, on: connection)
            try await requireMaySet(for: current.assignees, in: current.communityID, as: actor, role: role, on: connection)
            var newAssignees: [Holder]?
            if let ids = change.assignees {
                newAssignees = try await resolve(ids, on: connection)
                try await requireMaySet(for: newAssignees ?? [], in: current.communityID, as: actor, role: role, on: connection)
            }
            let dueAt = change.dueAt ?? current.dueAt
            var rule = change.recurrenceRule ?? current.recurrenceRule
            if let endsOn = change.endsOn {
                guard let text = rule else {
                    throw ServiceError.conflict(field: "ends_on", reason: "is for a recurring chore; this one happens once")
                }
                var parsed = try RecurrenceRule.parsed(text)
                parsed.count = nil
                parsed.until = .date(endsOn)
                rule = parsed.description
            }
            if rule != nil, dueAt == nil {
                throw ServiceError.conflict(field: "due_at", reason: "is required with a recurrence rule (the first occurrence)")
            }
            let zone =
                rule == nil
                ? nil
                : (current.recurrenceRule == nil || current.recurrenceTimezone == nil
                    ? try await runner.timeZone(of: current.communityID, on: connection).identifier : current.recurrenceTimezone)
            let endsAt = try Self.lastOccurrence(rule: rule, start: dueAt, zone: zone)
            try await connection.query(
                """
                UPDATE chores SET title = \(title ?? current.title), description = \(description ?? current.description),
                    points = \(Int32(change.points ?? current.points)), difficulty = \((change.difficulty ?? current.difficulty).rawValue),
                    category = \(category ?? current.category), due_at = \(dueAt), recurrence_rule = \(rule), recurrence_timezone = \(zone),
                    requires_approval = \(change.requiresApproval ?? current.requiresApproval),
                    requires_photo = \(change.requiresPhoto ?? current.requiresPhoto),
                    completion_window_days = \(Int16(change.completionWindowDays ?? current.completionWindowDays)), recurrence_ends_at = \(endsAt)
                WHERE id = \(id)
                """)
            if let holders = newAssignees {
                // The new ones first, then the old ones go: a parent's chore has an assignee, their
                // child, at every step (orbit.parent_chore_ids()).
                for holder in holders where !current.assignees.contains(holder) {
                    try await connection.query(
                        "INSERT INTO chore_assignees (chore_id, user_id, family_member_id) VALUES (\(id), \(holder.userID), \(holder.familyMemberID))"
                    )
                }
                try await connection.query(
                    """
                    DELETE FROM chore_assignees a WHERE a.chore_id = \(id)
                      AND NOT (a.holder_id = ANY(\(holders.map(\.id))))
                    """)
            }
            try await runner.audit(
                "chore.updated", by: actor, community: current.communityID, target: ("chore", id.uuid), metadata: ["title": title ?? current.title],
                on: connection)
            guard let chore = try await chore(id, on: connection) else { throw ServiceError.changedMeanwhile }
            return chore
        }
    }

    /// Archives a chore (admins): off the lists and the reminders, nobody marks it done; its
    /// completions and points stay. `archived: false` brings it back.
    package func setArchived(_ id: ChoreID, _ archived: Bool, as actor: UserID) async throws -> Chore {
        try await runner.asUser(actor) { connection in
            guard let current = try await chore(id, on: connection) else { throw ServiceError.notFound("Chore \(id)") }
            try await requireMaySet(for: current.assignees, in: current.communityID, as: actor, on: connection)
            try await connection.query(
                """
                UPDATE chores SET archived_at = CASE WHEN \(archived) THEN coalesce(archived_at, now()) END WHERE id = \(id)
                """)
            try await runner.audit(
                archived ? "chore.archived" : "chore.unarchived", by: actor, community: current.communityID, target: ("chore", id.uuid),
                on: connection)
            guard let chore = try await chore(id, on: connection) else { throw ServiceError.changedMeanwhile }
            return chore
        }
    }

    /// Deletes a chore nobody has done yet (admins); one with a completion is archived instead
    /// (409 saying so), so that its points keep their cause.
    package func delete(_ id: ChoreID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            guard let current = try await chore(id, on: connection) else { throw ServiceError.notFound("Chore \(id)") }
            try await requireMaySet(for: current.assignees, in: current.communityID, as: actor, on: connection)
            let deleted =
                try await connection.query(
                    "DELETE FROM chores c WHERE c.id = \(id) AND NOT EXISTS (SELECT FROM chore_completions d WHERE d.chore_id = c.id)"
                ).affectedRows ?? 0
            guard deleted == 1 else {
                throw ServiceError.conflict(field: "chore", reason: "has completions: archive it instead (its points keep their cause)")
            }
            try await runner.audit(
                "chore.deleted", by: actor, community: current.communityID, target: ("chore", id.uuid), metadata: ["title": current.title],
                on: connection)
        }
    }
}
