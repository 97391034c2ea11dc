import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Pipeline mode sends a batch of statements in one round trip")
struct PipelineTests {
    @Test("results come back in order, and prepared statements are reused across batches")
    func ordered() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE t (id int PRIMARY KEY, label text)")
                for batch in 0..<3 {
                    let base = Int32(batch * 10)
                    let results = try await connection.pipeline([
                        "BEGIN",
                        "INSERT INTO t VALUES (\(base + 1), \("a"))",
                        "INSERT INTO t VALUES (\(base + 2), \("b"))",
                        "SELECT count(*) AS n FROM t",
                        "COMMIT",
                    ])
                    #expect(results.count == 5)
                    #expect(try results[3].single().decode("n", as: Int.self) == (batch + 1) * 2)
                }
                // Both INSERTs share one SQL text: one prepared statement for all six executions.
                let prepared = try await connection.query(
                    "SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO t%'"
                ).single()
                #expect(try prepared.decode("n", as: Int.self) == 1)
            }
        }
    }

    @Test("a failing statement skips the rest, rolls the batch back, and the connection stays usable")
    func failureRollsBack() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE t (id int PRIMARY KEY)")
                for statements: [PostgresQuery] in [
                    ["BEGIN", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "COMMIT"],
                    ["INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"],
                ] {
                    let error = await #expect(throws: PostgresError.self) { try await connection.pipeline(statements) }
                    #expect(error?.isUniqueViolation == true)
                    let count = try await connection.query("SELECT count(*) AS n FROM t").single().decode("n", as: Int.self)
                    #expect(count == 0)
                }
                let syntax = await #expect(throws: PostgresError.self) {
                    try await connection.pipeline(["SELECT 1", "SELEKT 2", "SELECT 3"])
                }
                #expect(syntax?.sqlState == "42601")
                #expect(try await connection.pipeline(["SELECT 1 AS one"]).first?.single().decode("one", as: Int.self) == 1)
            }
        }
    }

    @Test("without the statement cache the batch uses unnamed statements")
    func unnamed() async throws {
        try await withTestDatabase { database in
            var configuration = database.configuration
            configuration.statementCacheCapacity = 0
            try await PostgresConnection.withConnection(configuration) { connection in
                let results = try await connection.pipeline(["SELECT \(1) AS a", "SELECT \("x") AS b"])
                #expect(try results[1].single().decode("b", as: String.self) == "x")
                let prepared = try await connection.query("SELECT count(*) AS n FROM pg_prepared_statements").single()
                #expect(try prepared.decode("n", as: Int.self) == 0)
            }
        }
    }

    @Test("round trips are counted: a statement is one (two when it is first prepared), a batch is one, and a pool adds up its loans")
    func roundTrips() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1)
            try await pool.withConnection { connection in
                func cost(_ body: () async throws -> Void) async throws -> Int {
                    let before = connection.roundTrips
                    try await body()
                    return connection.roundTrips - before
                }
                let prepared = try await cost { try await connection.query("SELECT \(1) AS n") }
                let reused = try await cost { try await connection.query("SELECT \(2) AS n") }
                let batch = try await cost { _ = try await connection.pipeline(["SELECT 1", "SELECT 2", "SELECT \(3) AS n"]) }
                let script = try await cost { try await connection.executeScript("SELECT 1; SELECT 2") }
                let costs: [Int] = [prepared, reused, batch, script]
                #expect(costs == [2, 1, 1, 1])
            }
            let before = pool.roundTrips
            try await pool.query("SELECT \(4) AS n")
            try await pool.withConnection { _ = try await $0.pipeline(["SELECT 1", "SELECT 2"]) }
            #expect(pool.roundTrips - before == 2)
            await pool.close()
        }
    }
}
