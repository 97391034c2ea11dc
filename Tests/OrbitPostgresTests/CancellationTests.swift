import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Task cancellation cancels the running statement")
struct CancellationTests {
    /// Waits until the server shows `pid` running a statement matching `pattern`.
    private func waitUntilRunning(_ pid: Int32, _ pattern: String, admin: PostgresConnection) async throws {
        while true {
            let rows = try await admin.query(
                "SELECT 1 FROM pg_stat_activity WHERE pid = \(pid) AND state = 'active' AND query LIKE \(pattern)"
            )
            if !rows.isEmpty { return }
            await Task.yield()
        }
    }

    @Test("cancelling a task in pg_sleep(10) ends the statement and the connection still works")
    func cancelSleep() async throws {
        try await withTestDatabase { database in
            let connection = try await database.connect()
            let admin = try await database.connect()
            let task = Task {
                try await connection.query("SELECT pg_sleep(10)")
            }
            try await waitUntilRunning(connection.backendPID, "%pg_sleep%", admin: admin)
            let started = ContinuousClock.now
            task.cancel()
            // pg_sleep(10) only ends early with an error: returning rows would mean no cancel.
            await #expect(throws: CancellationError.self) { try await task.value }
            let waited = ContinuousClock.now - started
            #expect(!connection.isClosed)
            let one = try await connection.query("SELECT 1 AS one").single().decode("one", as: Int.self)
            #expect(one == 1)
            // Same session: cancelling did not reconnect.
            let pid = try await connection.query("SELECT pg_backend_pid() AS pid").single().decode("pid", as: Int32.self)
            #expect(pid == connection.backendPID)
            print("cancellation returned after \(waited)")
            await connection.close()
            await admin.close()
        }
    }

    @Test("inside a connection's scope (run/withConnection) cancelling the task cancels the statement too")
    func cancelInsideScope() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1)
            let admin = try await database.connect()
            let pids = AsyncStream<Int32>.makeStream()
            let task = Task {
                try await pool.withConnection { connection in
                    pids.continuation.yield(connection.backendPID)
                    _ = try await connection.query("SELECT pg_sleep(10)")
                }
            }
            var iterator = pids.stream.makeAsyncIterator()
            let pid = try #require(await iterator.next())
            try await waitUntilRunning(pid, "%pg_sleep%", admin: admin)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            // The same connection goes back to the pool and still works.
            let again = try await pool.query("SELECT pg_backend_pid() AS pid").single().decode("pid", as: Int32.self)
            #expect(again == pid)
            await admin.close()
            await pool.close()
        }
    }

    @Test("a task cancelled before its statement starts never runs it")
    func cancelledBeforeStart() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE t (n int)")
            }
            let connection = try await database.connect()
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await connection.query("INSERT INTO t VALUES (1)")
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            let count = try await connection.query("SELECT count(*) AS n FROM t").single().decode("n", as: Int.self)
            #expect(count == 0)
            await connection.close()
        }
    }

    @Test("a statement timeout is a server error, not a task cancellation")
    func statementTimeout() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("SET statement_timeout = '50ms'")
                let error = await #expect(throws: PostgresError.self) { try await connection.query("SELECT pg_sleep(5)") }
                #expect(error?.isQueryCanceled == true)
            }
        }
    }
}
