import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

private struct Boom: Error {}

@Suite("Transactions commit on success and roll back on errors and cancellation")
struct TransactionTests {
    private func count(_ connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT count(*) AS n FROM items").single().decode("n", as: Int.self)
    }

    private func withItems(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE items (id int PRIMARY KEY)")
                try await body(connection)
            }
        }
    }

    @Test("a returning body commits")
    func commits() async throws {
        try await withItems { connection in
            let value = try await connection.withTransaction { connection in
                try await connection.query("INSERT INTO items VALUES (\(Int32(1)))")
                return "done"
            }
            #expect(value == "done")
            let after = try await count(connection)
            #expect(after == 1)
        }
    }

    @Test("a throwing body rolls back everything it wrote")
    func rollsBackOnThrow() async throws {
        try await withItems { connection in
            await #expect(throws: Boom.self) {
                try await connection.withTransaction { connection in
                    try await connection.query("INSERT INTO items VALUES (1), (2)")
                    throw Boom()
                }
            }
            let total = try await count(connection)
            #expect(total == 0)
            // The connection is out of the transaction and usable.
            try await connection.query("INSERT INTO items VALUES (3)")
            let after = try await count(connection)
            #expect(after == 1)
        }
    }

    @Test("a failed statement whose error the body swallowed makes COMMIT fail, not succeed silently")
    func swallowedErrorIsReported() async throws {
        try await withItems { connection in
            let error = await #expect(throws: PostgresError.self) {
                try await connection.withTransaction { connection in
                    try await connection.query("INSERT INTO items VALUES (1)")
                    _ = try? await connection.query("INSERT INTO items VALUES (1)")  // duplicate key, ignored
                }
            }
            #expect(error?.code == .transactionRolledBack)
            let total = try await count(connection)
            #expect(total == 0)
        }
    }

    @Test("nested transactions are savepoints: an inner failure can be caught and the outer commits")
    func savepoints() async throws {
        try await withItems { connection in
            try await connection.withTransaction { connection in
                try await connection.query("INSERT INTO items VALUES (1)")
                do {
                    try await connection.withTransaction { connection in
                        try await connection.query("INSERT INTO items VALUES (2)")
                        try await connection.query("INSERT INTO items VALUES (1)")  // fails
                    }
                    Issue.record("the inner transaction should have failed")
                } catch let error as PostgresError {
                    #expect(error.isUniqueViolation)
                }
                try await connection.query("INSERT INTO items VALUES (3)")
            }
            let ids = try await connection.query("SELECT id FROM items ORDER BY id").map { try $0.decode("id", as: Int.self) }
            #expect(ids == [1, 3])
        }
    }

    @Test("the isolation level and read-only option reach the server")
    func options() async throws {
        try await withItems { connection in
            let level = try await connection.withTransaction(.init(isolation: .serializable, readOnly: true)) { connection in
                let row = try await connection.query(
                    "SELECT current_setting('transaction_isolation') AS i, current_setting('transaction_read_only') AS r"
                ).single()
                return try (row.decode("i", as: String.self), row.decode("r", as: String.self))
            }
            #expect(level.0 == "serializable")
            #expect(level.1 == "on")
            let error = await #expect(throws: PostgresError.self) {
                try await connection.withTransaction(.init(readOnly: true)) { connection in
                    try await connection.query("INSERT INTO items VALUES (1)")
                }
            }
            #expect(error?.sqlState == "25006")
        }
    }

    @Test("a deferred constraint failing at COMMIT is thrown and nothing is kept")
    func commitFailure() async throws {
        try await withItems { connection in
            try await connection.query("ALTER TABLE items ADD COLUMN next int UNIQUE DEFERRABLE INITIALLY DEFERRED")
            let error = await #expect(throws: PostgresError.self) {
                try await connection.withTransaction { connection in
                    try await connection.query("INSERT INTO items VALUES (1, 5), (2, 5)")
                }
            }
            #expect(error?.isUniqueViolation == true)
            let total = try await count(connection)
            #expect(total == 0)
        }
    }

    @Test("cancelling the task rolls the transaction back")
    func cancellationRollsBack() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE items (id int PRIMARY KEY)")
            }
            let pool = database.makePool(maxConnections: 1)
            let inserted = AsyncStream<Void>.makeStream()
            let task = Task {
                try await pool.withTransaction { connection in
                    try await connection.query("INSERT INTO items VALUES (1)")
                    inserted.continuation.yield()
                    // Wait here until cancelled; the transaction must not commit.
                    try await connection.query("SELECT pg_sleep(30)")
                }
            }
            var iterator = inserted.stream.makeAsyncIterator()
            await iterator.next()
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let count = try await pool.query("SELECT count(*) AS n FROM items").single().decode("n", as: Int.self)
            #expect(count == 0)
            await pool.close()
        }
    }

    @Test("local settings (role, custom names) hold inside the transaction only; values are parameters")
    func localSettings() async throws {
        try await withTestDatabase(empty: true) { database in
            try await database.withConnection { connection in
                try await connection.executeScript("DROP ROLE IF EXISTS orbit_probe; CREATE ROLE orbit_probe NOLOGIN")
                let tricky = "x'); DROP TABLE pg_class; --"
                let options = TransactionOptions(localSettings: ["role": "orbit_probe", "app.probe": tricky])
                let (role, probe) = try await connection.withTransaction(options) { connection in
                    try await connection.query("SELECT current_user AS r, current_setting('app.probe') AS p").single()
                        .decode((String, String).self)
                }
                #expect(role == "orbit_probe" && probe == tricky)
                let (after, cleared) = try await connection.query(
                    "SELECT current_user AS r, coalesce(current_setting('app.probe', true), '') AS p"
                ).single().decode((String, String).self)
                #expect(after != "orbit_probe" && cleared == "")
                await #expect(throws: PostgresError.self) {
                    try await connection.withTransaction(TransactionOptions(localSettings: ["role": "no_such_role"])) { _ in }
                }
                let usable = try await connection.query("SELECT 1 AS one").single().decode("one", as: Int.self)
                #expect(usable == 1)
                try await connection.executeScript("DROP ROLE orbit_probe")
            }
        }
    }
}
