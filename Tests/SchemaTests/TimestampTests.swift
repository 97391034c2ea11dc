import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Timestamps the database owns")
struct TimestampTests {
    /// Every table with updated_at, and an UPDATE that touches a row of it without naming updated_at.
    static let tables: [(table: String, update: String)] = [
        ("users", "UPDATE users SET display_name = display_name || '!'"),
        ("communities", "UPDATE communities SET description = 'changed'"),
        ("events", "UPDATE events SET title = 'changed'"),
        ("rsvps", "UPDATE rsvps SET status = 'no'"),
        ("posts", "UPDATE posts SET content = 'changed'"),
        ("comments", "UPDATE comments SET content = 'changed'"),
        ("transactions", "UPDATE transactions SET description = 'changed'"),
        ("splits", "UPDATE splits SET settled_via = 'cash'"),
    ]

    @Test("updated_at is set by the database on every UPDATE", arguments: tables.map(\.table))
    func updatedAt(table: String) async throws {
        let update = try #require(Self.tables.first { $0.table == table }).update
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let user = try await seed.user("u")
                let community = try await seed.community("Club", creator: user)
                let event = try await seed.event(community, by: user)
                try await connection.query("INSERT INTO rsvps (event_id, user_id, status) VALUES (\(event), \(user), 'yes')")
                let post = try await seed.post(community, by: user)
                _ = try await seed.comment(post, by: user)
                _ = try await seed.expense(community, paidBy: user, total: 100, splits: [(user, 100)])
                // Pretend every row is old, then update it without naming updated_at.
                try await connection.executeScript("UPDATE \(table) SET updated_at = '2000-01-01T00:00:00Z'")
                try await connection.executeScript(update)
                let stale: Int64 = try await connection.value(
                    "SELECT count(*) FROM \(unescaped: table) WHERE updated_at < now() - interval '1 hour'"
                )
                #expect(stale == 0)
                // An UPDATE that sets updated_at itself does not get to choose it either.
                try await connection.executeScript("UPDATE \(table) SET updated_at = '2000-01-01T00:00:00Z'")
                let chosen: Int64 = try await connection.value("SELECT count(*) FROM \(unescaped: table) WHERE updated_at < '2001-01-01'")
                #expect(chosen == 0)
            }
        }
    }

    @Test("editable_until is creation + 24 h and cannot be moved")
    func editableUntil() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let user = try await seed.user("u")
                let community = try await seed.community("Club", creator: user)
                let post = try await seed.post(community, by: user)
                let exact: Bool = try await connection.value(
                    "SELECT editable_until = created_at + interval '24 hours' FROM posts WHERE id = \(post)"
                )
                #expect(exact)
                try await connection.query("UPDATE posts SET editable_until = now() + interval '10 years' WHERE id = \(post)")
                try await connection.query("UPDATE posts SET created_at = now() + interval '5 years' WHERE id = \(post)")
                let stillExact: Bool = try await connection.value(
                    "SELECT editable_until = created_at + interval '24 hours' AND created_at <= now() FROM posts WHERE id = \(post)"
                )
                #expect(stillExact)
            }
        }
    }
}
