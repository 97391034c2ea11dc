import Foundation
import LocalPostgres
import OrbitPostgres
import OrbitTestSupport
import Testing

/// The scheduled jobs run by several servers at once: here, several `orbitctl jobs run`
/// processes started together against one database.
@Suite("Scheduled jobs on several servers at once")
struct JobTests {
    static let processes = 4

    /// Starts `processes` runs of `orbitctl jobs run <arguments>` at the same moment.
    func runConcurrently(_ cli: Orbitctl, _ arguments: [String]) async throws -> [ProcessOutput] {
        try await withThrowingTaskGroup(of: ProcessOutput.self) { group in
            for _ in 0..<Self.processes {
                group.addTask { try await cli.run(arguments) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// How often each `notification id device token` pair appears in the `push <id> to <token> …`
    /// lines of `runs`.
    static func deliveries(in runs: [ProcessOutput]) -> [String: Int] {
        var deliveries: [String: Int] = [:]
        for run in runs {
            for line in run.output.split(separator: "\n") where line.hasPrefix("push ") {
                let words = line.split(separator: " ")
                deliveries["\(words[1]) \(words[3])", default: 0] += 1
            }
        }
        return deliveries
    }

    @Test("four processes delivering at once send each notification to each device of its user exactly once")
    func deliveryExactlyOnce() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let ids: [String] = try await database.withConnection { connection in
                try await connection.query(
                    """
                    WITH u AS (
                        INSERT INTO users (apple_id, email, display_name)
                        SELECT 'local.' || i, 'user' || i || '@example.com', 'User ' || i FROM generate_series(1, 30) i RETURNING id
                    ), d AS (
                        INSERT INTO devices (user_id, token, environment, bundle_id)
                        SELECT u.id, md5(u.id::text || k) || md5(k || u.id::text), 'production', 'app.orbitcove.ios'
                        FROM u, generate_series(1, 2) k RETURNING user_id, token
                    ), n AS (
                        INSERT INTO notifications (user_id, type, title, body)
                        SELECT u.id, 'new_post', 'Post ' || n, 'Hello' FROM u, generate_series(1, 10) n
                        RETURNING id, user_id
                    )
                    SELECT n.id::text || ' ' || d.token FROM n JOIN d USING (user_id)
                    """
                ).map { try $0.decode(0, as: String.self) }
            }
            let expected = Set(ids)
            #expect(expected.count == 600)

            let runs = try await runConcurrently(cli, ["jobs", "run", "--job", "delivery"])
            let failures = runs.filter { !$0.succeeded }.map(\.errors)
            #expect(failures.isEmpty, "\(failures)")
            let deliveries = Self.deliveries(in: runs)
            #expect(Set(deliveries.keys) == expected)
            let twice = deliveries.filter { $0.value > 1 }
            #expect(twice.count == 0, "pushes sent more than once")
            let undelivered = try await database.withConnection { connection in
                try await connection.query("SELECT count(*) FROM notifications WHERE delivered_at IS NULL").single().decode(0, as: Int64.self)
            }
            #expect(undelivered == 0)
        }
    }

    @Test("four processes deleting due accounts at once delete each exactly once and keep the cancelled one")
    func accountsDeletedOnce() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let due: [String] = try await database.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO users (apple_id, email, display_name, deletion_requested_at)
                    SELECT 'local.d' || i, 'due' || i || '@example.com', 'Due ' || i, now() - interval '8 days'
                    FROM generate_series(1, 200) i RETURNING id::text
                    """
                ).map { try $0.decode(0, as: String.self) }
            }
            let kept = try #require(try await cli.json("user", "create", "--email", "kept@example.com", "--name", "Kept")["id"] as? String)
            try await database.withConnection { connection in
                try await connection.query(
                    "UPDATE users SET deletion_requested_at = now() - interval '8 days' WHERE id = \(UUID(uuidString: kept))")
            }
            _ = try await cli.run("account", "cancel-deletion", "--as", "kept@example.com")

            let runs = try await runConcurrently(cli, ["jobs", "run", "--job", "accounts"])
            for run in runs { #expect(run.succeeded, "\(run.errors)") }
            let (audited, deleted, keptDeleted) = try await database.withConnection { connection in
                let audited = try await connection.query(
                    "SELECT target_id::text, count(*) FROM audit_log WHERE action = 'account.deleted' GROUP BY target_id"
                ).map { (try $0.decode(0, as: String.self), try $0.decode(1, as: Int64.self)) }
                let deleted = try await connection.query("SELECT count(*) FROM users WHERE deleted_at IS NOT NULL").single()
                    .decode(0, as: Int64.self)
                let keptDeleted = try await connection.query("SELECT deleted_at IS NOT NULL FROM users WHERE id = \(UUID(uuidString: kept))")
                    .single().decode(0, as: Bool.self)
                return (audited, deleted, keptDeleted)
            }
            #expect(Set(audited.map(\.0)) == Set(due))
            #expect(audited.filter { $0.1 != 1 }.count == 0, "accounts deleted more than once")
            #expect(deleted == 200)
            #expect(!keptDeleted)
        }
    }

    @Test("four processes sending debt reminders at once remind each debtor once a week")
    func debtRemindersOnce() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let community = try #require(
                try await cli.json(
                    "community", "create", "--name", "Club", "--settings", #"{"remindOldDebts": true, "remindOldDebtsDays": 14}"#, "--as",
                    "ada@example.com")["id"] as? String)
            // Fifty members, each owing Ada 10.00 for the balls she bought them (old enough from 14 days on).
            try await database.withConnection { connection in
                let club = try #require(UUID(uuidString: community))
                try await connection.query(
                    """
                    WITH people AS (
                        INSERT INTO users (apple_id, email, display_name)
                        SELECT 'local.m' || i, 'm' || i || '@example.com', 'M ' || i FROM generate_series(1, 50) i RETURNING id
                    ), joined AS (
                        INSERT INTO members (community_id, user_id) SELECT \(club), id FROM people RETURNING user_id
                    ), ball AS (
                        INSERT INTO transactions (community_id, created_by, type, description, total_amount, currency, paid_by, transaction_date)
                        SELECT \(club), u.id, 'expense', 'Balls', 50000, 'USD', u.id, current_date FROM users u WHERE u.email = 'ada@example.com'
                        RETURNING id
                    )
                    INSERT INTO splits (transaction_id, user_id, amount) SELECT ball.id, joined.user_id, 1000 FROM ball, joined
                    """)
            }
            var calendar = Calendar(identifier: .iso8601)
            calendar.timeZone = .gmt
            let monday = try #require(
                calendar.nextDate(
                    after: Date().addingTimeInterval(15 * 86_400), matching: DateComponents(hour: 10, weekday: 2), matchingPolicy: .nextTime))
            let now = monday.formatted(.iso8601)
            for week in 0..<2 {
                let at = monday.addingTimeInterval(Double(week) * 7 * 86_400).formatted(.iso8601)
                let runs = try await runConcurrently(cli, ["jobs", "run", "--job", "debt-reminders", "--now", week == 0 ? now : at])
                for run in runs { #expect(run.succeeded, "\(run.errors)") }
            }
            let (reminders, perWeek) = try await database.withConnection { connection in
                let count = try await connection.query("SELECT count(*) FROM notifications WHERE type = 'debt_reminder'").single().decode(
                    0, as: Int64.self)
                let most = try await connection.query(
                    "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM notifications WHERE type = 'debt_reminder' GROUP BY user_id, dedupe_key) x"
                ).single().decode(0, as: Int64.self)
                return (count, most)
            }
            #expect(reminders == 100, "fifty debtors, two weeks")
            #expect(perWeek == 1)
        }
    }
}
