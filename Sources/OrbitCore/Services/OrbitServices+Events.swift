public import Foundation
import OrbitPostgres

/// How much of a recurring event a deletion takes.
public enum EventDeletionScope: String, Sendable, CaseIterable {
    /// The event, or the whole series with all its instances.
    case all
    /// One occurrence of a series (it is cancelled).
    case occurrence
    /// An occurrence and every later one: the series ends before it.
    case following
}

extension OrbitServices {
    // MARK: - Creating and reading

    /// Creates an event in a community: admins always, members when `allowMemberEvents` is not
    /// false. With a recurrence rule it is a series, expanded in the community's time zone.
    public func createEvent(in community: CommunityID, _ draft: EventDraft, as actor: UserID) async throws -> Event {
        guard let title = draft.title, let startsAt = draft.startsAt else {
            throw ServiceError.invalidInput(field: draft.title == nil ? "title" : "starts_at", reason: "is required")
        }
        try draft.validate()
        let rule = try draft.recurrenceRule.map(Self.parseRule)
        return try await asUser(actor) { connection in
            let role = try await requireMember(actor, of: community, on: connection)
            let settings = try await self.community(community, on: connection).settings
            if role != .admin && settings.allowMemberEvents == false {
                throw ServiceError.forbidden(rule: "members cannot create events in this community (settings.allowMemberEvents is false)")
            }
            let zone = rule == nil ? nil : (settings.timezone ?? "UTC")
            let row = try await connection.query(
                """
                INSERT INTO events (community_id, created_by, title, description, starts_at, ends_at, all_day, location_name,
                    location_lat, location_lng, location_address, category, recurrence_rule, recurrence_timezone, attachments, rsvp_deadline)
                VALUES (\(community), \(actor), \(try Validate.text(title, field: "title", limit: 200)), \(draft.description), \(startsAt),
                    \(draft.endsAt), \(draft.allDay ?? false), \(draft.locationName), \(draft.locationLat), \(draft.locationLng),
                    \(draft.locationAddress), \(draft.category ?? "other")::event_category, \(rule?.description), \(zone),
                    \(try PostgresJSON(encoding: draft.attachments ?? [])), \(draft.rsvpDeadline))
                RETURNING \(unescaped: Event.columns)
                """
            ).single()
            let event = try Event(row: row)
            try await notifyMembers(
                of: community, type: "rsvp_request", title: "New event: \(event.title)",
                body: "Starts \(event.startsAt.formatted(.iso8601)). Will you come?",
                data: ["event_id": event.id.description, "community_id": community.description], except: actor, on: connection
            )
            return event
        }
    }

    /// An event, a series or an instance, by id.
    public func event(_ id: EventID, as actor: UserID) async throws -> Event {
        try await asUser(actor) { try await event(id, on: $0) }
    }

    /// Operator: any event.
    public func eventAsOperator(_ id: EventID) async throws -> Event {
        try await asOperator { try await event(id, on: $0) }
    }

    func event(_ id: EventID, on connection: PostgresConnection) async throws -> Event {
        guard let row = try await connection.query("SELECT \(unescaped: Event.columns) FROM events WHERE id = \(id) AND deleted_at IS NULL").first
        else { throw ServiceError.notFound("Event \(id)") }
        return try Event(row: row)
    }

    /// A community's calendar from `from` (inclusive) to `to` (exclusive): one-off events,
    /// materialized instances, and the occurrences of series computed on the fly (a cancelled or
    /// modified occurrence is left to its instance row). At most 92 days and `limit` entries.
    public func events(in community: CommunityID, from: Date, to: Date, limit: Int = 2000, as actor: UserID?) async throws -> [EventOccurrence] {
        guard from < to, to.timeIntervalSince(from) <= 92 * 86_400 else {
            throw ServiceError.invalidInput(field: "to", reason: "must be after from, at most 92 days later")
        }
        let body = { (connection: PostgresConnection) async throws -> [EventOccurrence] in
            if let actor { try await self.requireMember(actor, of: community, on: connection) }
            return try await self.calendar(community, from: from, to: to, limit: limit, on: connection)
        }
        if let actor { return try await asUser(actor, body) }
        return try await asOperator(nil, body)
    }

