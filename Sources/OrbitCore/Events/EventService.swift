package import Foundation
import OrbitPostgres

/// How much of a recurring event a deletion takes.
package enum EventDeletionScope: String, Sendable, CaseIterable {
    /// The event, or the whole series with all its instances.
    case all
    /// One occurrence of a series (it is cancelled).
    case occurrence
    /// An occurrence and every later one: the series ends before it.
    case following
}

/// The calendar (spec: Events, RSVPs): one-off events, recurring series expanded in the
/// community's time zone, single occurrences changed or cancelled, and answers.
package struct EventService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    // MARK: - Creating and reading

    /// Creates an event in a community: admins always, members when `allowMemberEvents` is not
    /// false. With a recurrence rule it is a series, expanded in the community's time zone.
    package func create(in community: CommunityID, _ draft: EventDraft, as actor: UserID) async throws -> Event {
        guard let rawTitle = draft.title, let startsAt = draft.startsAt else {
            throw ServiceError.invalidInput(field: draft.title == nil ? "title" : "starts_at", reason: "is required")
        }
        try draft.validate()
        let rule = try draft.recurrenceRule.map(RecurrenceRule.parsed)
        let title = try Validate.text(rawTitle, field: "title", limit: 200)
        let id = EventID.new(in: .events)
        let notification = try NotificationService.notifyMembersStatement(
            of: community, type: .rsvpRequest, title: "New event: \(title)", body: "Starts \(startsAt.formatted(.iso8601)). Will you come?",
            data: ["event_id": id.description, "community_id": community.description], except: actor, ifWritten: WrittenRow(.events, id.uuid))
        return try await runner.asUser(actor) { connection in
            // One round trip: the event, written only if the actor may create one here (members
            // of the community; admins always, others unless `allowMemberEvents` is false), and
            // the notifications asking everyone else to answer. A series keeps the community's
            // time zone, in which it is expanded.
            let results = try await connection.pipeline([
                """
                INSERT INTO events (id, community_id, created_by, title, description, starts_at, ends_at, all_day, location_name,
                    location_lat, location_lng, location_address, category, recurrence_rule, recurrence_timezone, attachments, rsvp_deadline)
                SELECT \(id), c.id, \(actor), \(title), \(draft.description), \(startsAt), \(draft.endsAt), \(draft.allDay ?? false),
                    \(draft.locationName), \(draft.locationLat), \(draft.locationLng), \(draft.locationAddress),
                    \(draft.category ?? .other)::event_category, \(rule?.description),
                    CASE WHEN \(rule?.description)::text IS NULL THEN NULL ELSE coalesce(c.settings ->> 'timezone', 'UTC') END,
                    \(try PostgresJSON(encoding: draft.attachments ?? [])), \(draft.rsvpDeadline)
                FROM communities c
                JOIN members m ON m.community_id = c.id AND m.user_id = \(actor) AND m.left_at IS NULL
                WHERE c.id = \(community) AND (m.role = 'admin' OR (c.settings -> 'allowMemberEvents') IS DISTINCT FROM 'false'::jsonb)
                RETURNING \(unescaped: Event.columns)
                """,
                notification,
            ])
            guard let row = results[0].first else {
                // Nothing was written: the checks the statement holds say why.
                let role = try await runner.requireMember(actor, of: community, on: connection)
                if role != .admin, try await CommunityService.community(community, on: connection).settings.allowMemberEvents == false {
                    throw ServiceError.forbidden(rule: "members cannot create events in this community (settings.allowMemberEvents is false)")
                }
                throw ServiceError.changedMeanwhile
            }
            return try Event(row: row)
        }
    }

    /// An event, a series or an instance, by id.
    package func get(_ id: EventID, as actor: UserID) async throws -> Event {
        try await runner.asUser(actor) { try await Self.event(id, on: $0) }
    }

    /// Operator: any event.
    package func getAsOperator(_ id: EventID) async throws -> Event {
        try await runner.asOperator { try await Self.event(id, on: $0) }
    }

    static func event(_ id: EventID, on connection: PostgresConnection) async throws -> Event {
        guard let row = try await connection.query("SELECT \(unescaped: Event.columns) FROM events WHERE id = \(id) AND deleted_at IS NULL").first
        else { throw ServiceError.notFound("Event \(id)") }
        return try Event(row: row)
    }

    /// An event and the acting user's active role in its community (nil: not a member), in one statement.
    static func eventAndRole(_ id: EventID, _ actor: UserID, on connection: PostgresConnection) async throws -> (Event, MemberRole?) {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: Event.columns), \(RequestRunner.roleColumn(of: actor, community: "events.community_id"))
                FROM events WHERE id = \(id) AND deleted_at IS NULL
                """
            ).first
        else { throw ServiceError.notFound("Event \(id)") }
        return (try Event(row: row), try RequestRunner.role(in: row))
    }

    /// Members change their own events; admins any event (spec, "Permission Matrix").
    func requireEditor(of event: Event, _ actor: UserID, on connection: PostgresConnection) async throws {
        let role = try await runner.requireMember(actor, of: event.communityID, on: connection)
        guard role == .admin || event.createdBy == actor else {
            throw ServiceError.forbidden(rule: "members can edit and delete only their own events")
        }
    }

    // MARK: - Changing and deleting

    /// Changes an event. For one occurrence of a series (`occurrence`), that occurrence becomes
    /// an instance of its own and leaves the series. For a series that has already begun, the
    /// change applies from the next occurrence on: the series is split there, and past
    /// occurrences keep what they were.
    package func update(_ id: EventID, occurrence: Date? = nil, _ draft: EventDraft, as actor: UserID) async throws -> Event {
        try draft.validate()
        let rule = try draft.recurrenceRule.map(RecurrenceRule.parsed)
        return try await runner.asUser(actor) { connection in
            let original = try await Self.event(id, on: connection)
            try await requireEditor(of: original, actor, on: connection)
            if occurrence != nil || original.recurrenceRule == nil {
                guard rule == nil else {
                    throw ServiceError.conflict(field: "recurrence_rule", reason: "can only be changed on a whole series")
                }
                let row = try await Self.target(id, occurrence: occurrence, on: connection)
                return try await apply(draft, rule: nil, to: row.id, on: connection)
            }
            let now = runner.now()
            guard original.startsAt < now, let next = try Self.occurrences(of: original, from: now, to: nil, limit: 1).first else {
                return try await apply(draft, rule: rule, to: id, on: connection)
            }
            // Split: the old series ends before `next`; a new one starts there with the change,
            // created by whoever changed it (row-level security lets one create only one's own).
            var remaining = try RecurrenceRule.parsed(original.recurrenceRule ?? "")
            if let count = remaining.count {
                let past = try Self.occurrences(of: original, from: nil, to: next, limit: count).count
                remaining.count = max(count - past, 1)
            }
            try await endSeries(original, before: next, on: connection)
            let duration = original.endsAt.map { $0.timeIntervalSince(original.startsAt) }
            let deadlineOffset = original.rsvpDeadline.map { $0.timeIntervalSince(original.startsAt) }
            let newRule = rule ?? remaining
            let newID: EventID = try await connection.query(
                """
                INSERT INTO events (community_id, created_by, title, description, starts_at, ends_at, all_day, location_name,
                    location_lat, location_lng, location_address, category, recurrence_rule, recurrence_timezone, attachments, rsvp_deadline)
                SELECT community_id, \(actor), title, description, \(next), \(duration.map { next.addingTimeInterval($0) }), all_day,
                    location_name, location_lat, location_lng, location_address, category, \(newRule.description), recurrence_timezone,
                    attachments, \(deadlineOffset.map { next.addingTimeInterval($0) })
                FROM events WHERE id = \(id)
                RETURNING id
                """
            ).single().decode("id")
            // Instances from `next` on belong to the new series (they keep their own changes).
            try await connection.query(
                "UPDATE events SET recurrence_parent_id = \(newID) WHERE recurrence_parent_id = \(id) AND original_starts_at >= \(next)"
            )
            return try await apply(draft, rule: nil, to: newID, on: connection)
        }
    }

    private func apply(_ draft: EventDraft, rule: RecurrenceRule?, to id: EventID, on connection: PostgresConnection) async throws -> Event {
        let attachments = try draft.attachments.map { try PostgresJSON(encoding: $0) }
        let row = try await connection.query(
            """
            UPDATE events SET title = coalesce(\(draft.title), title), description = coalesce(\(draft.description), description),
                starts_at = coalesce(\(draft.startsAt), starts_at), ends_at = coalesce(\(draft.endsAt), ends_at),
                all_day = coalesce(\(draft.allDay), all_day), location_name = coalesce(\(draft.locationName), location_name),
                location_lat = coalesce(\(draft.locationLat), location_lat), location_lng = coalesce(\(draft.locationLng), location_lng),
                location_address = coalesce(\(draft.locationAddress), location_address),
                category = coalesce(\(draft.category)::event_category, category), recurrence_rule = coalesce(\(rule?.description), recurrence_rule),
                attachments = coalesce(\(attachments), attachments), rsvp_deadline = coalesce(\(draft.rsvpDeadline), rsvp_deadline)
            WHERE id = \(id)
            RETURNING \(unescaped: Event.columns)
            """
        ).single()
        return try Event(row: row)
    }

    /// Ends a series just before `occurrence`: UNTIL one second earlier (COUNT dropped), and its
    /// instances from there on are removed with it.
    private func endSeries(_ series: Event, before occurrence: Date, on connection: PostgresConnection) async throws {
        var rule = try RecurrenceRule.parsed(series.recurrenceRule ?? "")
        rule.count = nil
        rule.until = .instant(occurrence.addingTimeInterval(-1))
        try await connection.query("UPDATE events SET recurrence_rule = \(rule.description) WHERE id = \(series.id)")
    }

    /// Deletes (soft) an event; for a series, all of it, one occurrence, or an occurrence and
    /// everything after it, as a calendar app does.
    package func delete(_ id: EventID, occurrence: Date? = nil, scope: EventDeletionScope = .all, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let event = try await Self.event(id, on: connection)
            try await requireEditor(of: event, actor, on: connection)
            switch (event.recurrenceRule, occurrence, scope) {
            case (nil, _, _), (_?, nil, .all):
                try await connection.query("UPDATE events SET deleted_at = now() WHERE id = \(id)")
                if event.recurrenceRule != nil {
                    try await connection.query("UPDATE events SET deleted_at = now() WHERE recurrence_parent_id = \(id) AND deleted_at IS NULL")
                }
            case (_?, let occurrence?, .occurrence):
                let instance = try await Self.materialize(event, occurrence: occurrence, on: connection)
                try await connection.query("UPDATE events SET deleted_at = now() WHERE id = \(instance)")
            case (_?, let occurrence?, .following):
                guard try Self.occurrences(of: event, from: occurrence, to: occurrence.addingTimeInterval(1), limit: 1).first == occurrence else {
                    throw ServiceError.notFound("Occurrence \(occurrence.formatted(.iso8601)) of event \(id)")
                }
                if occurrence <= event.startsAt {
                    try await connection.query("UPDATE events SET deleted_at = now() WHERE id = \(id) OR recurrence_parent_id = \(id)")
                } else {
                    try await endSeries(event, before: occurrence, on: connection)
                    try await connection.query(
                        "UPDATE events SET deleted_at = now() WHERE recurrence_parent_id = \(id) AND original_starts_at >= \(occurrence) AND deleted_at IS NULL"
                    )
                }
            case (_?, nil, _):
                throw ServiceError.conflict(field: "occurrence", reason: "is required to delete one occurrence or the following ones")
            case (_?, _?, .all):
                throw ServiceError.conflict(field: "occurrence", reason: "cannot be combined with deleting the whole series")
            }
        }
    }
}
