import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The connection pool")
struct ConnectionPoolTests {
    @Test("many more concurrent tasks than connections all complete, never above the limit")
    func moreTasksThanConnections() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 3, acquireTimeout: .seconds(60))
            try await pool.query("CREATE TABLE hits (task int, pid int)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<50 {
                    group.addTask {
                        try await pool.withTransaction { connection in
                            _ = try await connection.query("INSERT INTO hits VALUES (\(Int32(task)), pg_backend_pid())")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let row = try await pool.query("SELECT count(*) AS n, count(DISTINCT pid) AS pids FROM hits").single()
            #expect(try row.decode("n", as: Int.self) == 50)
            #expect(try row.decode("pids", as: Int.self) <= 3)
            #expect(pool.statistics.open <= 3)
            await pool.close()
        }
    }

    @Test("waiting longer than the acquire timeout fails with a clear error")
    func acquireTimeout() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1, acquireTimeout: .milliseconds(200))
            let held = await HeldConnection.hold(pool)
            let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
            #expect(error?.code == .poolTimeout)
            #expect(error?.message.contains("no database connection became free") == true)
            try await held.release()
            // Once returned, the connection is lent again.
            #expect(try await pool.query("SELECT 1 AS one").single().decode("one", as: Int.self) == 1)
            await pool.close()
        }
    }

    @Test("every borrower's wait for a connection is counted, one that queued behind the only connection included")
    func acquireWaits() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1)
            _ = try await pool.query("SELECT 1")
            pool.resetAcquireWaits()
            #expect(pool.acquireWaits.count == 0 && pool.acquireWaits.milliseconds(atQuantile: 0.5) == nil)
            let held = await HeldConnection.hold(pool)
            let waiter = Task { try await pool.query("SELECT 1") }
            while pool.statistics.waiting == 0 { await Task.yield() }
            try await held.release()
            _ = try await waiter.value
            let waits = pool.acquireWaits
            #expect(waits.count == 2, "the holder's and the waiter's")
            let longest = try #require(waits.milliseconds(atQuantile: 1))
            #expect(longest > 0 && longest >= (waits.milliseconds(atQuantile: 0.5) ?? .infinity))
            pool.resetAcquireWaits()
            #expect(pool.acquireWaits.count == 0)
            await pool.close()
        }
    }

    @Test("a connection terminated by pg_terminate_backend is discarded and replaced")
    func terminatedBackendReplaced() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1)
            let firstPID = try await pool.query("SELECT pg_backend_pid() AS pid").single().decode("pid", as: Int32.self)
            try await database.withConnection { admin in
                let terminated = try await admin.query("SELECT pg_terminate_backend(\(firstPID), 5000) AS ok").single()
                #expect(try terminated.decode("ok", as: Bool.self))
            }
            let secondPID = try await pool.query("SELECT pg_backend_pid() AS pid").single().decode("pid", as: Int32.self)
            #expect(secondPID != firstPID)
            #expect(pool.statistics.open == 1)
            await pool.close()
        }
    }

    @Test("a transaction interrupted by a terminated backend fails and leaves nothing behind")
    func interruptedTransaction() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 2)
            try await pool.query("CREATE TABLE t (n int)")
            let admin = try await database.connect()
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withTransaction { connection in
                    try await connection.query("INSERT INTO t VALUES (1)")
                    _ = try await admin.query("SELECT pg_terminate_backend(\(connection.backendPID), 5000)")
                    try await connection.query("INSERT INTO t VALUES (2)")
                }
            }
            #expect(error?.isConnectionFailure == true)
            let count = try await pool.query("SELECT count(*) AS n FROM t").single().decode("n", as: Int.self)
            #expect(count == 0)
            await admin.close()
            await pool.close()
        }
    }

    @Test("a connection handed back inside a transaction is closed, not reused")
    func leakedTransactionNotReused() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1)
            let leakedPID = try await pool.withConnection { connection in
                try await connection.query("BEGIN")
                try await connection.query("CREATE TABLE half_done (n int)")
                return connection.backendPID
            }
            let row = try await pool.query("SELECT pg_backend_pid() AS pid, to_regclass('half_done') IS NULL AS gone").single()
            #expect(try row.decode("pid", as: Int32.self) != leakedPID)
            #expect(try row.decode("gone", as: Bool.self))
            await pool.close()
        }
    }

    @Test("a closed pool refuses work")
    func closedPool() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool()
            _ = try await pool.query("SELECT 1")
            await pool.close()
            let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
            #expect(error?.code == .poolClosed)
        }
    }

    @Test("an unreachable server fails each waiter with the connect error instead of hanging")
    func unreachableServer() async throws {
        let configuration = try PostgresConfiguration(connectionString: "host=127.0.0.1 port=1 user=x dbname=x connect_timeout=2")
        let pool = ConnectionPool(configuration: configuration, options: .init(maxConnections: 1, acquireTimeout: .seconds(30)))
        try await withThrowingTaskGroup(of: PostgresError.Code?.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    do {
                        _ = try await pool.query("SELECT 1")
                        return nil
                    } catch let error as PostgresError {
                        return error.code
                    }
                }
            }
            for try await code in group {
                #expect(code == .connectionFailed)
            }
        }
        await pool.close()
    }
}