    func calendar(_ community: CommunityID, from: Date, to: Date, limit: Int, on connection: PostgresConnection) async throws -> [EventOccurrence] {
        let single = try await connection.query(
            """
            SELECT \(unescaped: Event.columns) FROM events
            WHERE community_id = \(community) AND deleted_at IS NULL AND recurrence_rule IS NULL
              AND starts_at >= \(from) AND starts_at < \(to)
            ORDER BY starts_at, id LIMIT \(limit)
            """
        ).map(Event.init(row:))
        let series = try await connection.query(
            """
            SELECT \(unescaped: Event.columns) FROM events
            WHERE community_id = \(community) AND recurrence_rule IS NOT NULL AND deleted_at IS NULL AND starts_at < \(to)
            """
        ).map(Event.init(row:))
        struct OccurrenceKey: Hashable {
            var series: EventID
            var start: Date
        }
        var taken = Set<OccurrenceKey>()
        if !series.isEmpty {
            // Occurrences with a row of their own (modified, answered or cancelled) are not computed.
            let rows = try await connection.query(
                """
                SELECT recurrence_parent_id, original_starts_at FROM events
                WHERE recurrence_parent_id = ANY(\(series.map(\.id.uuid))) AND original_starts_at >= \(from) AND original_starts_at < \(to)
                """
            )
            for row in rows {
                let (parent, original) = try row.decode((EventID, Date).self)
                taken.insert(OccurrenceKey(series: parent, start: original))
            }
        }
        var entries = single.map { event in
            EventOccurrence(
                eventID: event.id, seriesID: event.recurrenceParentID, occurrenceStartsAt: event.originalStartsAt, startsAt: event.startsAt,
                endsAt: event.endsAt, title: event.title, category: event.category, allDay: event.allDay, locationName: event.locationName,
                isComputed: false
            )
        }
        for parent in series {
            let duration = parent.endsAt.map { $0.timeIntervalSince(parent.startsAt) }
            for start in try Self.occurrences(of: parent, from: from, to: to, limit: limit)
            where !taken.contains(OccurrenceKey(series: parent.id, start: start)) {
                entries.append(
                    EventOccurrence(
                        eventID: parent.id, seriesID: parent.id, occurrenceStartsAt: start, startsAt: start,
                        endsAt: duration.map { start.addingTimeInterval($0) }, title: parent.title, category: parent.category,
                        allDay: parent.allDay, locationName: parent.locationName, isComputed: true
                    )
                )
            }
        }
        entries.sort { $0.startsAt != $1.startsAt ? $0.startsAt < $1.startsAt : $0.eventID < $1.eventID }
        return Array(entries.prefix(limit))
    }

    /// The occurrences of a series in [from, to).
    static func occurrences(of series: Event, from: Date?, to: Date?, limit: Int) throws -> [Date] {
        guard let text = series.recurrenceRule else { return [] }
        let rule = try parseRule(text)
        let zone = series.recurrenceTimezone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        let wall = Int(series.startsAt.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: series.startsAt)
        let recurring = RecurringSeries(rule: rule, start: LocalDateTime(secondsAsIfUTC: wall), timeZone: zone)
        let found = recurring.occurrences(from: from, to: to, limit: limit)
        guard let to else { return found }
        return found.filter { $0 < to }
    }

    static func parseRule(_ text: String) throws -> RecurrenceRule {
        do {
            return try RecurrenceRule(parsing: text)
        } catch let error as RecurrenceError {
            throw ServiceError.invalidInput(field: "recurrence_rule.\(error.part)", reason: error.reason)
        }
    }

    /// The instance row of `occurrence` of `series`, created if needed.
    func materialize(_ series: Event, occurrence: Date, on connection: PostgresConnection) async throws -> EventID {
        let matches = try Self.occurrences(of: series, from: occurrence, to: occurrence.addingTimeInterval(1), limit: 1)
        guard matches.first == occurrence else {
            throw ServiceError.notFound("Occurrence \(occurrence.formatted(.iso8601)) of event \(series.id)")
        }
        return try await connection.query("SELECT orbit.materialize_occurrence(\(series.id), \(occurrence)) AS id").single().decode("id")
    }

