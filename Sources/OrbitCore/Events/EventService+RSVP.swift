package import Foundation
import OrbitPostgres

/// Answers to events (spec: RSVPs), for oneself or one's family members, and the attendance.
extension EventService {
    /// Answers an event (an occurrence of a series is given by `occurrence`) for oneself or one
    /// of one's family members. Answering again changes the same answer. After the event's
    /// `rsvp_deadline` only admins can still answer.
    package func rsvp(
        _ id: EventID, occurrence: Date? = nil, status: RSVPStatus, familyMember: FamilyMemberID? = nil, plusOnes: Int = 0, note: String? = nil,
        as actor: UserID
    ) async throws -> RSVP {
        guard (0...20).contains(plusOnes) else { throw ServiceError.invalidInput(field: "plus_ones", reason: "must be between 0 and 20") }
        let note = try note.map { try Validate.text($0, field: "note", limit: 500) }
        return try await runner.asUser(actor) { connection in
            let (event, role) = try await Self.eventAndRole(id, actor, on: connection)
            guard let role else { throw ServiceError.notFound("Community \(event.communityID)") }
            if event.recurrenceRule != nil && occurrence == nil {
                throw ServiceError.conflict(field: "occurrence", reason: "is required to answer a recurring event")
            }
            let row = occurrence == nil ? event : try await Self.target(id, occurrence: occurrence, on: connection)
            if let deadline = row.rsvpDeadline, deadline < runner.now(), role != .admin {
                throw ServiceError.forbidden(rule: "answers cannot change after the RSVP deadline, except by admins")
            }
            // Written only for oneself or one's own family member.
            let answer = try await connection.query(
                """
                INSERT INTO rsvps (event_id, user_id, family_member_id, status, plus_ones, note)
                SELECT \(row.id), \(actor), \(familyMember), \(status)::rsvp_status, \(plusOnes), \(note)
                WHERE \(familyMember)::uuid IS NULL
                   OR EXISTS (SELECT FROM family_members f WHERE f.id = \(familyMember) AND f.user_id = \(actor))
                ON CONFLICT ON CONSTRAINT rsvps_event_id_user_id_family_member_id_key DO UPDATE
                SET status = excluded.status, plus_ones = excluded.plus_ones, note = excluded.note, responded_at = now()
                RETURNING \(unescaped: RSVP.columns)
                """
            ).first
            guard let answer else {
                if let familyMember { throw ServiceError.notFound("Family member \(familyMember) of yours") }
                throw ServiceError.changedMeanwhile
            }
            return try RSVP(row: answer)
        }
    }

    /// Counts by answer (with plus-ones) and the members who have not answered.
    package func attendance(_ id: EventID, occurrence: Date? = nil, as actor: UserID) async throws -> Attendance {
        try await runner.asUser(actor) { connection in
            let event = try await Self.event(id, on: connection)
            try await runner.requireMember(actor, of: event.communityID, on: connection)
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

    /// Takes back an answer (one's own, or one's family member's) to an event or one
    /// occurrence of a series. After the deadline only admins can still change answers.
    package func withdrawRSVP(_ id: EventID, occurrence: Date? = nil, familyMember: FamilyMemberID? = nil, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let (event, role) = try await Self.eventAndRole(id, actor, on: connection)
            guard let role else { throw ServiceError.notFound("Community \(event.communityID)") }
            guard let row = try await Self.answeredRow(event, occurrence: occurrence, on: connection) else {
                throw ServiceError.notFound("An answer to event \(id)")
            }
            if let deadline = row.deadline, deadline < runner.now(), role != .admin {
                throw ServiceError.forbidden(rule: "answers cannot change after the RSVP deadline, except by admins")
            }
            let removed =
                try await connection.query(
                    """
                    DELETE FROM rsvps WHERE event_id = \(row.id) AND user_id = \(actor) AND family_member_id IS NOT DISTINCT FROM \(familyMember)
                    """
                ).affectedRows ?? 0
            guard removed > 0 else { throw ServiceError.notFound("An answer to event \(id)") }
        }
    }

    /// The order of answers: the order they came in.
    static let rsvpOrder = Paging.Keyset.timeAndID("rsvps", time: "r.responded_at", id: "r.id", newestFirst: false)

    /// Who answered an event (or one occurrence of a series): each answer with the member's
    /// name, the family member's name when it is theirs, plus-ones and note, in the order they
    /// answered.
    package func rsvps(_ id: EventID, occurrence: Date? = nil, limit: Int = 100, cursor: String? = nil, as actor: UserID) async throws
        -> Page<RSVPEntry>
    {
        try Validate.limit(limit, in: 1...500)
        let after = try Self.rsvpOrder.decode(cursor)
        return try await runner.asUserReading(actor) { connection in
            let event = try await Self.event(id, on: connection)
            try await runner.requireMember(actor, of: event.communityID, on: connection)
            guard let row = try await Self.answeredRow(event, occurrence: occurrence, on: connection) else { return Page(items: [], nextCursor: nil) }
            let rows = try await connection.query(
                """
                SELECT r.id, r.event_id, r.user_id, r.family_member_id, r.status::text AS status, r.plus_ones, r.note, r.responded_at, r.updated_at,
                    u.display_name, f.name AS family_member_name, \(unescaped: Self.rsvpOrder.columns)
                FROM rsvps r JOIN users u ON u.id = r.user_id LEFT JOIN family_members f ON f.id = r.family_member_id
                WHERE r.event_id = \(row.id)
                  AND \(try Self.rsvpOrder.after(after))
                ORDER BY \(unescaped: Self.rsvpOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.rsvpOrder.page(rows, limit: limit, item: RSVPEntry.init(row:))
        }
    }

    /// The row answers to `event` (at `occurrence`, for a series) are kept on, if it exists:
    /// the event itself, or the occurrence's own row (an occurrence nobody answered has none).
    static func answeredRow(_ event: Event, occurrence: Date?, on connection: PostgresConnection) async throws -> (id: EventID, deadline: Date?)? {
        guard event.recurrenceRule != nil else {
            guard occurrence == nil else { throw ServiceError.conflict(field: "occurrence", reason: "applies to recurring events only") }
            return (event.id, event.rsvpDeadline)
        }
        guard let occurrence else {
            throw ServiceError.conflict(field: "occurrence", reason: "is required for a recurring event")
        }
        guard
            let row = try await connection.query(
                """
                SELECT id, rsvp_deadline FROM events
                WHERE recurrence_parent_id = \(event.id) AND original_starts_at = \(occurrence) AND deleted_at IS NULL
                """
            ).first
        else { return nil }
        return (try row.decode("id", as: EventID.self), try row.decode("rsvp_deadline", as: Date?.self))
    }
}
