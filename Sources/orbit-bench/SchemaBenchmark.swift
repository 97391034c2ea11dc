import ArgumentParser
import Foundation
import Logging
import OrbitMigrations
import OrbitPostgres

/// `orbit-bench schema`: what the schema's safety costs. The same feed query as `orbit_app`
/// (row-level security) and as the table owner (a superuser, who bypasses it), and the live
/// `balances` view against the materialized snapshot, on one connection, interleaved rounds.
struct SchemaBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Measure row-level security (feed query as orbit_app vs as owner) and live vs materialized balances."
    )

    @Option(help: "Server to use (a superuser; the database is migrated and filled). Default: a throwaway local cluster.")
    var databaseURL: String?

    @Option(help: "Communities to create (20 members each, two communities per user).")
    var communities = 100

    @Option(help: "Posts per community.")
    var posts = 500

    @Option(help: "Expenses per community (each split four ways).")
    var expenses = 200

    @Option(help: "Queries per measurement.")
    var iterations = 5_000

    @Option(help: "Interleaved rounds; the summary reports medians.")
    var rounds = 5

    func validate() throws {
        guard communities >= 1, posts >= 20, expenses >= 1, iterations >= 1, rounds >= 1 else {
            throw ValidationError("--communities, --expenses, --iterations and --rounds must be at least 1, --posts at least 20.")
        }
    }

    func run() async throws {
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL, measure)
    }

    private func measure(_ server: BenchmarkServer) async throws {
        print("Server: \(server)")
        let (reader, community) = try await fill(server.configuration)
        print("Data: \(communities) communities × 20 members, \(posts) posts and \(expenses) expenses (4 splits) each")

        let asReader = TransactionOptions(localSettings: ["role": "orbit_app", "app.current_user_id": reader.uuidString])
        var results: [String: [Double]] = [:]
        try await PostgresConnection.withConnection(server.configuration) { connection in
            let feed: PostgresQuery = """
                SELECT id, author_id, content, created_at FROM posts
                WHERE community_id = \(community) AND deleted_at IS NULL
                ORDER BY created_at DESC, id DESC LIMIT 20
                """
            let live: PostgresQuery = "SELECT user_id, currency, balance FROM balances WHERE community_id = \(community)"
            let snapshot: PostgresQuery =
                "SELECT user_id, currency, balance FROM orbit_private.balances_snapshot WHERE community_id = \(community)"
            try await connection.executeScript("SET ROLE orbit_admin; REFRESH MATERIALIZED VIEW orbit_private.balances_snapshot; RESET ROLE")

            // Sanity: both roles see the same 20 feed rows, and live balances equal the snapshot.
            let ownerRows = try await connection.query(feed).count
            let appRows = try await connection.withTransaction(asReader) { try await $0.query(feed).count }
            let liveRows = try await connection.withTransaction(asReader) { try await $0.query(live).count }
            let snapshotRows = try await connection.query(snapshot).count
            guard ownerRows == 20, appRows == 20, liveRows == snapshotRows, liveRows > 0 else {
                throw CleanExit.message("unexpected rows: owner \(ownerRows), orbit_app \(appRows), live \(liveRows), snapshot \(snapshotRows)")
            }

            for round in 1...rounds {
                results["feed_owner", default: []].append(try await rate { try await connection.query(feed) })
                results["feed_orbit_app", default: []].append(
                    try await connection.withTransaction(asReader) { connection in try await rate { try await connection.query(feed) } }
                )
                results["request_owner", default: []].append(
                    try await rate(iterations / 4) {
                        try await connection.withTransaction { try await $0.query(feed) }
                    }
                )
                results["request_orbit_app", default: []].append(
                    try await rate(iterations / 4) {
                        try await connection.withTransaction(asReader) { try await $0.query(feed) }
                    }
                )
                results["balances_snapshot", default: []].append(try await rate(iterations / 4) { try await connection.query(snapshot) })
                results["balances_live", default: []].append(
                    try await connection.withTransaction(asReader) { connection in try await rate(iterations / 4) { try await connection.query(live) }
                    }
                )
                print("round \(round): " + results.keys.sorted().map { "\($0)=\(Int(results[$0]!.last!))/s" }.joined(separator: " "))
            }
        }
        func median(_ key: String) -> Double {
            let values = results[key, default: []].sorted()
            return values.isEmpty ? 0 : values[values.count / 2]
        }
        print("")
        for key in results.keys.sorted() {
            print("RESULT client=orbitcove workload=\(key) ops_per_sec=\(Int(median(key)))")
        }
        print("")
        print("RLS cost, feed query alone:      owner / orbit_app = \(format(median("feed_owner") / median("feed_orbit_app"), 2))×")
        print(
            "RLS cost, whole request (BEGIN, SET LOCAL ROLE, set_config, feed, COMMIT vs BEGIN, feed, COMMIT): "
                + "\(format(median("request_owner") / median("request_orbit_app"), 2))×")
        print(
            "Live balances view vs materialized snapshot, one community: snapshot / live = "
                + "\(format(median("balances_snapshot") / median("balances_live"), 2))×")
    }

    /// Operations per second of `count` sequential runs of `body`.
    private func rate(_ count: Int? = nil, _ body: () async throws -> some Any) async throws -> Double {
        let count = count ?? iterations
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<count { _ = try await body() }
        return Double(count) / (clock.now - start).seconds
    }

    /// Users, communities, members, posts and expenses, as the owner, in bulk. Returns a reader
    /// (a member of two communities) and one of their communities.
    private func fill(_ configuration: PostgresConfiguration) async throws -> (UUID, UUID) {
        try await PostgresConnection.withConnection(configuration) { connection in
            let users = max(communities * 10, 20)
            try await connection.query(
                """
                INSERT INTO users (apple_id, email, display_name)
                SELECT 'bench-' || i, 'bench-' || i || '@example.com', 'User ' || i FROM generate_series(1, \(users)) AS i
                """
            )
            // Community c has members ((c-1)*10 + k) mod users + 1 for k in 0..<20; k = 0 creates it.
            try await connection.query(
                """
                INSERT INTO communities (name, created_by)
                SELECT 'Community ' || c, u.id FROM generate_series(1, \(communities)) AS c
                JOIN users u ON u.apple_id = 'bench-' || (((c - 1) * 10) % \(users) + 1)
                """
            )
            try await connection.query(
                """
                INSERT INTO members (community_id, user_id, role)
                SELECT c.id, u.id, CASE WHEN u.id = c.created_by THEN 'admin'::member_role ELSE 'member' END
                FROM (SELECT id, created_by, row_number() OVER (ORDER BY name) AS n FROM communities) c
                CROSS JOIN generate_series(0, 19) AS k
                JOIN users u ON u.apple_id = 'bench-' || (((c.n - 1) * 10 + k) % \(users) + 1)
                ON CONFLICT DO NOTHING
                """
            )
            try await connection.query(
                """
                INSERT INTO posts (community_id, author_id, content, created_at)
                SELECT c.id, m.user_id, 'Post ' || p, now() - p * interval '1 minute'
                FROM communities c
                CROSS JOIN generate_series(1, \(posts)) AS p
                JOIN LATERAL (SELECT user_id FROM members WHERE community_id = c.id ORDER BY user_id OFFSET p % 20 LIMIT 1) m ON true
                """
            )
            try await connection.query(
                """
                WITH t AS (
                    INSERT INTO transactions (community_id, created_by, type, description, total_amount, paid_by, transaction_date)
                    SELECT c.id, m.user_id, 'expense', 'Expense ' || e, 400, m.user_id, current_date
                    FROM communities c
                    CROSS JOIN generate_series(1, \(expenses)) AS e
                    JOIN LATERAL (SELECT user_id FROM members WHERE community_id = c.id ORDER BY user_id OFFSET e % 20 LIMIT 1) m ON true
                    RETURNING id, community_id
                )
                INSERT INTO splits (transaction_id, user_id, amount)
                SELECT t.id, m.user_id, 100 FROM t
                JOIN LATERAL (SELECT user_id FROM members WHERE community_id = t.community_id ORDER BY random() LIMIT 4) m ON true
                """
            )
            try await connection.executeScript("VACUUM ANALYZE")
            let row = try await connection.query(
                """
                SELECT m.user_id, m.community_id FROM members m
                WHERE m.user_id IN (SELECT user_id FROM members GROUP BY user_id HAVING count(*) >= 2)
                ORDER BY m.user_id, m.community_id LIMIT 1
                """
            ).single()
            return try row.decode((UUID, UUID).self)
        }
    }
}
