import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Child rows never point at a parent in another community")
struct TenancyIntegrityTests {
    /// Two communities, A and B, with one user who belongs to both.
    private func withTwoCommunities(
        _ body: (Seed, PostgresConnection, _ a: UUID, _ b: UUID, _ user: UUID) async throws -> Void
    ) async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let user = try await seed.user("both")
                let a = try await seed.community("A", creator: user)
                let b = try await seed.community("B", creator: user)
                try await body(seed, connection, a, b, user)
            }
        }
    }

    @Test("children inserted with only the spec's columns get their parent's community")
    func communityFilledFromParent() async throws {
        try await withTwoCommunities { seed, connection, a, _, user in
            let event = try await seed.event(a, by: user)
            let post = try await seed.poll(a, by: user)
            try await connection.query("INSERT INTO rsvps (event_id, user_id, status) VALUES (\(event), \(user), 'yes')")
            try await connection.query("INSERT INTO reactions (post_id, user_id, type) VALUES (\(post), \(user), 'like')")
            try await connection.query("INSERT INTO poll_votes (post_id, user_id, option_index) VALUES (\(post), \(user), 0)")
            _ = try await seed.comment(post, by: user)
            _ = try await seed.expense(a, paidBy: user, total: 100, splits: [(user, 100)])
            let dues = try await seed.id(
                "INSERT INTO dues (community_id, name, amount, due_date, created_by) VALUES (\(a), 'Dues', 100, current_date, \(user)) RETURNING id"
            )
            try await connection.query(
                "INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by) VALUES (\(dues), \(user), 100, \(user))")
            for table in ["rsvps", "reactions", "poll_votes", "comments", "splits", "dues_payments"] {
                let wrong: Int64 = try await connection.value("SELECT count(*) FROM \(unescaped: table) WHERE community_id IS DISTINCT FROM \(a)")
                #expect(wrong == 0, "\(table)")
            }
        }
    }

    @Test("an RSVP that names community B on an event of A is refused")
    func rsvpAcrossCommunities() async throws {
        try await withTwoCommunities { seed, connection, a, b, user in
            let event = try await seed.event(a, by: user)
            let error = await #expect(throws: PostgresError.self) {
                try await connection.query("INSERT INTO rsvps (event_id, user_id, status, community_id) VALUES (\(event), \(user), 'yes', \(b))")
            }
            #expect(error?.isForeignKeyViolation == true)
        }
    }

    @Test("a reply's parent comment is on the same post")
    func replyOnAnotherPost() async throws {
        try await withTwoCommunities { seed, _, a, b, user in
            let postA = try await seed.post(a, by: user)
            let postB = try await seed.post(b, by: user)
            let otherPostA = try await seed.post(a, by: user)
            let parent = try await seed.comment(postB, by: user)
            let parentA = try await seed.comment(otherPostA, by: user)
            await #expect(throws: PostgresError.self) { try await seed.comment(postA, by: user, parent: parent) }
            await #expect(throws: PostgresError.self) { try await seed.comment(postA, by: user, parent: parentA) }
        }
    }

    @Test("a split names the community of its transaction, never another")
    func splitAcrossCommunities() async throws {
        try await withTwoCommunities { seed, connection, a, b, user in
            let error = await #expect(throws: PostgresError.self) {
                try await connection.withTransaction { connection in
                    let transaction = try await Seed(connection: connection).id(
                        """
                        INSERT INTO transactions (community_id, created_by, type, description, total_amount, paid_by, transaction_date)
                        VALUES (\(a), \(user), 'expense', 'Pizza', 100, \(user), current_date) RETURNING id
                        """
                    )
                    try await connection.query(
                        "INSERT INTO splits (transaction_id, user_id, amount, community_id) VALUES (\(transaction), \(user), 100, \(b))"
                    )
                }
            }
            #expect(error?.isForeignKeyViolation == true)
        }
    }

    @Test("posts, transactions and recurring instances link only to events of their own community")
    func eventLinksAcrossCommunities() async throws {
        try await withTwoCommunities { seed, connection, a, b, user in
            let eventB = try await seed.event(b, by: user)
            await #expect(throws: PostgresError.self) {
                try await connection.query(
                    "INSERT INTO posts (community_id, author_id, type, content, linked_event_id) VALUES (\(a), \(user), 'event_share', 'Come', \(eventB))"
                )
            }
            await #expect(throws: PostgresError.self) {
                try await connection.query(
                    "INSERT INTO events (community_id, created_by, title, starts_at, recurrence_parent_id) VALUES (\(a), \(user), 'x', now(), \(eventB))"
                )
            }
            await #expect(throws: PostgresError.self) {
                try await connection.withTransaction { connection in
                    let transaction = try await Seed(connection: connection).id(
                        """
                        INSERT INTO transactions (community_id, created_by, type, description, total_amount, paid_by, transaction_date, linked_event_id)
                        VALUES (\(a), \(user), 'expense', 'Pizza', 100, \(user), current_date, \(eventB)) RETURNING id
                        """
                    )
                    try await connection.query("INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(transaction), \(user), 100)")
                }
            }
        }
    }

    @Test("a row cannot be moved to another community or parent afterwards")
    func noMoving() async throws {
        try await withTwoCommunities { seed, connection, a, b, user in
            let post = try await seed.post(a, by: user)
            let otherPost = try await seed.post(a, by: user)
            let comment = try await seed.comment(post, by: user)
            await #expect(throws: PostgresError.self) {
                try await connection.query("UPDATE posts SET community_id = \(b) WHERE id = \(post)")
            }
            await #expect(throws: PostgresError.self) {
                try await connection.query("UPDATE comments SET post_id = \(otherPost) WHERE id = \(comment)")
            }
        }
    }

    @Test("a poll carries 2 to 20 options; other posts carry no poll data")
    func pollData() async throws {
        try await withTwoCommunities { seed, connection, a, _, user in
            await #expect(throws: PostgresError.self) {
                try await connection.query("INSERT INTO posts (community_id, author_id, type, content) VALUES (\(a), \(user), 'poll', 'Vote')")
            }
            await #expect(throws: PostgresError.self) { try await seed.poll(a, by: user, options: ["Only one"]) }
            await #expect(throws: PostgresError.self) {
                try await connection.query(
                    "INSERT INTO posts (community_id, author_id, content, poll_data) VALUES (\(a), \(user), 'Hi', '{\"options\": [\"a\", \"b\"]}')"
                )
            }
        }
    }
}
