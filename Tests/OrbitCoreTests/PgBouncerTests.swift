import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Behind a transaction-mode pooler (pgbouncer with 2 server connections, started by the test
/// in front of its cluster): two users' requests interleave on the same server connections, and
/// neither ever sees the other's rows, because the role and the acting user are set per
/// transaction (`SET LOCAL`), never per session.
@Suite(
    "The service layer through pgbouncer in transaction mode",
    .enabled(if: pgBouncerUnavailable() == nil, "needs pgbouncer (scripts/ensure-deps.sh installs it) and the tests' own cluster")
)
struct PgBouncerTests {
    @Test("two users interleaving requests through pgbouncer in transaction mode never see each other's rows")
    func twoUsersInterleavingRequestsThroughPgbouncerIn() async throws {
        try await withTestDatabase { database in
            try await withPgBouncer { bouncer in
                var configuration = PostgresConfiguration(
                    parameters: bouncer.connectionParameters(database: database.name).map { (keyword: $0.0, value: $0.1) })
                // Named prepared statements do not survive a transaction behind the pooler.
                configuration.statementCacheCapacity = 0
                try await interleave(configuration)
            }
        }
    }

    func interleave(_ configuration: PostgresConfiguration) async throws {
        let pool = ConnectionPool(configuration: configuration, options: .init(maxConnections: 8, acquireTimeout: .seconds(30)))
        let services = OrbitServices(pool: pool)
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let alice = try await services.users.create(email: "alice-\(suffix)@example.com", displayName: "Alice").id
        let bob = try await services.users.create(email: "bob-\(suffix)@example.com", displayName: "Bob").id
        let alices = try await services.communities.create(name: "Alice's club", as: alice).id
        let bobs = try await services.communities.create(name: "Bob's club", as: bob).id
        for index in 0..<3 {
            _ = try await services.feed.createPost(in: alices, PostDraft(content: "alice \(index)"), as: alice)
            _ = try await services.feed.createPost(in: bobs, PostDraft(content: "bob \(index)"), as: bob)
        }

        let rounds = 100
        let leaks = try await withThrowingTaskGroup(of: [String].self) { group in
            for (user, own, other, name) in [(alice, alices, bobs, "alice"), (bob, bobs, alices, "bob")] {
                for _ in 0..<4 {
                    group.addTask {
                        var leaks: [String] = []
                        for _ in 0..<rounds {
                            let communities = try await services.communities.mine(as: user).map(\.community.id)
                            if communities != [own] { leaks.append("\(name) sees communities \(communities)") }
                            let feed = try await services.feed.page(of: own, limit: 10, as: user).items
                            if feed.contains(where: { $0.content?.hasPrefix(name) != true }) { leaks.append("\(name) sees another's post") }
                            if (try? await services.communities.get(other, as: user)) != nil { leaks.append("\(name) reads the other community") }
                            // Outside a transaction the session carries neither role nor user.
                            let row = try await pool.query(
                                "SELECT current_user::text AS role, coalesce(current_setting('app.current_user_id', true), '') AS user_id"
                            ).single()
                            let (role, setting) = try (row.decode("role", as: String.self), row.decode("user_id", as: String.self))
                            if role == "orbit_app" || !setting.isEmpty { leaks.append("session state leaked: \(role) \(setting)") }
                        }
                        return leaks
                    }
                }
            }
            return try await group.reduce(into: [String]()) { $0 += $1 }
        }
        let backends = try await pool.query("SELECT count(DISTINCT pid) AS n FROM pg_stat_activity WHERE datname = current_database()")
            .single().decode("n", as: Int64.self)
        await pool.close()
        #expect(leaks == [])
        // pgbouncer's pool: at most 2 server connections served all 8 client connections.
        #expect(backends <= 3)
    }
}
