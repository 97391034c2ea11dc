import ArgumentParser
import Foundation
import Logging
import OrbitCore
import OrbitMigrations
import OrbitPostgres

/// `orbit-bench feed`: a feed page at depth 1 and depth 500 of a community with 100,000 posts
/// and 1,000,000 reactions. Cursor pages cost the same at any depth; OFFSET would not.
struct FeedBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract: "Time feed pages (20 posts with counts and the reader's reactions) at page 1 and page 500, and show the plan."
    )

    @Option(help: "Server to use (a superuser). Default: a throwaway local cluster.") var databaseURL: String?
    @Option(help: "Posts in the community.") var posts = 100_000
    @Option(help: "Reactions per post (from distinct members).") var reactionsPerPost = 10
    @Option(help: "Members of the community.") var members = 1000
    @Option(help: "Calls to time per page.") var calls = 200

    func run() async throws {
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL, measure)
    }

    private func measure(_ server: BenchmarkServer) async throws {
        let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: 2))
        let services = OrbitServices(pool: pool)
        let reader = try await services.users.create(email: "reader@example.com", displayName: "Reader").id
        let community = try await services.communities.create(name: "Huge club", as: reader).id
        let clock = ContinuousClock()
        let loadStart = clock.now
        try await fill(community, reader: reader, server.configuration)
        print("Data: \(posts) posts, \(posts * reactionsPerPost) reactions, \(members) members (loaded in \(Int((clock.now - loadStart).seconds)) s)")

        // Walk to page 500 once, keeping the cursor.
        var cursor: String?
        var walkSamples: [Double] = []
        for _ in 1..<500 {
            let start = clock.now
            cursor = try await services.feed.page(of: community, limit: 20, cursor: cursor, as: reader).nextCursor
            walkSamples.append((clock.now - start).seconds * 1000)
        }
        let deep = cursor
        func time(_ cursor: String?) async throws -> (median: Double, p90: Double) {
            var samples: [Double] = []
            for _ in 0..<calls {
                let start = clock.now
                let page = try await services.feed.page(of: community, limit: 20, cursor: cursor, as: reader)
                samples.append((clock.now - start).seconds * 1000)
                precondition(page.items.count == 20)
            }
            samples.sort()
            return (samples[samples.count / 2], samples[samples.count * 9 / 10])
        }
        let first = try await time(nil)
        let fiveHundredth = try await time(deep)
        walkSamples.sort()
        print("RESULT client=orbitcove workload=feed_page_1 ms_per_page_median=\(format(first.median, 2)) p90=\(format(first.p90, 2))")
        print(
            "RESULT client=orbitcove workload=feed_page_500 ms_per_page_median=\(format(fiveHundredth.median, 2)) p90=\(format(fiveHundredth.p90, 2))"
        )
        print("Pages 2 to 499 while walking: median \(format(walkSamples[walkSamples.count / 2], 2)) ms")
        print("Page 500 / page 1 = \(format(fiveHundredth.median / first.median, 2))x")

        let after = try FeedCursor(decoding: deep ?? "")
        try await pool.withTransaction(TransactionOptions(localSettings: ["role": "orbit_app", "app.current_user_id": reader.description])) {
            connection in
            print("\nPlan of page 500, as orbit_app:")
            let page = FeedService.pageQuery(of: community, limit: 20, after: after, reader: reader)
            let plan = try await connection.query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) \(page)")
            for row in plan { print("  " + String(try row.decode(0, as: String.self).prefix(200))) }
        }
        await pool.close()
    }

    /// Bulk load as the owner with triggers off (session_replication_role = replica), then the
    /// counters computed once: the same end state as the triggers give, in a fraction of the time.
    private func fill(_ community: CommunityID, reader: UserID, _ configuration: PostgresConfiguration) async throws {
        try await PostgresConnection.withConnection(configuration) { connection in
            try await connection.query(
                """
                INSERT INTO users (apple_id, email, display_name)
                SELECT 'feed-' || i, 'feed' || i || '@example.com', 'Member ' || i FROM generate_series(1, \(members - 1)) AS i
                """
            )
            try await connection.query(
                "INSERT INTO members (community_id, user_id) SELECT \(community), id FROM users WHERE apple_id LIKE 'feed-%'"
            )
            try await connection.executeScript("SET session_replication_role = replica")
            try await connection.query(
                """
                WITH people AS (SELECT array_agg(user_id ORDER BY user_id) AS ids FROM members WHERE community_id = \(community))
                INSERT INTO posts (community_id, author_id, content, created_at, editable_until)
                SELECT \(community), people.ids[i % array_length(people.ids, 1) + 1], 'Post ' || i,
                    now() - i * interval '1 minute', now() - i * interval '1 minute' + interval '24 hours'
                FROM generate_series(1, \(posts)) AS i, people
                """
            )
            try await connection.query(
                """
                WITH people AS (SELECT array_agg(user_id ORDER BY user_id) AS ids FROM members WHERE community_id = \(community)),
                     numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM posts WHERE community_id = \(community))
                INSERT INTO reactions (post_id, user_id, type, community_id)
                SELECT numbered.id, people.ids[(numbered.n * 7 + k) % array_length(people.ids, 1) + 1],
                    (ARRAY['like', 'love', 'laugh', 'celebrate'])[k % 4 + 1]::reaction_type, \(community)
                FROM numbered CROSS JOIN generate_series(0, \(reactionsPerPost - 1)) AS k, people
                """
            )
            try await connection.query(
                """
                UPDATE posts p SET reaction_counts = counts.value
                FROM (SELECT post_id, jsonb_object_agg(type, n) AS value
                      FROM (SELECT post_id, type::text AS type, count(*) AS n FROM reactions GROUP BY 1, 2) per_type GROUP BY post_id) counts
                WHERE counts.post_id = p.id
                """
            )
            try await connection.executeScript("SET session_replication_role = DEFAULT")
            try await connection.executeScript("VACUUM ANALYZE")
        }
    }
}
