import ArgumentParser
import Foundation
import OrbitCore
import OrbitPostgres
import OrbitScaleData

/// `orbit-bench sync`: the change feed (issues 20 and 38). The randomized soak (writers with
/// overlapping transactions of random length, others held open, renames, a member leaving and
/// rejoining, retention while a follower is in the middle of a window; two followers pulling all
/// along, each copy compared with a fresh sync) for many rounds; then pulling a 100,000-change backlog, and what the change log costs
/// an expense insert (with and without its triggers, alternating, in one run).
struct SyncBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Soak rounds of the change feed under concurrent writers; pull throughput; the log's cost on writes."
    )

    @Option(help: "Server to use (a superuser). Default: a throwaway local cluster.") var databaseURL: String?
    @Option(help: "Soak rounds (each a new community).") var rounds = 500
    @Option(help: "Writers per round.") var writers = 3
    @Option(help: "Transactions per writer per round.") var transactions = 8
    @Option(help: "Transactions held open (up to 300 ms) beside the writers, per round.") var held = 4
    @Option(help: "Changes in the backlog to pull (0: skip).") var backlog = 100_000
    @Flag(help: "A backlog of posts, events and chores, a third each (default: posts).") var mixed = false
    @Flag(inversion: .prefixedNo, help: "Also pull the backlog reading each entity with its own query (the reads before issue 38).")
    var comparePerEntity = true
    @Option(help: "Expenses per timed run of the write cost (0: skip).") var expenses = 2000
    @Option(help: "Concurrent writers for the log's cost on many writers at once (0: skip).") var concurrentWriters = 32
    @Option(help: "Expenses per concurrent writer per timed run.") var expensesPerWriter = 100

    func run() async throws {
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL, measure)
    }

    private func measure(_ server: BenchmarkServer) async throws {
        let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: 4))
        do {
            try await measure(server, OrbitServices(pool: pool))
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }

    private func measure(_ server: BenchmarkServer, _ services: OrbitServices) async throws {
        var total = SyncSoak.Report()
        var failedRounds = 0
        let clock = ContinuousClock()
        let start = clock.now
        for round in 0..<rounds {
            let report = try await SyncSoak.round(
                services: services, configuration: server.configuration, writers: writers, transactions: transactions, held: held,
                seed: UInt64(round + 1))
            total.add(report)
            if !report.mismatches.isEmpty {
                failedRounds += 1
                print("round \(round + 1) (seed \(round + 1)): the follower differs from a fresh sync at \(report.mismatches.prefix(5))")
            }
        }
        print("Soak: \(rounds) rounds in \(Int((clock.now - start).seconds)) s; \(total); rounds that differ: \(failedRounds)")

        if backlog > 0 { try await pullBacklog(services, server.configuration) }
        if expenses > 0 { try await writeCost(services, server.configuration) }
        if concurrentWriters > 0 && expensesPerWriter > 0 { try await concurrentWriteCost(server.configuration) }
        if failedRounds > 0 { throw ExitCode.failure }
    }

    /// A follower up to date, then `backlog` changes (posts inserted, half of them edited), then
    /// the time to pull them all, 1,000 a page.
    private func pullBacklog(_ services: OrbitServices, _ configuration: PostgresConfiguration) async throws {
        let admin = try await services.users.create(email: "backlog@example.com", displayName: "Backlog").id
        let community = try await services.communities.create(name: "Backlog", as: admin).id
        var cursor: String?
        var page: ChangePage
        repeat {
            page = try await services.sync.changes(of: community, cursor: cursor, limit: 1000, as: admin)
            cursor = page.nextCursor
        } while page.hasMore
        let posts = backlog * 2 / 3
        try await PostgresConnection.withConnection(configuration) { connection in
            if mixed {
                // A third of the inserts each: posts, events (one-off) and chores (one-off, due
                // tomorrow: their "done" is read too).
                let third = posts / 3
                try await connection.query(
                    "INSERT INTO posts (community_id, author_id, content) SELECT \(community), \(admin), 'post ' || i FROM generate_series(1, \(posts - 2 * third)) i"
                )
                try await connection.query(
                    """
                    INSERT INTO events (community_id, created_by, title, starts_at)
                    SELECT \(community), \(admin), 'event ' || i, now() + i * interval '1 hour' FROM generate_series(1, \(third)) i
                    """
                )
                try await connection.query(
                    """
                    INSERT INTO chores (community_id, created_by, title, points, due_at)
                    SELECT \(community), \(admin), 'chore ' || i, 10, now() + interval '1 day' FROM generate_series(1, \(third)) i
                    """
                )
            } else {
                try await connection.query(
                    "INSERT INTO posts (community_id, author_id, content) SELECT \(community), \(admin), 'post ' || i FROM generate_series(1, \(posts)) i"
                )
            }
            try await connection.query(
                "UPDATE posts SET content = content || ' (edited)' WHERE id IN (SELECT id FROM posts WHERE community_id = \(community) LIMIT \(backlog - posts))"
            )
            // As autovacuum would have on a running server. Without it the pull's rate was a
            // matter of whether autovacuum happened to get there first (the tables went from
            // empty to 100,000 rows within seconds): the planner's guesses for empty tables
            // read the entities 3 to 25 times slower (docs/benchmarks.md, "Sync").
            try await connection.executeScript("VACUUM ANALYZE")
        }
        // The same backlog pulled from the same cursor, alternately reading each entity with its
        // own query (as before issue 38) and a page's entities of a kind with one query. This
        // process's resident memory is sampled after every page: pulling is by pages, so it
        // should not grow with the backlog.
        let from = cursor
        var rates: [Bool: [Double]] = [:]
        var pulled = 0
        let before = Self.residentMiB()
        var peak = before
        for run in 0..<(comparePerEntity ? 4 : 2) {
            let oneAtATime = comparePerEntity && run % 2 == 0
            let clock = ContinuousClock()
            let start = clock.now
            var position = from
            pulled = 0
            try await SyncService.$loadsOneAtATime.withValue(oneAtATime) {
                repeat {
                    page = try await services.sync.changes(of: community, cursor: position, limit: 1000, as: admin)
                    pulled += page.changes.count
                    position = page.nextCursor
                    peak = max(peak, Self.residentMiB())
                } while page.hasMore
            }
            rates[oneAtATime, default: []].append(Double(backlog) / (clock.now - start).seconds)
        }
        let batched = rates[false]?.max() ?? 0
        let memory = "resident memory \(Int(before)) MiB before the pulls, at most \(Int(peak)) MiB during them"
        guard comparePerEntity else {
            print(
                "Backlog: \(backlog) changes logged (\(posts) \(mixed ? "posts, events and chores" : "posts"), \(backlog - posts) edits), pulled as \(pulled) entity changes, "
                    + "best of two: one query per kind per page \(Int(batched)) changes/s; \(memory)")
            return
        }
        let single = rates[true]?.max() ?? 0
        print(
            "Backlog: \(backlog) changes logged (\(posts) \(mixed ? "posts, events and chores" : "posts"), \(backlog - posts) edits), pulled as \(pulled) entity changes, best of two each: "
                + "one query per kind per page \(Int(batched)) changes/s, one query per entity \(Int(single)) changes/s "
                + "(\(String(format: "%.2f", single > 0 ? batched / single : 0))x); \(memory)")
    }

    /// This process's resident memory in MiB (Linux: /proc/self/statm; 0 where it cannot be read).
    private static func residentMiB() -> Double {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    /// Expense inserts (4 splits) through the service layer, alternating runs with the change
    /// log's triggers on and off, so both see the same machine state.
    private func writeCost(_ services: OrbitServices, _ configuration: PostgresConfiguration) async throws {
        let admin = try await services.users.create(email: "writes@example.com", displayName: "Writer").id
        let community = try await services.communities.create(name: "Writes", as: admin).id
        var people = [admin]
        for index in 0..<3 {
            let user = try await services.users.create(email: "writes\(index)@example.com", displayName: "W\(index)").id
            _ = try await services.members.add(user, to: community, as: admin)
            people.append(user)
        }
        let amount = try Money(parsing: "12.34", currency: .usd)
        func timed() async throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<expenses {
                _ = try await services.expenses.addExpense(
                    in: community, description: "Pizza", total: amount, paidBy: admin, split: .equal(people), as: admin)
            }
            return Double(expenses) / (clock.now - start).seconds
        }
        let (withMedian, withoutMedian) = try await Self.alternating(configuration, timed)
        print(
            "Write cost: add expense (4 splits) \(Int(withMedian))/s with the change log, \(Int(withoutMedian))/s without "
                + "(medians of 3 alternating runs of \(expenses)): \(String(format: "%.2f", withMedian / withoutMedian))x")
    }

    /// The medians of three runs of `timed` (a rate) with the change log's triggers off and
    /// three with them on, alternating after a warm-up, so both see the same machine state.
    private static func alternating(_ configuration: PostgresConfiguration, _ timed: () async throws -> Double) async throws
        -> (with: Double, without: Double)
    {
        _ = try await timed()  // warm-up
        var with: [Double] = []
        var without: [Double] = []
        for _ in 0..<3 {
            try await changeLog(on: false, configuration)
            without.append(try await timed())
            try await changeLog(on: true, configuration)
            with.append(try await timed())
        }
        return (with.sorted()[1], without.sorted()[1])
    }

    /// Turns the change log's triggers on the tables an expense writes on or off.
    private static func changeLog(on: Bool, _ configuration: PostgresConfiguration) async throws {
        try await PostgresConnection.withConnection(configuration) { connection in
            let triggers = try await connection.query(
                """
                SELECT t.tgrelid::regclass::text, t.tgname::text FROM pg_trigger t
                WHERE t.tgrelid = ANY(ARRAY['transactions', 'splits', 'transaction_payers']::regclass[]) AND t.tgname LIKE 'trigger\\_change\\_%'
                """
            ).map { try $0.decode((String, String).self) }
            for (table, trigger) in triggers {
                try await connection.query("ALTER TABLE \(unescaped: table) \(unescaped: on ? "ENABLE" : "DISABLE") TRIGGER \(unescaped: trigger)")
            }
        }
    }

    /// What the log costs many writers at once (issue 38: a transaction that NOTIFYs takes a
    /// lock of the whole database for its commit, so notifying commits queue behind one another;
    /// the log no longer notifies, and this measures that it costs them no more than one).
    /// `concurrentWriters` writers, each adding expenses in a community of its own (no lock of
    /// the data in common), alternating runs with the change log's triggers on and off.
    private func concurrentWriteCost(_ configuration: PostgresConfiguration) async throws {
        let pool = ConnectionPool(configuration: configuration, options: .init(maxConnections: concurrentWriters))
        do {
            try await concurrentWriteCost(OrbitServices(pool: pool), configuration)
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }

    private func concurrentWriteCost(_ services: OrbitServices, _ configuration: PostgresConfiguration) async throws {
        var writers: [(admin: UserID, community: CommunityID, people: [UserID])] = []
        for writer in 0..<concurrentWriters {
            let admin = try await services.users.create(email: "concurrent\(writer)@example.com", displayName: "C\(writer)").id
            let community = try await services.communities.create(name: "Concurrent \(writer)", as: admin).id
            var people = [admin]
            for index in 0..<3 {
                let user = try await services.users.create(email: "concurrent\(writer).\(index)@example.com", displayName: "C\(writer).\(index)").id
                _ = try await services.members.add(user, to: community, as: admin)
                people.append(user)
            }
            writers.append((admin, community, people))
        }
        let amount = try Money(parsing: "12.34", currency: .usd)
        let perWriter = expensesPerWriter
        func timed() async throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in writers {
                    group.addTask {
                        for _ in 0..<perWriter {
                            _ = try await services.expenses.addExpense(
                                in: writer.community, description: "Pizza", total: amount, paidBy: writer.admin, split: .equal(writer.people),
                                as: writer.admin)
                        }
                    }
                }
                try await group.waitForAll()
            }
            return Double(perWriter * writers.count) / (clock.now - start).seconds
        }
        let (withMedian, withoutMedian) = try await Self.alternating(configuration, timed)
        print(
            "Write cost, \(writers.count) concurrent writers: add expense (4 splits) \(Int(withMedian))/s with the change log, "
                + "\(Int(withoutMedian))/s without (medians of 3 alternating runs of \(perWriter * writers.count)): "
                + "\(String(format: "%.2f", withMedian / withoutMedian))x")
    }
}
