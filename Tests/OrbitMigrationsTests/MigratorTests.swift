import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@testable import OrbitMigrations

@Suite("Migrating a database")
struct MigratorTests {
    @Test("a fresh database gets every file once; a rerun applies nothing and status says applied")
    func freshThenNoOp() async throws {
        try await withTestDatabase(empty: true) { database in
            let catalog = try MigrationCatalog.embedded()
            let migrator = Migrator(configuration: database.configuration, catalog: catalog)

            let first = try await migrator.migrate()
            #expect(first.applied.map(\.path) == (catalog.migrations + catalog.repeatables).map(\.path))

            let second = try await migrator.migrate()
            #expect(second.applied.isEmpty)

            let status = try await migrator.status()
            #expect(status.isUpToDate)
            #expect(status.entries.count == catalog.migrations.count + catalog.repeatables.count)

            let recorded = try await database.withConnection { connection in
                try await connection.query("SELECT version, execution_ms FROM schema_migrations ORDER BY version")
                    .map { try $0.decode((Int32, Int32).self) }
            }
            #expect(recorded.map { Int($0.0) } == catalog.migrations.compactMap(\.version))
            #expect(recorded.allSatisfy { $0.1 >= 0 })
        }
    }

    @Test("status lists pending files before a migration and a dry run applies nothing")
    func statusAndDryRun() async throws {
        try await withTestDatabase(empty: true) { database in
            let migrator = Migrator(configuration: database.configuration, catalog: try MigrationCatalog.embedded())
            let before = try await migrator.status()
            #expect(before.entries.allSatisfy { $0.state == .pending })

            let dryRun = try await migrator.migrate(dryRun: true)
            #expect(dryRun.dryRun && dryRun.applied.count == before.entries.count)
            let after = try await migrator.status()
            #expect(after.entries.allSatisfy { $0.state == .pending })
            let tables = try await database.withConnection { connection in
                try await connection.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'").single()
                    .decode("n", as: Int32.self)
            }
            #expect(tables == 0)
        }
    }

    @Test("an applied migration whose file changed stops migrate before anything is applied, naming the file")
    func tamperedMigration() async throws {
        try await withTestDatabase(empty: true) { database in
            let folder = try ScratchFolder(files: [
                "migrations/0001_first.sql": "CREATE TABLE first (id int);"
            ])
            let migrator = Migrator(configuration: database.configuration, catalog: try folder.catalog())
            try await migrator.migrate()

            try folder.write("migrations/0001_first.sql", "CREATE TABLE first (id bigint);")
            try folder.write("migrations/0002_second.sql", "CREATE TABLE second (id int);")
            let tampered = Migrator(configuration: database.configuration, catalog: try folder.catalog())
            let error = await #expect(throws: MigrationError.self) { try await tampered.migrate() }
            #expect(error?.code == .checksumMismatch)
            #expect(error?.file == "migrations/0001_first.sql")
            #expect(error?.description.contains("migrations/0001_first.sql") == true)

            let status = try await tampered.status()
            #expect(status.entries.map(\.state) == [.changed, .pending])
            let second = try await database.withConnection { connection in
                try await connection.query("SELECT to_regclass('second') IS NULL AS missing").single().decode("missing", as: Bool.self)
            }
            #expect(second)
        }
    }

