import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Calendar feed addresses as orbit_app: one's own only, and the token's owner answered to a
/// request that has no user (a calendar app sends nothing else), never a deleted account's.
@Suite("Calendar feed addresses under row-level security, as orbit_app")
struct CalendarFeedSecurityTests {
    @Test("a user reads, rotates and revokes only their own address; the owner of a token is found without a user, a deleted account's never")
    func ownAddressOnly() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let a = world.id(.a), b = world.id(.b)
                let tokenOfB = String(repeating: "b", count: 43)
                // Someone else's row: not written, not changed, not removed.
                do {
                    try await connection.asApp(a) { connection in
                        try await connection.query(
                            "INSERT INTO calendar_feeds (user_id, token) VALUES (\(b), \(String(repeating: "x", count: 43)))")
                    }
                    Issue.record("a wrote an address for b")
                } catch let error as PostgresError {
                    #expect(error.sqlState == "42501", "\(error)")
                }
                try await connection.asApp(a) { connection in
                    let changed = try await connection.query(
                        "UPDATE calendar_feeds SET token = \(String(repeating: "y", count: 43)) WHERE user_id = \(b) RETURNING id")
                    let removed = try await connection.query("DELETE FROM calendar_feeds WHERE user_id = \(b) RETURNING id")
                    #expect(Array(changed).isEmpty && Array(removed).isEmpty)
                    // Their own: rotated.
                    let own = try await connection.query(
                        "UPDATE calendar_feeds SET token = \(String(repeating: "z", count: 43)) WHERE user_id = \(a) RETURNING id")
                    #expect(Array(own).count == 1)
                }
                // No user at all: the token's owner, and nothing for an unknown token.
                let owner = try await connection.asApp(nil) { connection in
                    try await connection.query("SELECT orbit.calendar_feed_owner(\(tokenOfB)) AS owner").single().decode("owner", as: UUID?.self)
                }
                #expect(owner == b)
                let unknown = try await connection.asApp(nil) { connection in
                    try await connection.query("SELECT orbit.calendar_feed_owner('nope') AS owner").single().decode("owner", as: UUID?.self)
                }
                #expect(unknown == nil)
                try await connection.query("UPDATE users SET deleted_at = now() WHERE id = \(b)")
                let deleted = try await connection.asApp(nil) { connection in
                    try await connection.query("SELECT orbit.calendar_feed_owner(\(tokenOfB)) AS owner").single().decode("owner", as: UUID?.self)
                }
                #expect(deleted == nil)
            }
        }
    }
}
