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
                            "INSERT INTO calendar_feeds (user_id, token_hash) VALUES (\(b), sha256('x'))")
                    }
                    Issue.record("a wrote an address for b")
                } catch let error as PostgresError {
                    #expect(error.sqlState == "42501", "\(error)")
                }
                try await connection.asApp(a) { connection in
                    let changed = try await connection.query(
                        "UPDATE calendar_feeds SET token_hash = sha256('y') WHERE user_id = \(b) RETURNING id")
                    let removed = try await connection.query("DELETE FROM calendar_feeds WHERE user_id = \(b) RETURNING id")
                    #expect(Array(changed).isEmpty && Array(removed).isEmpty)
                    // Their own: rotated.
                    let own = try await connection.query(
                        "UPDATE calendar_feeds SET token_hash = sha256('z') WHERE user_id = \(a) RETURNING id")
                    #expect(Array(own).count == 1)
                }
                // No user at all: the token's owner, and nothing for an unknown token.
                let owner = try await connection.asApp(nil) { connection in
                    try await connection.query("SELECT orbit.calendar_feed_owner(sha256(convert_to(\(tokenOfB), 'UTF8'))) AS owner").single().decode(
                        "owner", as: UUID?.self)
                }
                #expect(owner == b)
                let unknown = try await connection.asApp(nil) { connection in
                    try await connection.query("SELECT orbit.calendar_feed_owner(sha256('nope')) AS owner").single().decode("owner", as: UUID?.self)
                }
                #expect(unknown == nil)
                try await connection.query("UPDATE users SET deleted_at = now() WHERE id = \(b)")
                let deleted = try await connection.asApp(nil) { connection in
                    try await connection.query("SELECT orbit.calendar_feed_owner(sha256(convert_to(\(tokenOfB), 'UTF8'))) AS owner").single().decode(
                        "owner", as: UUID?.self)
                }
                #expect(deleted == nil)
            }
        }
    }

    @Test("the table keeps digests only: nobody who reads it (orbit_admin, a backup, a replica) holds a working address")
    func digestsOnly() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let columns = try await connection.query(
                    """
                    SELECT attname::text AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
                    WHERE attrelid = 'calendar_feeds'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum
                    """
                ).map { try $0.decode((String, String).self) }
                #expect(!columns.contains { $0.0 == "token" }, "\(columns)")
                #expect(columns.contains { $0.0 == "token_hash" && $0.1 == "bytea" }, "\(columns)")
            }
        }
    }
}
