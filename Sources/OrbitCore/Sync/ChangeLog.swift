import Foundation
package import Logging
package import OrbitPostgres

/// The change log as every server's listener reads it (`LiveListener`, docs/architecture.md,
/// "Fan-out"): on a connection of the listener's own, which LISTENs to chat's channel and reads
/// the log for the communities and users' own feeds changed since its last read. By transaction
/// id, as the feed reads it (docs/sync.md): a commit is never missed, however transactions
/// interleave.
package enum ChangeLog {
    /// What a read found changed (chat aside): the communities, and the users whose own feed
    /// (`GET /users/me/changes`) changed.
    package struct Changes: Sendable, Equatable {
        package var communities: [CommunityID]
        package var owners: [UserID]

        package var isEmpty: Bool { communities.isEmpty && owners.isEmpty }
    }

    /// What the transactions visible now and not in `since` changed. `since` becomes now; the
    /// first read (`since` nil) only takes the position. Those at or past `since`'s end, and
    /// those in flight in it, that are visible now.
    package static func changed(since: inout String?, on connection: PostgresConnection) async throws -> Changes {
        guard let from = since else {
            since = try await connection.query("SELECT pg_current_snapshot()::text AS now").single().decode("now")
            return Changes(communities: [], owners: [])
        }
        let row = try await connection.query(
            """
            WITH changed AS (
                SELECT c.community_id, c.user_id FROM changes c
                WHERE (c.xid >= pg_snapshot_xmax(\(from)::pg_snapshot) OR c.xid = ANY(ARRAY(SELECT pg_snapshot_xip(\(from)::pg_snapshot))))
                  AND pg_visible_in_snapshot(c.xid, pg_current_snapshot()) AND c.conversation_id IS NULL)
            SELECT pg_current_snapshot()::text AS now,
                ARRAY(SELECT DISTINCT community_id FROM changed WHERE community_id IS NOT NULL) AS communities,
                ARRAY(SELECT DISTINCT user_id FROM changed WHERE community_id IS NULL) AS owners
            """
        ).single()
        since = try row.decode("now", as: String.self)
        return Changes(
            communities: try row.decode("communities", as: [UUID].self).map(CommunityID.init),
            owners: try row.decode("owners", as: [UUID].self).map(UserID.init))
    }
}

/// A listener's own connection to the change log: it reads the log as the operator (every
/// community's changes) and LISTENs to `ChatEvent.channel`. One task uses it at a time.
package struct ChangeLogReader: Sendable {
    private let connection: PostgresConnection

    /// Connects with `configuration` and starts listening.
    package static func open(_ configuration: PostgresConfiguration, logger: Logger) async throws -> ChangeLogReader {
        let connection = try await PostgresConnection.connect(configuration, logger: logger)
        do {
            try await connection.query("SET ROLE orbit_admin")
            try await connection.query("LISTEN \(unescaped: ChatEvent.channel)")
        } catch {
            await connection.close()
            throw error
        }
        return ChangeLogReader(connection: connection)
    }

    /// The chat events notified since the last call, each once, in order; waits up to `wait`
    /// for the first.
    package func chatEvents(waitingUpTo wait: Duration) async throws -> [ChatEvent] {
        var events: [ChatEvent] = []
        var seen: Set<ChatEvent> = []
        for note in try await connection.notifications(waitingUpTo: wait) where note.channel == ChatEvent.channel {
            for event in ChatEvent.events(payload: note.payload) where seen.insert(event).inserted { events.append(event) }
        }
        return events
    }

    /// What changed since `since` (`ChangeLog.changed`).
    package func changed(since: inout String?) async throws -> ChangeLog.Changes {
        try await ChangeLog.changed(since: &since, on: connection)
    }

    package func close() async { await connection.close() }
}
