import ArgumentParser
import Foundation
import Logging
import OrbitCore
import OrbitMigrations
import OrbitPostgres

/// `orbit-bench events`: listing a month of a busy community's calendar.
struct EventsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Time listing a month of events for a community with 10,000 events and 500 series, and show the query plans."
    )

    @Option(help: "Server to use (a superuser). Default: a throwaway local cluster.") var databaseURL: String?
    @Option(help: "One-off events, spread over two years.") var events = 10_000
    @Option(help: "Recurring series.") var series = 500
    @Option(help: "Calls to time.") var calls = 50

    func run() async throws {
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL, measure)
    }

    private func measure(_ server: BenchmarkServer) async throws {
        let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: 2))
        let services = OrbitServices(pool: pool)
        let admin = try await services.users.create(email: "bench@example.com", displayName: "Bench")
        let community = try await services.communities.create(
            name: "Busy club", settings: CommunitySettings(timezone: "America/New_York"), as: admin.id
        )
        try await fill(community.id, creator: admin.id, server.configuration)
        // A month in the middle of the data.
        let formatter = ISO8601DateFormatter()
        let from = try require(formatter.date(from: "2026-06-01T04:00:00Z"))
        let to = try require(formatter.date(from: "2026-07-01T04:00:00Z"))

        var entries: [EventOccurrence] = []
        var samples: [Double] = []
        for _ in 0..<calls {
            let clock = ContinuousClock()
            let start = clock.now
            entries = try await services.events.calendar(of: community.id, from: from, to: to, limit: 20_000, as: admin.id)
            samples.append((clock.now - start).seconds * 1000)
        }
        samples.sort()
        let computed = entries.filter(\.isComputed).count
        print("Data: \(events) one-off events over two years and \(series) series in one community (America/New_York)")
        print("A month (June 2026): \(entries.count) entries, \(computed) of them computed occurrences of series")
        print(
            "RESULT client=orbitcove workload=events_month ms_per_call_median=\(format(samples[samples.count / 2], 2)) "
                + "ms_per_call_p90=\(format(samples[samples.count * 9 / 10], 2)) calls=\(calls)")

        // The three statements of OrbitServices.calendar, as orbit_app, with their plans.
        try await pool.withTransaction(
            TransactionOptions(localSettings: ["role": "orbit_app", "app.current_user_id": admin.id.description])
        ) { connection in
            let seriesIDs = try await connection.query(
                "SELECT id FROM events WHERE community_id = \(community.id) AND recurrence_rule IS NOT NULL AND deleted_at IS NULL"
            ).map { try $0.decode("id", as: UUID.self) }
            let statements: [(String, PostgresQuery)] = [
                (
                    "one-off events and instances in the window",
                    """
                    EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id, starts_at FROM events
                    WHERE community_id = \(community.id) AND deleted_at IS NULL AND recurrence_rule IS NULL
                      AND starts_at >= \(from) AND starts_at < \(to) ORDER BY starts_at, id LIMIT 20000
                    """
                ),
                (
                    "series that can reach the window",
                    """
                    EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id, recurrence_rule FROM events
                    WHERE community_id = \(community.id) AND recurrence_rule IS NOT NULL AND deleted_at IS NULL AND starts_at < \(to)
                    """
                ),
                (
                    "instances of those series in the window",
                    """
                    EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT recurrence_parent_id, original_starts_at FROM events
                    WHERE recurrence_parent_id = ANY(\(seriesIDs))
                      AND original_starts_at >= \(from) AND original_starts_at < \(to)
                    """
                ),
            ]
            for (label, statement) in statements {
                print("\nPlan, \(label):")
                for row in try await connection.query(statement) { print("  " + String(try row.decode(0, as: String.self).prefix(200))) }
            }
        }
        await pool.close()
    }

    /// One-off events every ~100 minutes over two years; series weekly, biweekly, monthly and daily,
    /// started over the past year; a few answered occurrences each.
    private func fill(_ community: CommunityID, creator: UserID, _ configuration: PostgresConfiguration) async throws {
        try await PostgresConnection.withConnection(configuration) { connection in
            try await connection.query(
                """
                INSERT INTO events (community_id, created_by, title, starts_at, ends_at, category)
                SELECT \(community), \(creator), 'Event ' || i, timestamptz '2025-07-01T00:00:00Z' + i * (interval '2 years' / \(events)),
                    timestamptz '2025-07-01T01:00:00Z' + i * (interval '2 years' / \(events)), 'other'
                FROM generate_series(1, \(events)) AS i
                """
            )
            try await connection.query(
                """
                INSERT INTO events (community_id, created_by, title, starts_at, ends_at, category, recurrence_rule, recurrence_timezone)
                SELECT \(community), \(creator), 'Series ' || i, timestamptz '2025-09-01T22:00:00Z' + (i % 300) * interval '1 day',
                    timestamptz '2025-09-01T23:30:00Z' + (i % 300) * interval '1 day', 'practice',
                    (ARRAY['FREQ=WEEKLY', 'FREQ=WEEKLY;INTERVAL=2', 'FREQ=MONTHLY;BYDAY=2TU', 'FREQ=DAILY;COUNT=400', 'FREQ=WEEKLY;BYDAY=MO,WE,FR'])[i % 5 + 1],
                    'America/New_York'
                FROM generate_series(1, \(series)) AS i
                """
            )
            try await connection.executeScript("VACUUM ANALYZE events")
        }
    }
}

private enum BenchError: Error { case missing }

private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw BenchError.missing }
    return value
}
