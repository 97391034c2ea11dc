import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The per-connection prepared statement cache")
struct StatementCacheTests {
    private func preparedCount(_ connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT count(*) AS n FROM pg_prepared_statements").single().decode("n", as: Int.self)
    }

    @Test("a statement is prepared once and reused with new values")
    func reuse() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                for value in 0..<20 {
                    _ = try await connection.query("SELECT \(value) + 1 AS n")
                }
                // That statement plus the counting statement itself.
                #expect(try await preparedCount(connection) == 2)
            }
        }
    }

    @Test("the least recently used statement is evicted and deallocated at capacity")
    func eviction() async throws {
        try await withTestDatabase { database in
            var configuration = database.configuration
            configuration.statementCacheCapacity = 3
            try await PostgresConnection.withConnection(configuration) { connection in
                for index in 0..<10 {
                    _ = try await connection.query("SELECT \(index) AS n, \(unescaped: String(index)) AS k")
                }
                #expect(try await preparedCount(connection) <= 3)
            }
        }
    }

    @Test("statements deallocated behind the cache's back (DISCARD ALL) are prepared again")
    func stale() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                _ = try await connection.query("SELECT \(1) AS n")
                try await connection.executeScript("DISCARD ALL")
                let n = try await connection.query("SELECT \(2) AS n").single().decode("n", as: Int.self)
                #expect(n == 2)
            }
        }
    }

    @Test("a changed result type after a schema change is re-prepared outside a transaction")
    func schemaChange() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE t (a int)")
                _ = try await connection.query("SELECT * FROM t")
                try await connection.query("ALTER TABLE t ADD COLUMN b text")
                let rows = try await connection.query("SELECT * FROM t")
                #expect(rows.columnCount == 2)
            }
        }
    }
}
