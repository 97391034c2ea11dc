package import Foundation
import OrbitPostgres

/// Calendar feeds (docs/calendar-feeds.md): each user's secret address of an iCalendar feed of
/// their communities' events, which a phone's calendar subscribes to. The address is shown to
/// its owner whenever asked, replaced by a rotation and gone at once when revoked.
package struct CalendarFeedService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// One-off events that began more than this long ago are left out of a feed.
    package static let pastWindow: TimeInterval = 366 * 86_400
    /// At most this many one-off events in a feed (the latest ones).
    package static let eventLimit = 5000

    // MARK: - The owner's address

    /// The user's feed, made the first time it is asked for: its token then, and never again
    /// (the table keeps the token's SHA-256 digest only, as for refresh tokens).
    package func token(as actor: UserID) async throws -> CalendarFeedToken {
        let token = SecretToken.random()
        return try await runner.asUser(actor) { connection in
            let row = try await connection.query(
                """
                WITH made AS (
                    INSERT INTO calendar_feeds (user_id, token_hash) VALUES (\(actor), sha256(convert_to(\(token), 'UTF8')))
                    ON CONFLICT (user_id) DO NOTHING
                    RETURNING created_at
                )
                SELECT true AS made, created_at FROM made
                UNION ALL
                SELECT false, created_at FROM calendar_feeds WHERE user_id = \(actor)
                LIMIT 1
                """
            ).single()
            let made = try row.decode("made", as: Bool.self)
            return CalendarFeedToken(token: made ? token : nil, createdAt: try row.decode("created_at"))
        }
    }

    /// A new token for the user: the old address stops working at once.
    package func rotate(as actor: UserID) async throws -> CalendarFeedToken {
        let token = SecretToken.random()
        return try await runner.asUser(actor) { connection in
            let row = try await connection.query(
                """
                INSERT INTO calendar_feeds (user_id, token_hash) VALUES (\(actor), sha256(convert_to(\(token), 'UTF8')))
                ON CONFLICT (user_id) DO UPDATE SET token_hash = excluded.token_hash, created_at = now()
                RETURNING created_at
                """
            ).single()
            return CalendarFeedToken(token: token, createdAt: try row.decode("created_at"))
        }
    }

    /// Revokes the user's address (the next `token(as:)` makes a new one). True when there was one.
    @discardableResult
    package func revoke(as actor: UserID) async throws -> Bool {
        try await runner.asUser(actor) { connection in
            try await connection.query("DELETE FROM calendar_feeds WHERE user_id = \(actor) RETURNING id").first != nil
        }
    }

    // MARK: - The feed

    /// The feed of `token` as iCalendar text: the events of all its owner's communities, or of
    /// `community` (one of theirs), read as the owner. An unknown or revoked token is not found.
    package func feed(_ token: String, community: CommunityID? = nil) async throws -> String {
        guard SecretToken.hasShape(token),
            let owner: UserID = try await runner.asNobody({ connection in
                try await connection.query("SELECT orbit.calendar_feed_owner(sha256(convert_to(\(token), 'UTF8'))) AS owner").single()
                    .decode("owner")
            })
        else { throw ServiceError.notFound("Calendar feed") }
        return try await feed(of: owner, community: community)
    }

    /// The feed of `user`, as they would see it (`orbitctl calendar feed`).
    package func feed(of user: UserID, community: CommunityID? = nil) async throws -> String {
        let now = runner.now()
        let document = try await runner.asUser(user) { connection in
            try await Self.document(of: user, community: community, now: now, on: connection)
        }
        return try document.write()
    }

    /// Reads a feed's events in one round trip (with the transaction's start), as `user` under
    /// row-level security.
    static func document(of user: UserID, community: CommunityID?, now: Date, on connection: PostgresConnection) async throws
        -> CalendarFeedDocument
    {
        let since = now.addingTimeInterval(-pastWindow)
        // The user's communities: all, or the one asked for.
        let mine: PostgresQuery = """
            SELECT m.community_id FROM members m
            WHERE m.user_id = \(user) AND m.left_at IS NULL AND (\(community)::uuid IS NULL OR m.community_id = \(community))
            """
        let results = try await connection.pipeline([
            """
            SELECT c.id, c.name, c.settings ->> 'timezone' AS timezone FROM communities c
            WHERE c.id IN (\(mine)) AND c.deleted_at IS NULL
            """,
            """
            SELECT * FROM (
                SELECT \(unescaped: Event.columns) FROM events
                WHERE community_id IN (\(mine)) AND deleted_at IS NULL AND recurrence_rule IS NULL AND recurrence_parent_id IS NULL
                  AND starts_at >= \(since)
                ORDER BY starts_at DESC, id LIMIT \(eventLimit)
            ) latest ORDER BY starts_at, id
            """,
            """
            SELECT \(unescaped: Event.columns) FROM events
            WHERE community_id IN (\(mine)) AND deleted_at IS NULL AND recurrence_rule IS NOT NULL
            ORDER BY starts_at, id
            """,
            // Single occurrences of those series: changed or answered, or cancelled (deleted).
            """
            SELECT \(unescaped: Event.columns) FROM events
            WHERE recurrence_parent_id IN (
                SELECT id FROM events WHERE community_id IN (\(mine)) AND deleted_at IS NULL AND recurrence_rule IS NOT NULL)
            ORDER BY original_starts_at, id
            """,
            """
            SELECT event_id, status::text AS status, updated_at FROM rsvps
            WHERE user_id = \(user) AND family_member_id IS NULL AND community_id IN (\(mine))
            """,
        ])
        var communities: [CommunityID: CalendarFeedDocument.CommunityInfo] = [:]
        for row in results[0] {
            let zone = try row.decode("timezone", as: String?.self).flatMap(TimeZone.init(identifier:)) ?? .gmt
            communities[try row.decode("id")] = .init(name: try row.decode("name"), zone: zone)
        }
        if let community, communities[community] == nil { throw ServiceError.notFound("Community \(community)") }
        var answers: [EventID: CalendarFeedDocument.Answer] = [:]
        for row in results[4] {
            if let status = RSVPStatus(rawValue: try row.decode("status")) {
                answers[try row.decode("event_id")] = .init(status: status, updatedAt: try row.decode("updated_at"))
            }
        }
        return CalendarFeedDocument(
            name: community.flatMap { communities[$0]?.name } ?? "OrbitCove", communities: communities,
            single: try results[1].map(Event.init(row:)), series: try results[2].map(Event.init(row:)),
            instances: try results[3].map(Event.init(row:)), answers: answers, now: now)
    }
}
