package import Foundation
import OrbitPostgres

/// The calendar window and the expansion of series into occurrences.
extension EventService {
    /// A community's calendar from `from` (inclusive) to `to` (exclusive): one-off events,
    /// materialized instances, and the occurrences of series computed on the fly (a cancelled or
    /// modified occurrence is left to its instance row). At most 92 days and `limit` entries.
    package func calendar(of community: CommunityID, from: Date, to: Date, limit: Int = 2000, as actor: UserID?) async throws
        -> [EventOccurrence]
    {
        guard from < to, to.timeIntervalSince(from) <= 92 * 86_400 else {
            throw ServiceError.invalidInput(field: "to", reason: "must be after from, at most 92 days later")
        }
        return try await runner.asUserReadingOrOperator(actor) { connection in
            try await Self.calendar(of: community, from: from, to: to, limit: limit, member: actor, on: connection)
        }
    }

    /// One round trip (with the transaction's start): the membership check when `member` is
    /// given, the single events, the series and the occurrences of those series that have a row
    /// of their own.
    static func calendar(of community: CommunityID, from: Date, to: Date, limit: Int, member: UserID?, on connection: PostgresConnection)
        async throws -> [EventOccurrence]
    {
        var queries: [PostgresQuery] = [
            """
            SELECT \(unescaped: Event.columns) FROM events
            WHERE community_id = \(community) AND deleted_at IS NULL AND recurrence_rule IS NULL
              AND starts_at >= \(from) AND starts_at < \(to)
            ORDER BY starts_at, id LIMIT \(limit)
            """,
            """
            SELECT \(unescaped: Event.columns) FROM events
            WHERE community_id = \(community) AND recurrence_rule IS NOT NULL AND deleted_at IS NULL AND starts_at < \(to)
            """,
            // Occurrences with a row of their own (modified, answered or cancelled) are not computed.
            """
            SELECT recurrence_parent_id, original_starts_at FROM events
            WHERE recurrence_parent_id IN (
                    SELECT id FROM events
                    WHERE community_id = \(community) AND recurrence_rule IS NOT NULL AND deleted_at IS NULL AND starts_at < \(to))
              AND original_starts_at >= \(from) AND original_starts_at < \(to)
            """,
        ]
        if let member { queries.append(RequestRunner.membershipQuery(member, in: community)) }
        let results = try await connection.pipeline(queries)
        if member != nil, try RequestRunner.membership(in: results[3]) == nil { throw ServiceError.notFound("Community \(community)") }
        let single = try results[0].map(Event.init(row:))
        let series = try results[1].map(Event.init(row:))
        struct OccurrenceKey: Hashable {
            var series: EventID
            var start: Date
        }
        var taken = Set<OccurrenceKey>()
        for row in results[2] {
            let (parent, original) = try row.decode((EventID, Date).self)
            taken.insert(OccurrenceKey(series: parent, start: original))
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
        let rule = try RecurrenceRule.parsed(text)
        let zone = series.recurrenceTimezone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        let wall = Int(series.startsAt.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: series.startsAt)
        let recurring = RecurringSeries(rule: rule, start: LocalDateTime(secondsAsIfUTC: wall), timeZone: zone)
        let found = recurring.occurrences(from: from, to: to, limit: limit)
        guard let to else { return found }
        return found.filter { $0 < to }
    }

    /// The instance row of `occurrence` of `series`, created if needed.
    static func materialize(_ series: Event, occurrence: Date, on connection: PostgresConnection) async throws -> EventID {
        let matches = try Self.occurrences(of: series, from: occurrence, to: occurrence.addingTimeInterval(1), limit: 1)
        guard matches.first == occurrence else {
            throw ServiceError.notFound("Occurrence \(occurrence.formatted(.iso8601)) of event \(series.id)")
        }
        return try await connection.query("SELECT orbit.materialize_occurrence(\(series.id), \(occurrence)) AS id").single().decode("id")
    }

    /// The row an action on (event, occurrence) applies to.
    static func target(_ id: EventID, occurrence: Date?, on connection: PostgresConnection) async throws -> Event {
        let event = try await Self.event(id, on: connection)
        guard let occurrence else { return event }
        guard event.recurrenceRule != nil else {
            throw ServiceError.conflict(field: "occurrence", reason: "applies to recurring events only")
        }
        return try await Self.event(try await materialize(event, occurrence: occurrence, on: connection), on: connection)
    }
}
