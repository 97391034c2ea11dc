import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Reads that may be slightly stale go to a real hot standby (`pg_basebackup -R`, streaming from
/// a primary the test starts); writes and a user's reads right after their own write go to the
/// primary. Pausing the standby's WAL replay makes "stale" visible and deterministic.
@Suite("Read replicas: stale-tolerant reads on a hot standby, writes and read-your-writes on the primary")
struct ReplicaTests {
    struct Setup {
        let clusters: ReplicatedClusters
        let primary: ConnectionPool
        let replica: ConnectionPool
        let services: OrbitServices

        func close() async {
            await primary.close()
            await replica.close()
        }

        /// Stops (true) or resumes (false) the standby's WAL replay.
        func pauseReplay(_ paused: Bool) async throws {
            try await PostgresConnection.withConnection(clusters.standbyConfiguration) { connection in
                if paused {
                    try await connection.query("SELECT pg_wal_replay_pause()")
                } else {
                    try await connection.query("SELECT pg_wal_replay_resume()")
                }
            }
        }
    }

    func withReplica(_ body: (Setup) async throws -> Void) async throws {
        try await withReplicatedClusters { clusters in
            let primary = ConnectionPool(configuration: clusters.primaryConfiguration, options: .init(maxConnections: 4))
            let replica = ConnectionPool(configuration: clusters.standbyConfiguration, options: .init(maxConnections: 4))
            let setup = Setup(
                clusters: clusters, primary: primary, replica: replica,
                services: OrbitServices(pool: primary, replicas: ReadReplicas(pools: [replica])))
            do {
                try await body(setup)
                await setup.close()
            } catch {
                await setup.close()
                throw error
            }
        }
    }

    @Test("a user sees their own write at once; others read the standby; RLS holds there; no write reaches it")
    func readYourWrites() async throws {
        try await withReplica { setup in
            let services = setup.services
            let cast = try await Cast.make(services)
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Before the pause"), as: cast.admin)
            try await setup.clusters.waitForStandby()

            try await setup.pauseReplay(true)
            // A write while the standby stands still: it goes to the primary (the standby would refuse it).
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "During the pause"), as: cast.member)
            // The writer reads their write at once (the primary, since the standby has not replayed it).
            let own = try await services.feed.page(of: cast.community, as: cast.member).items.compactMap(\.content)
            #expect(own.contains("During the pause"))
            // Someone who wrote nothing reads the standby, which does not have it yet: reads do go there.
            let other = try await services.feed.page(of: cast.community, as: cast.admin).items.compactMap(\.content)
            #expect(other == ["Before the pause"])

            // Another server knows nothing of the write, but the position the caller carries back
            // (the API's Orbit-Read-After header) sends the read to the primary there too.
            let otherServer = OrbitServices(pool: setup.primary, replicas: ReadReplicas(pools: [setup.replica]))
            let token = RequestConsistency(readAfter: nil)
            try await RequestRunner.$consistency.withValue(token) {
                _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Carried along"), as: cast.member)
            }
            let position = try #require(token.wrote)
            let without = try await otherServer.feed.page(of: cast.community, as: cast.member).items.compactMap(\.content)
            #expect(!without.contains("Carried along"))
            let with = try await RequestRunner.$consistency.withValue(RequestConsistency(readAfter: position)) {
                try await otherServer.feed.page(of: cast.community, as: cast.member).items.compactMap(\.content)
            }
            #expect(with.contains("Carried along"))

            // Row-level security on the standby: an outsider is refused there as on the primary,
            // and orbit_app sees only its user's communities.
            let refused = await serviceError { try await services.feed.page(of: cast.community, as: cast.outsider) }
            #expect(refused?.code == .notFound)
            let visible = try await PostgresConnection.withConnection(setup.clusters.standbyConfiguration) { connection in
                try await connection.asApp(cast.outsider.uuid) { try await $0.query("SELECT count(*) FROM posts").single().decode(0, as: Int64.self) }
            }
            #expect(visible == 0)

            try await setup.pauseReplay(false)
            try await setup.clusters.waitForStandby()
            let caughtUp = try await services.feed.page(of: cast.community, as: cast.admin).items.compactMap(\.content)
            #expect(caughtUp.contains("During the pause") && caughtUp.contains("Carried along"))
        }
    }

    @Test("a replica that cannot be reached is skipped: reads come from the primary")
    func unreachableReplica() async throws {
        try await withReplica { setup in
            let nowhere = ConnectionPool(
                configuration: PostgresConfiguration(parameters: [(keyword: "host", value: "/nonexistent"), (keyword: "dbname", value: "x")]),
                options: .init(maxConnections: 1, acquireTimeout: .seconds(5)))
            let services = OrbitServices(pool: setup.primary, replicas: ReadReplicas(pools: [nowhere]))
            let cast = try await Cast.make(services)
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hello"), as: cast.admin)
            #expect(try await services.feed.page(of: cast.community, as: cast.member).items.count == 1)
            await nowhere.close()
        }
    }
}
