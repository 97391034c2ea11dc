import ArgumentParser
import Foundation
import LocalPostgres
import OrbitCore
import OrbitMigrations
import OrbitPostgres

/// `orbit-bench replica`: read throughput of the stale-tolerant reads (feed pages, member lists,
/// calendars) with the primary alone, and with a hot standby taking them, in one run.
///
/// Both clusters run on this machine, so they share its cores: the ratio shows what moving the
/// reads away from the primary costs or gains here, not what a second machine would add.
struct ReplicaBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replica",
        abstract: "Reads per second with the primary alone and with a streaming replica (started here) taking the stale-tolerant reads."
    )

    @Option(help: "Concurrent readers.") var readers = 8
    @Option(help: "Seconds per run.") var seconds = 10
    @Option(help: "Communities (each reader reads one).") var communities = 8
    @Option(help: "Posts per community.") var posts = 2000
    @Option(help: "Members per community.") var members = 50

    func run() async throws {
        let directory = "/tmp/orbitcove-replica-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        let installation = try PostgresInstallation.locate()
        let account = try ServerAccount.current()
        var settings = LocalCluster.durableSettings
        settings["shared_buffers"] = "256MB"
        let primary = LocalCluster(dataDirectory: "\(directory)/primary", settings: settings, installation: installation, account: account)
        let standby = LocalCluster(dataDirectory: "\(directory)/standby", settings: settings, installation: installation, account: account)
        defer {
            standby.destroyBlocking()
            primary.destroyBlocking()
            try? FileManager.default.removeItem(atPath: directory)
        }
        try await primary.prepare()
        try await primary.start()
        func configuration(_ cluster: LocalCluster, _ database: String) -> PostgresConfiguration {
            PostgresConfiguration(parameters: cluster.connectionParameters(database: database).map { (keyword: $0.0, value: $0.1) })
        }
        try await PostgresConnection.withConnection(configuration(primary, "postgres")) { try await $0.executeScript("CREATE DATABASE bench") }
        try await Migrator(configuration: configuration(primary, "bench"), catalog: try MigrationCatalog.embedded()).migrate()
        let cast = try await seed(configuration(primary, "bench"))
        try await standby.makeStandby(of: primary)
        try await standby.start()
        // Let the standby replay everything before timing reads against it.
        try await PostgresConnection.withConnection(configuration(primary, "bench")) { connection in
            try await connection.query("SELECT pg_logical_emit_message(false, 'orbit.sync', '')")
        }
        try await Task.sleep(for: .seconds(2))

        let primaryPool = ConnectionPool(configuration: configuration(primary, "bench"), options: .init(maxConnections: readers))
        let replicaPool = ConnectionPool(configuration: configuration(standby, "bench"), options: .init(maxConnections: readers))
        let primaryOnly = OrbitServices(pool: primaryPool)
        let replicated = OrbitServices(pool: primaryPool, replicas: ReadReplicas(pools: [replicaPool]))
        // Warm both servers' caches (the standby starts cold), then alternate the timed runs.
        _ = try await measure(primaryOnly, cast, seconds: 2)
        _ = try await measure(replicated, cast, seconds: 2)
        var alone = 0.0
        var withReplica = 0.0
        for _ in 0..<2 {
            alone += try await measure(primaryOnly, cast, seconds: seconds) / 2
            withReplica += try await measure(replicated, cast, seconds: seconds) / 2
        }
        await primaryPool.close()
        await replicaPool.close()
        print(
            "Data: \(communities) communities x \(posts) posts, \(members) members; \(readers) readers; 2 alternated runs of \(seconds) s "
                + "per setup after a warm-up; one machine, its vCPUs shared by both servers"
        )
        print("RESULT workload=stale_reads setup=primary_only reads_per_sec=\(format(alone, 0))")
        print("RESULT workload=stale_reads setup=primary_plus_replica reads_per_sec=\(format(withReplica, 0))")
        print("With the replica / primary alone = \(format(withReplica / alone, 2))x")
    }

    /// (community, a member to read as) pairs.
    private func seed(_ configuration: PostgresConfiguration) async throws -> [(CommunityID, UserID)] {
        let pool = ConnectionPool(configuration: configuration, options: .init(maxConnections: 2))
        let services = OrbitServices(pool: pool)
        var cast: [(CommunityID, UserID)] = []
        for index in 0..<communities {
            let admin = try await services.users.create(email: "admin\(index)@example.com", displayName: "Admin \(index)").id
            let community = try await services.communities.create(name: "Club \(index)", as: admin).id
            cast.append((community, admin))
        }
        try await pool.withConnection { connection in
            for (community, admin) in cast {
                try await connection.query(
                    """
                    WITH u AS (
                        INSERT INTO users (apple_id, email, display_name)
                        SELECT 'local.' || gen_random_uuid(), gen_random_uuid() || '@example.com', 'Member ' || i FROM generate_series(1, \(members)) i
                        RETURNING id
                    )
                    INSERT INTO members (community_id, user_id) SELECT \(community), id FROM u
                    """
                )
                try await connection.query(
                    """
                    INSERT INTO posts (community_id, author_id, type, content, created_at)
                    SELECT \(community), \(admin), 'text', 'Post ' || i, now() - i * interval '1 minute' FROM generate_series(1, \(posts)) i
                    """
                )
            }
            try await connection.executeScript("VACUUM ANALYZE")
        }
        await pool.close()
        return cast
    }

    /// Reads per second: each reader alternates a feed page, the member list and a month of events.
    private func measure(_ services: OrbitServices, _ cast: [(CommunityID, UserID)], seconds: Int) async throws -> Double {
        let deadline = ContinuousClock.now + .seconds(seconds)
        let now = Date()
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for reader in 0..<readers {
                let (community, user) = cast[reader % cast.count]
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        switch count % 3 {
                        case 0: _ = try await services.feed.page(of: community, as: user)
                        case 1: _ = try await services.members.list(of: community, as: user)
                        default: _ = try await services.events.calendar(of: community, from: now, to: now.addingTimeInterval(30 * 86_400), as: user)
                        }
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / Double(seconds)
    }
}