    @Test("a failing migration rolls back entirely; the error names the file, the line and the server's message")
    func brokenMigration() async throws {
        try await withTestDatabase(empty: true) { database in
            let folder = try ScratchFolder(files: [
                "migrations/0001_good.sql": "CREATE TABLE good (id int);\n",
                "migrations/0002_broken.sql": """
                -- creates a table, then fails
                CREATE TABLE half (id int);
                INSERT INTO half VALUES (1);

                SELECT id,
                       no_such_column
                FROM half;
                """,
            ])
            let migrator = Migrator(configuration: database.configuration, catalog: try folder.catalog())
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrate() }
            #expect(error?.code == .statementFailed)
            #expect(error?.file == "migrations/0002_broken.sql")
            #expect(error?.line == 6)
            #expect(error?.description.contains("migrations/0002_broken.sql, line 6") == true)
            #expect(error?.description.contains("no_such_column") == true)

            let (half, applied) = try await database.withConnection { connection in
                let half = try await connection.query("SELECT to_regclass('half') IS NOT NULL AS present").single()
                    .decode("present", as: Bool.self)
                let applied = try await connection.query("SELECT version FROM schema_migrations ORDER BY version")
                    .map { try $0.decode("version", as: Int32.self) }
                return (half, applied)
            }
            #expect(!half)
            #expect(applied == [1])
        }
    }

    @Test("three concurrent migrators apply each migration exactly once")
    func concurrentMigrators() async throws {
        try await withTestDatabase(empty: true) { database in
            let catalog = try MigrationCatalog.embedded()
            let reports = try await withThrowingTaskGroup(of: MigrationReport.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await Migrator(configuration: database.configuration, catalog: catalog, lockTimeout: .seconds(120)).migrate()
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let appliedMigrations = reports.flatMap(\.applied).map(\.path).filter { $0.hasPrefix("migrations/") }
            #expect(appliedMigrations.sorted() == catalog.migrations.map(\.path).sorted())
            #expect(reports.filter { !$0.applied.isEmpty }.count == 1)
            let rows = try await database.withConnection { connection in
                try await connection.query("SELECT count(*)::int AS n, count(DISTINCT version)::int AS d FROM schema_migrations")
                    .single().decode((Int32, Int32).self)
            }
            #expect(rows.0 == Int32(catalog.migrations.count) && rows.1 == rows.0)
        }
    }

    @Test("a migrator waits for the lock only until its timeout")
    func lockTimeout() async throws {
        try await withTestDatabase(empty: true) { database in
            try await database.withConnection { holder in
                try await holder.query("SELECT pg_advisory_lock(\(Migrator.lockKey))")
                var migrator = Migrator(
                    configuration: database.configuration, catalog: try MigrationCatalog.embedded(), lockTimeout: .milliseconds(300))
                migrator.lockPollInterval = .milliseconds(50)
                let error = await #expect(throws: MigrationError.self) { try await migrator.migrate() }
                #expect(error?.code == .lockTimeout)
            }
        }
    }

    @Test("only changed repeatable files are re-applied")
    func changedRepeatable() async throws {
        try await withTestDatabase(empty: true) { database in
            let folder = try ScratchFolder(files: [
                "migrations/0001_table.sql": "CREATE TABLE t (id int);",
                "sql/010_a.sql": "CREATE OR REPLACE VIEW a AS SELECT 1 AS one;",
                "sql/020_b.sql": "CREATE OR REPLACE VIEW b AS SELECT 2 AS two;",
            ])
            try await Migrator(configuration: database.configuration, catalog: try folder.catalog()).migrate()
            try folder.write("sql/020_b.sql", "CREATE OR REPLACE VIEW b AS SELECT 2 AS two, 3 AS three;")
            let report = try await Migrator(configuration: database.configuration, catalog: try folder.catalog()).migrate()
            #expect(report.applied.map(\.path) == ["sql/020_b.sql"])
        }
    }

    @Test("an unreachable server fails within seconds, in one sentence, without the password")
    func unreachableServer() async throws {
        let configuration = try PostgresConfiguration(connectionString: "postgresql://orbit:s3cret-pw@127.0.0.1:1/orbit?connect_timeout=3")
        let migrator = Migrator(configuration: configuration, catalog: try MigrationCatalog.embedded())
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: MigrationError.self) { try await migrator.migrate() }
        #expect(clock.now - start < .seconds(10))
        #expect(error?.code == .connectionFailed)
        #expect(error?.description.hasPrefix("could not connect to PostgreSQL") == true)
        #expect(error?.description.contains("s3cret-pw") == false)
        #expect(error?.description.contains("\n") == false)
    }
}

