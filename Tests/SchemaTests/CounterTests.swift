import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Denormalized counters stay equal to what they count")
struct CounterTests {
    private func memberCount(_ community: UUID, _ connection: PostgresConnection) async throws -> Int32 {
        try await connection.value("SELECT member_count FROM communities WHERE id = \(community)")
    }

    @Test("member_count: creator 1, join, leave, rejoin, hard delete, a row inserted as already left")
    func memberCount() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let creator = try await seed.user("creator")
                let other = try await seed.user("other")
                let gone = try await seed.user("gone")
                let community = try await seed.community("Club", creator: creator)
                #expect(try await memberCount(community, connection) == 1)

                try await seed.member(community, other)
                #expect(try await memberCount(community, connection) == 2)

                try await connection.query("UPDATE members SET left_at = now() WHERE community_id = \(community) AND user_id = \(other)")
                #expect(try await memberCount(community, connection) == 1)
                // Leaving twice changes nothing.
                try await connection.query("UPDATE members SET left_at = now() WHERE community_id = \(community) AND user_id = \(other)")
                #expect(try await memberCount(community, connection) == 1)

                try await connection.query("UPDATE members SET left_at = NULL WHERE community_id = \(community) AND user_id = \(other)")
                #expect(try await memberCount(community, connection) == 2)

                try await connection.query("DELETE FROM members WHERE community_id = \(community) AND user_id = \(other)")
                #expect(try await memberCount(community, connection) == 1)

                try await connection.query(
                    "INSERT INTO members (community_id, user_id, left_at) VALUES (\(community), \(gone), now())"
                )
                #expect(try await memberCount(community, connection) == 1)
                let active: Int64 = try await connection.value(
                    "SELECT count(*) FROM members WHERE community_id = \(community) AND left_at IS NULL"
                )
                #expect(try await memberCount(community, connection) == Int32(active))
            }
        }
    }

    @Test("member_count is right when members join the same community concurrently")
    func concurrentJoins() async throws {
        try await withTestDatabase { database in
            let (community, users) = try await database.seeding { seed, _ in
                let creator = try await seed.user("creator")
                let community = try await seed.community("Club", creator: creator)
                var users: [UUID] = []
                for index in 0..<20 { users.append(try await seed.user("joiner\(index)")) }
                return (community, users)
            }
            let pool = database.makePool(maxConnections: 4)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for user in users {
                    group.addTask {
                        try await pool.query("INSERT INTO members (community_id, user_id) VALUES (\(community), \(user))")
                    }
                }
                try await group.waitForAll()
            }
            await pool.close()
            let count = try await database.withConnection { connection in
                try await memberCount(community, connection)
            }
            #expect(count == 21)
        }
    }

    @Test("comment_count counts non-deleted comments through insert, soft delete, restore and hard delete")
    func commentCount() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let author = try await seed.user("author")
                let community = try await seed.community("Club", creator: author)
                let post = try await seed.post(community, by: author)
                func count() async throws -> Int32 { try await connection.value("SELECT comment_count FROM posts WHERE id = \(post)") }

                let first = try await seed.comment(post, by: author)
                let second = try await seed.comment(post, by: author)
                let reply = try await seed.comment(post, by: author, parent: first)
                #expect(try await count() == 3)

                // A deleted comment holds no text (migration 0047); a restore brings text back.
                try await connection.query("UPDATE comments SET deleted_at = now(), content = NULL WHERE id = \(second)")
                #expect(try await count() == 2)
                try await connection.query("UPDATE comments SET deleted_at = NULL, content = 'back' WHERE id = \(second)")
                #expect(try await count() == 3)
                try await connection.query("UPDATE comments SET deleted_at = now(), content = NULL WHERE id = \(second)")
                try await connection.query("DELETE FROM comments WHERE id = \(second)")  // already soft-deleted
                #expect(try await count() == 2)
                try await connection.query("DELETE FROM comments WHERE id = \(first)")  // takes its reply along
                #expect(try await count() == 0)
                let replies: Int64 = try await connection.value("SELECT count(*) FROM comments WHERE id = \(reply)")
                #expect(replies == 0)
                try await connection.query(
                    "INSERT INTO comments (post_id, author_id, deleted_at) VALUES (\(post), \(author), now())"
                )
                #expect(try await count() == 0)
            }
        }
    }

    @Test("reaction_counts follows insert, change of type and delete of reactions")
    func reactionCounts() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let a = try await seed.user("a")
                let b = try await seed.user("b")
                let c = try await seed.user("c")
                let community = try await seed.community("Club", creator: a)
                try await seed.member(community, b)
                try await seed.member(community, c)
                let post = try await seed.post(community, by: a)
                func counts() async throws -> [String: Int] {
                    try await connection.value("SELECT reaction_counts FROM posts WHERE id = \(post)", as: PostgresJSON.self).decode()
                }
                #expect(try await counts() == [:])
                for (user, type) in [(a, "like"), (b, "like"), (c, "love")] {
                    try await connection.query(
                        "INSERT INTO reactions (post_id, user_id, type) VALUES (\(post), \(user), \(type)::reaction_type)"
                    )
                }
                #expect(try await counts() == ["like": 2, "love": 1])
                try await connection.query("UPDATE reactions SET type = 'like' WHERE post_id = \(post) AND user_id = \(c)")
                #expect(try await counts() == ["like": 3])
                try await connection.query("UPDATE reactions SET type = 'celebrate' WHERE post_id = \(post) AND user_id = \(a)")
                #expect(try await counts() == ["like": 2, "celebrate": 1])
                try await connection.query("DELETE FROM reactions WHERE post_id = \(post) AND user_id = \(b)")
                #expect(try await counts() == ["like": 1, "celebrate": 1])
                // One reaction per user and post (the spec's UNIQUE(post_id, user_id)).
                await #expect(throws: PostgresError.self) {
                    try await connection.query("INSERT INTO reactions (post_id, user_id, type) VALUES (\(post), \(a), 'love')")
                }
            }
        }
    }
}