    /// The row an action on (event, occurrence) applies to.
    func target(_ id: EventID, occurrence: Date?, on connection: PostgresConnection) async throws -> Event {
        let event = try await event(id, on: connection)
        guard let occurrence else { return event }
        guard event.recurrenceRule != nil else {
            throw ServiceError.invalidInput(field: "occurrence", reason: "applies to recurring events only")
        }
        return try await self.event(try await materialize(event, occurrence: occurrence, on: connection), on: connection)
    }

    /// Members change their own events; admins any event (spec, "Permission Matrix").
    func requireEditor(of event: Event, _ actor: UserID, on connection: PostgresConnection) async throws {
        let role = try await requireMember(actor, of: event.communityID, on: connection)
        guard role == .admin || event.createdBy == actor else {
            throw ServiceError.forbidden(rule: "members can edit and delete only their own events")
        }
    }

    // MARK: - Changing and deleting

    /// Changes an event. For one occurrence of a series (`occurrence`), that occurrence becomes
    /// an instance of its own and leaves the series. For a series that has already begun, the
    /// change applies from the next occurrence on: the series is split there, and past
    /// occurrences keep what they were.
    public func updateEvent(_ id: EventID, occurrence: Date? = nil, _ draft: EventDraft, as actor: UserID) async throws -> Event {
        try draft.validate()
        let rule = try draft.recurrenceRule.map(Self.parseRule)
        return try await asUser(actor) { connection in
            let original = try await event(id, on: connection)
            try await requireEditor(of: original, actor, on: connection)
            if occurrence != nil || original.recurrenceRule == nil {
                guard rule == nil else {
                    throw ServiceError.invalidInput(field: "recurrence_rule", reason: "can only be changed on a whole series")
                }
                let row = try await target(id, occurrence: occurrence, on: connection)
                return try await apply(draft, rule: nil, to: row.id, on: connection)
            }
            let now = Date()
            guard original.startsAt < now, let next = try Self.occurrences(of: original, from: now, to: nil, limit: 1).first else {
                return try await apply(draft, rule: rule, to: id, on: connection)
            }
            // Split: the old series ends before `next`; a new one starts there with the change,
            // created by whoever changed it (row-level security lets one create only one's own).
            var remaining = try Self.parseRule(original.recurrenceRule ?? "")
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
        var rule = try Self.parseRule(series.recurrenceRule ?? "")
        rule.count = nil
        rule.until = .instant(occurrence.addingTimeInterval(-1))
        try await connection.query("UPDATE events SET recurrence_rule = \(rule.description) WHERE id = \(series.id)")
    }

    /// Deletes (soft) an event; for a series, all of it, one occurrence, or an occurrence and
    /// everything after it, as a calendar app does.
    public func deleteEvent(_ id: EventID, occurrence: Date? = nil, scope: EventDeletionScope = .all, as actor: UserID) async throws {
        try await asUser(actor) { connection in
            let event = try await event(id, on: connection)
            try await requireEditor(of: event, actor, on: connection)
            switch (event.recurrenceRule, occurrence, scope) {
            case (nil, _, _), (_?, nil, .all):
                try await connection.query("UPDATE events SET deleted_at = now() WHERE id = \(id)")
                if event.recurrenceRule != nil {
                    try await connection.query("UPDATE events SET deleted_at = now() WHERE recurrence_parent_id = \(id) AND deleted_at IS NULL")
                }
            case (_?, let occurrence?, .occurrence):
                let instance = try await materialize(event, occurrence: occurrence, on: connection)
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
                throw ServiceError.invalidInput(field: "occurrence", reason: "is required to delete one occurrence or the following ones")
            case (_?, _?, .all):
                throw ServiceError.invalidInput(field: "occurrence", reason: "cannot be combined with deleting the whole series")
            }
        }
    }

    // MARK: - RSVPs

    /// Answers an event (an occurrence of a series is given by `occurrence`) for oneself or one
    /// of one's family members. Answering again changes the same answer. After the event's
    /// `rsvp_deadline` only admins can still answer.
    public func rsvp(
        _ id: EventID, occurrence: Date? = nil, status: String, familyMember: FamilyMemberID? = nil, plusOnes: Int = 0, note: String? = nil,
        as actor: UserID
    ) async throws -> RSVP {
        guard ["yes", "no", "maybe"].contains(status) else { throw ServiceError.invalidInput(field: "status", reason: "must be yes, no or maybe") }
        guard (0...20).contains(plusOnes) else { throw ServiceError.invalidInput(field: "plus_ones", reason: "must be between 0 and 20") }
        let note = try note.map { try Validate.text($0, field: "note", limit: 500) }
        return try await asUser(actor) { connection in
            let event = try await event(id, on: connection)
            let role = try await requireMember(actor, of: event.communityID, on: connection)
            if event.recurrenceRule != nil && occurrence == nil {
                throw ServiceError.invalidInput(field: "occurrence", reason: "is required to answer a recurring event")
            }
            let row = try await target(id, occurrence: occurrence, on: connection)
            if let deadline = row.rsvpDeadline, deadline < Date(), role != .admin {
                throw ServiceError.forbidden(rule: "answers cannot change after the RSVP deadline, except by admins")
            }
            if let familyMember {
                let own = try await connection.query("SELECT 1 FROM family_members WHERE id = \(familyMember) AND user_id = \(actor)")
                guard !own.isEmpty else { throw ServiceError.notFound("Family member \(familyMember) of yours") }
            }
            let answer = try await connection.query(
                """
                INSERT INTO rsvps (event_id, user_id, family_member_id, status, plus_ones, note)
                VALUES (\(row.id), \(actor), \(familyMember), \(status)::rsvp_status, \(plusOnes), \(note))
                ON CONFLICT ON CONSTRAINT rsvps_event_id_user_id_family_member_id_key DO UPDATE
                SET status = excluded.status, plus_ones = excluded.plus_ones, note = excluded.note, responded_at = now()
                RETURNING \(unescaped: RSVP.columns)
                """
            ).single()
            return try RSVP(row: answer)
        }
    }

    /// Counts by answer (with plus-ones) and the members who have not answered.
    public func attendance(_ id: EventID, occurrence: Date? = nil, as actor: UserID) async throws -> Attendance {
        try await asUser(actor) { connection in
            let event = try await event(id, on: connection)
            try await requireMember(actor, of: event.communityID, on: connection)
            var rowID: EventID? = event.id
            if let occurrence {
                rowID = try await connection.query(
                    "SELECT id FROM events WHERE recurrence_parent_id = \(id) AND original_starts_at = \(occurrence) AND deleted_at IS NULL"
                ).first?.decode("id", as: EventID.self)
                if rowID == nil, try Self.occurrences(of: event, from: occurrence, to: occurrence.addingTimeInterval(1), limit: 1).first != occurrence
                {
                    throw ServiceError.notFound("Occurrence \(occurrence.formatted(.iso8601)) of event \(id)")
                }
            }
            var tallies: [String: Attendance.Tally] = [:]
            if let rowID {
                for row in try await connection.query(
                    "SELECT status::text AS status, count(*) AS responses, sum(1 + plus_ones) AS people FROM rsvps WHERE event_id = \(rowID) GROUP BY status"
                ) {
                    let (status, responses, people) = try row.decode((String, Int64, Int64).self)
                    tallies[status] = Attendance.Tally(responses: Int(responses), people: Int(people))
                }
            }
            let missing = try await connection.query(
                """
                SELECT m.user_id FROM members m
                WHERE m.community_id = \(event.communityID) AND m.left_at IS NULL
                  AND NOT EXISTS (SELECT FROM rsvps r WHERE r.event_id = \(rowID) AND r.user_id = m.user_id AND r.family_member_id IS NULL)
                ORDER BY m.joined_at, m.user_id
                """
            ).map { try $0.decode("user_id", as: UserID.self) }
            let zero = Attendance.Tally(responses: 0, people: 0)
            return Attendance(
                eventID: rowID ?? event.id, yes: tallies["yes"] ?? zero, no: tallies["no"] ?? zero, maybe: tallies["maybe"] ?? zero,
                notAnswered: missing
            )
        }
    }
}
