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
            let event = try await Self.event(id, on: connection)
            let role = try await runner.requireMember(actor, of: event.communityID, on: connection)
            if event.recurrenceRule != nil && occurrence == nil {
                throw ServiceError.invalidInput(field: "occurrence", reason: "is required to answer a recurring event")
            }
            let row = try await Self.target(id, occurrence: occurrence, on: connection)
            if let deadline = row.rsvpDeadline, deadline < runner.now(), role != .admin {
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
}