/// A temporary folder with migrations/ and sql/, removed when the value is released.
final class ScratchFolder {
    let url: URL

    init(files: [String: String]) throws {
        url = FileManager.default.temporaryDirectory.appending(path: "orbit-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url.appending(path: "migrations"), withIntermediateDirectories: true)
        for (path, contents) in files { try write(path, contents) }
    }

    func write(_ path: String, _ contents: String) throws {
        let file = url.appending(path: path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: file)
    }

    func catalog() throws -> MigrationCatalog {
        try MigrationCatalog.load(directory: url.path)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

@Suite("Demo data")
struct SeedTests {
    @Test("the demo data loads once into an empty database and satisfies every rule of the schema")
    func seeds() async throws {
        try await withTestDatabase { database in
            let migrator = Migrator(configuration: database.configuration, catalog: try MigrationCatalog.embedded())
            #expect(try await migrator.loadSeeds() == ["sql/seed/demo.sql"])
            #expect(try await migrator.loadSeeds().isEmpty)
            let (members, balanceSum, comments) = try await database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT (SELECT member_count FROM communities) AS members, (SELECT sum(balance) FROM balances)::bigint AS balance_sum,
                           (SELECT comment_count FROM posts WHERE id = '00000000-0000-4000-8000-0000000f0003') AS comments
                    """
                ).single().decode((Int32, Int64, Int32).self)
            }
            #expect(members == 4 && balanceSum == 0 && comments == 1)
            // Who owes whom in the demo: Max owes Ada 3.00 (15.00 for the balls less the 12.00 of
            // the jerseys Ada sold, an income); Ada owes Zoe 7.00 (Zoe's 15.00 less the 10.00 she
            // paid back, less her 12.00 of the jerseys); Zoe owes Max 6.00 and Grandpa Joe, a
            // guest, 10.00.
            let pairs = try await database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT u.display_name AS debtor, c.display_name AS creditor, p.balance FROM pair_balances p
                    JOIN users u ON u.id = p.counterparty_id JOIN users c ON c.id = p.user_id
                    WHERE p.balance > 0 ORDER BY p.balance DESC
                    """
                ).map { try $0.decode((String, String, Int64).self) }
            }
            #expect(
                pairs.map { "\($0.0)>\($0.1):\($0.2)" } == [
                    "Zoe Washington>Grandpa Joe:1000", "Ada Lovelace>Zoe Washington:700", "Zoe Washington>Max Planck:600",
                    "Max Planck>Ada Lovelace:300",
                ])
            // The team's own category, which the gas expense has.
            let categorized = try await database.withConnection { connection in
                try await connection.query(
                    "SELECT k.emoji || ' ' || k.name AS name FROM transactions t JOIN expense_categories k ON k.id = t.category_id"
                ).map { try $0.decode(String.self) }
            }
            #expect(categorized == ["🚌 Away games"])
            // Getting paid back: the providers the issue names among the five, Ada's handles (which
            // settle-up turns into Max's links), Ada's nudge of Max, who was told, and Zoe's debt reminder.
            let (providers, adaHandles, nudged) = try await database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT (SELECT string_agg(name, ', ' ORDER BY sort_order) FROM payment_providers WHERE active) AS providers,
                           (SELECT string_agg(kind::text, ', ' ORDER BY kind) FROM payment_handles
                            WHERE user_id = '00000000-0000-4000-8000-00000000a0a0') AS handles,
                           (SELECT count(*) FROM nudges n JOIN notifications o ON o.user_id = n.to_user_id AND o.type = 'nudge')
                               + (SELECT count(*) FROM notifications WHERE type = 'debt_reminder') AS nudged
                    """
                ).single().decode((String, String, Int64).self)
            }
            #expect(providers == "Revolut, PayPal.me, UPI, Bank transfer (SEPA), QR Platba")
            #expect(adaHandles == "revolut, paypal_me, iban")
            #expect(nudged == 2)
        }
    }
}
