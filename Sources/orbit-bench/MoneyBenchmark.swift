import ArgumentParser
import Foundation
import Logging
import OrbitCore
import OrbitMigrations
import OrbitPostgres

/// `orbit-bench money`: balances of a community with 100,000 transactions and 1,000,000 splits
/// (live view vs materialized snapshot, and the refresh), and adding an expense with 10 splits,
/// against pgbench running the same SQL.
struct MoneyBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "money",
        abstract: "Balances read and refresh times on 100,000 transactions; expense inserts per second vs pgbench."
    )

    @Option(help: "Server to use (a superuser). Default: a throwaway local cluster.") var databaseURL: String?
    @Option(help: "Transactions in the community.") var transactions = 100_000
    @Option(help: "Splits per transaction.") var splits = 10
    @Option(help: "Members of the community.") var members = 50
    @Option(help: "Balance reads to time.") var reads = 20
    @Option(help: "Reads of who owes whom to time (p50 and p99).") var pairReads = 200
    @Option(help: "Seconds per insert run (ours and pgbench's).") var seconds = 10
    @Flag(help: "Hold /dev/cpu_dma_latency at 0 (root) so idle vCPUs poll instead of halting; see docs/benchmarks.md.")
    var pollIdle = false

    func run() async throws {
        let latencyHold = pollIdle ? try CPULatencyHold() : nil
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL, measure)
        withExtendedLifetime(latencyHold) {}
    }

    private func measure(_ server: BenchmarkServer) async throws {
        let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: 2))
        let services = OrbitServices(pool: pool)
        let actor = try await services.users.create(email: "bench@example.com", displayName: "Bench").id
        let community = try await services.communities.create(name: "Money club", as: actor).id
        let clock = ContinuousClock()
        let loadStart = clock.now
        let people = try await fill(community, actor: actor, server.configuration)
        print(
            "Data: \(transactions) transactions, \(transactions * splits) splits, \(members) members (loaded in \(Int((clock.now - loadStart).seconds)) s)"
        )

        // Reads.
        func median(_ body: () async throws -> Void) async throws -> Double {
            var samples: [Double] = []
            for _ in 0..<reads {
                let start = clock.now
                try await body()
                samples.append((clock.now - start).seconds * 1000)
            }
            return samples.sorted()[samples.count / 2]
        }
        // The alternative: aggregating the ledger lines on every read (what `balances` was before).
        let plain = try await median {
            try await pool.withTransaction(TransactionOptions(localSettings: ["role": "orbit_app", "app.current_user_id": actor.description])) {
                connection in
                _ = try await connection.query(
                    """
                    SELECT user_id, currency, sum(amount)::bigint AS balance FROM orbit.balance_entries
                    WHERE community_id = \(community) GROUP BY user_id, currency
                    """
                )
            }
        }
        /// (p50, p99) in ms of `count` runs of `body`.
        func percentiles(_ count: Int, _ body: () async throws -> Void) async throws -> (Double, Double) {
            var samples: [Double] = []
            for _ in 0..<count {
                let start = clock.now
                try await body()
                samples.append((clock.now - start).seconds * 1000)
            }
            samples.sort()
            return (samples[samples.count / 2], samples[min(samples.count - 1, samples.count * 99 / 100)])
        }
        let firstRefresh = clock.now
        _ = try await services.settlements.refreshBalancesSnapshot()
        let firstRefreshMs = (clock.now - firstRefresh).seconds * 1000
        let snapshotOnly = try await median { _ = try await services.settlements.balances(in: community, as: actor) }
        // Who owes whom (issue 54, item 2): every pair of the 50, from the pairs' snapshot.
        let pairsSnapshot = try await percentiles(pairReads) { _ = try await services.settlements.pairs(in: community, as: actor) }
        // 1,000 expenses (10,000 splits, 20,000 journal rows) since the snapshot.
        for _ in 0..<1000 {
            _ = try await services.expenses.addExpense(
                in: community, description: "since", total: Money(minorUnits: 1000, currency: .usd), paidBy: actor,
                split: .equal(Array(people.prefix(splits)).map(UserID.init)),
                as: actor)
        }
        let withDelta = try await median { _ = try await services.settlements.balances(in: community, as: actor) }
        let pairsWithDelta = try await percentiles(pairReads) { _ = try await services.settlements.pairs(in: community, as: actor) }
        let other = UserID(people.first { $0 != actor.uuid } ?? actor.uuid)
        let pairWith = try await percentiles(pairReads) { _ = try await services.settlements.pair(in: community, with: other, as: actor) }
        let refreshConcurrent = try await median { _ = try await services.settlements.refreshBalancesSnapshot() }
        print("")
        print("| balances of one community (\(transactions) transactions, \(transactions * splits) splits) | median ms |")
        print("|---|---|")
        print("| plain aggregate of the ledger, as orbit_app | \(format(plain, 1)) |")
        print("| snapshot + empty journal | \(format(snapshotOnly, 2)) |")
        print("| snapshot + journal of 1,000 expenses since | \(format(withDelta, 2)) |")
        print("| first refresh CONCURRENTLY (after the bulk load) | \(format(firstRefreshMs, 0)) |")
        print("| refresh CONCURRENTLY + journal pruning (both snapshots) | \(format(refreshConcurrent, 0)) |")
        print("")
        print("| who owes whom (\(members) members; \(pairReads) reads) | p50 ms | p99 ms | goal p99 |")
        print("|---|---|---|---|")
        print("| every pair, snapshot + empty journal | \(format(pairsSnapshot.0, 2)) | \(format(pairsSnapshot.1, 2)) | ≤ 50 |")
        print("| every pair, snapshot + journal of 1,000 expenses since | \(format(pairsWithDelta.0, 2)) | \(format(pairsWithDelta.1, 2)) | ≤ 50 |")
        print("| one pair: figure + first page of 50 entries | \(format(pairWith.0, 2)) | \(format(pairWith.1, 2)) | |")
        try await pool.withTransaction(TransactionOptions(localSettings: ["role": "orbit_app", "app.current_user_id": actor.description])) {
            connection in
            print("\nPlan of a balances read after the refresh, as orbit_app:")
            for row in try await connection.query(
                "EXPLAIN (ANALYZE, COSTS OFF, TIMING ON, SUMMARY ON) SELECT user_id, currency, balance FROM balances WHERE community_id = \(community) AND balance <> 0"
            ) { print("  " + String(try row.decode(0, as: String.self).prefix(160))) }
        }

        // Writes: one expense with 10 splits per transaction, as a request of the acting user.
        let between = Array(people.prefix(splits))
        // The same statements as ours below; pgbench binds :community, :actor and :users as parameters.
        let script = """
            BEGIN;
            SELECT set_config('role', 'orbit_app', true), set_config('app.current_user_id', :actor, true);
            WITH t AS (INSERT INTO transactions (community_id, created_by, type, description, total_amount, currency, paid_by, transaction_date)
                       VALUES (:community::uuid, :actor::uuid, 'expense', 'bench', :total::int, 'USD', :actor::uuid, current_date) RETURNING id)
            INSERT INTO splits (transaction_id, user_id, amount) SELECT t.id, u, 100 FROM t, unnest(:users::uuid[]) AS u;
            COMMIT;

            """
        let variables = [
            "community": community.description, "actor": actor.description, "total": String(100 * splits),
            "users": "{" + between.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}",
        ]
        // CPU per expense, ours and the server's (docs/benchmarks.md, "Adding an expense").
        let serverCPU = await server.cpuMeter()
        var cpu = CPUPerCall(server: serverCPU)
        let oursRoundTripsBefore = pool.roundTrips
        cpu.start()
        let (ours, oursCount) = try await pool.withConnection { connection in
            let deadline = clock.now + .seconds(seconds)
            var count = 0
            let start = clock.now
            let options = TransactionOptions(localSettings: ["role": "orbit_app", "app.current_user_id": actor.description])
            while clock.now < deadline {
                try await connection.withTransaction(options) { connection in
                    try await connection.query(
                        """
                        WITH t AS (INSERT INTO transactions (community_id, created_by, type, description, total_amount, currency, paid_by, transaction_date)
                                   VALUES (\(community), \(actor), 'expense', 'bench', \(100 * splits), 'USD', \(actor), current_date) RETURNING id)
                        INSERT INTO splits (transaction_id, user_id, amount) SELECT t.id, u, 100 FROM t, unnest(\(between)) AS u
                        """
                    )
                }
                count += 1
            }
            return (Double(count) / (clock.now - start).seconds, count)
        }
        let oursCPU = cpu.stop(calls: oursCount)
        let oursRoundTrips = Double(pool.roundTrips - oursRoundTripsBefore) / Double(oursCount)
        let serviceRoundTripsBefore = pool.roundTrips
        var serviceCount = 0
        cpu.start()
        let serviceStart = clock.now
        while clock.now < serviceStart + .seconds(seconds) {
            _ = try await services.expenses.addExpense(
                in: community, description: "bench", total: Money(minorUnits: 1000, currency: .usd), paidBy: actor,
                split: .equal(between.map(UserID.init)), as: actor
            )
            serviceCount += 1
        }
        let service = Double(serviceCount) / (clock.now - serviceStart).seconds
        let serviceCPU = cpu.stop(calls: serviceCount)
        let serviceRoundTrips = Double(pool.roundTrips - serviceRoundTripsBefore) / Double(serviceCount)
        let pgbench = try PgbenchRunner(server: server, seconds: seconds)
        cpu.start()
        let pgbenchResult = try await pgbench.run(sql: script, workload: "expense10", variables: variables)
        let pgbenchServerCPU = cpu.stop(calls: pgbenchResult.count).server
        let theirs = pgbenchResult.opsPerSecond
        print("")
        print("RESULT client=orbitcove workload=expense10_sql ops_per_sec=\(format(ours, 1))")
        print("RESULT client=orbitcove workload=expense10_service ops_per_sec=\(format(service, 1))")
        print("RESULT client=pgbench workload=expense10_sql ops_per_sec=\(format(theirs, 1))")
        print(
            "Round trips per expense: the same SQL in a transaction \(format(oursRoundTrips, 1)); the service \(format(serviceRoundTrips, 1)); pgbench 4 (BEGIN, settings, INSERT, COMMIT)"
        )
        print(
            "Same SQL: OrbitCove / pgbench = \(format(ours / theirs, 2))x; full service (checks, splitting, reading back) / pgbench = \(format(service / theirs, 2))x"
        )
        func micros(_ value: Double?) -> String { value.map { format($0, 0) } ?? "—" }
        print("")
        print("| an expense with 10 splits | per second | client CPU µs per call | server CPU µs per call |")
        print("|---|---|---|---|")
        print("| the same SQL, our client | \(format(ours, 1)) | \(micros(oursCPU.client)) | \(micros(oursCPU.server)) |")
        print(
            "| the service (checks, splitting, history, notifications, reading back) | \(format(service, 1)) | \(micros(serviceCPU.client)) | \(micros(serviceCPU.server)) |"
        )
        print("| pgbench, the same SQL | \(format(theirs, 1)) | \(micros(pgbenchResult.cpuMicrosecondsPerOp)) | \(micros(pgbenchServerCPU)) |")
        if serverCPU == nil { print("(server CPU: not measured, the server is not on this machine or its data directory is not readable here)") }
        await pool.close()
    }

    /// Members, then transactions and splits in bulk with triggers off (their checks hold by
    /// construction: splits add up, everyone is a member).
    private func fill(_ community: CommunityID, actor: UserID, _ configuration: PostgresConfiguration) async throws -> [UUID] {
        try await PostgresConnection.withConnection(configuration) { connection in
            try await connection.query(
                "INSERT INTO users (apple_id, email, display_name) SELECT 'money-' || i, 'money' || i || '@example.com', 'M' || i FROM generate_series(1, \(members - 1)) AS i"
            )
            try await connection.query("INSERT INTO members (community_id, user_id) SELECT \(community), id FROM users WHERE apple_id LIKE 'money-%'")
            let people = try await connection.query("SELECT user_id FROM members WHERE community_id = \(community) ORDER BY user_id")
                .map { try $0.decode("user_id", as: UUID.self) }
            try await connection.executeScript("SET session_replication_role = replica")
            try await connection.query(
                """
                WITH people AS (SELECT array_agg(user_id ORDER BY user_id) AS ids FROM members WHERE community_id = \(community)),
                     t AS (
                        INSERT INTO transactions (community_id, created_by, type, description, total_amount, currency, paid_by, transaction_date)
                        SELECT \(community), people.ids[i % array_length(people.ids, 1) + 1], 'expense', 'Expense ' || i, \(100 * splits),
                            CASE WHEN i % 10 = 0 THEN 'EUR' ELSE 'USD' END, people.ids[i % array_length(people.ids, 1) + 1], current_date
                        FROM generate_series(1, \(transactions)) AS i, people
                        RETURNING id, paid_by
                     ),
                     numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM t)
                INSERT INTO splits (transaction_id, user_id, amount, community_id)
                SELECT numbered.id, people.ids[(numbered.n + k) % array_length(people.ids, 1) + 1], 100, \(community)
                FROM numbered CROSS JOIN generate_series(0, \(splits - 1)) AS k, people
                """
            )
            try await connection.executeScript("SET session_replication_role = DEFAULT")
            try await connection.executeScript("VACUUM ANALYZE")
            return people
        }
    }
}

/// CPU per call over a stretch of calls: this process's (the client's) and, where it can be read,
/// the server's (every process of the cluster, ServerCPU). In microseconds.
struct CPUPerCall {
    let server: ServerCPU?
    private var clientStart = 0.0
    private var serverStart: Double?

    init(server: ServerCPU?) { self.server = server }

    mutating func start() {
        clientStart = cpuSeconds()
        serverStart = server?.seconds()
    }

    func stop(calls: Int) -> (client: Double, server: Double?) {
        let count = Double(max(calls, 1))
        let client = (cpuSeconds() - clientStart) * 1e6 / count
        guard let serverStart, let now = server?.seconds() else { return (client, nil) }
        return (client, (now - serverStart) * 1e6 / count)
    }
}
