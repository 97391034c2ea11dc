import Foundation
import OrbitTestSupport
import Testing

@testable import OrbitPostgres

@Suite("Connecting from URLs, conninfo strings and the environment")
struct ConnectionTests {
    @Test("a failed connect gives libpq's message and never the password")
    func failedConnectHidesPassword() async throws {
        let configuration = try PostgresConfiguration(
            connectionString: "postgresql://orbit:hunter2-secret@127.0.0.1:1/orbit?connect_timeout=5"
        )
        let error = await #expect(throws: PostgresError.self) {
            try await PostgresConnection.connect(configuration)
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("127.0.0.1") == true)
        #expect(error?.message.contains("hunter2-secret") == false)
        #expect("\(configuration)".contains("hunter2-secret") == false)
        #expect(String(reflecting: error).contains("hunter2-secret") == false)
    }

    @Test("a malformed connection string is refused without connecting, password masked")
    func malformedString() throws {
        let error = #expect(throws: PostgresError.self) {
            try PostgresConfiguration(connectionString: "postgresql://orbit:pa55word@host/db?no_such_option=1")
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("pa55word") == false)
        #expect(throws: PostgresError.self) { try PostgresConfiguration(connectionString: "host=x bogus_option=1") }
    }

    @Test("DATABASE_URL wins over PG* variables; without it the configuration is libpq's environment")
    func environment() throws {
        let configuration = try PostgresConfiguration.fromEnvironment(["DATABASE_URL": "postgresql://a@b/c", "PGHOST": "x"])
        #expect(configuration.connectionString == "postgresql://a@b/c")
        let fallback = try PostgresConfiguration.fromEnvironment(["PGHOST": "x"])
        #expect(fallback.connectionString == nil)
    }

    @Test("the same server is reachable by key=value conninfo, URL and PG* variables")
    func connectionForms() async throws {
        let server = try await TestServer.shared()
        let parameters = Dictionary(server.adminConfiguration.parameters.map { ($0.keyword, $0.value) }, uniquingKeysWith: { $1 })
        guard let host = parameters["host"], let port = parameters["port"] else {
            // An external server (ORBIT_TEST_DATABASE_URL) is given as a URL: nothing to convert.
            return
        }
        let conninfo = try PostgresConfiguration(connectionString: "host='\(host)' port=\(port) user=postgres dbname=postgres")
        let encodedHost = host.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? host
        let url = try PostgresConfiguration(connectionString: "postgresql://postgres@/postgres?host=\(encodedHost)&port=\(port)")
        for configuration in [conninfo, url] {
            let one = try await PostgresConnection.withConnection(configuration) { connection in
                try await connection.query("SELECT 1 AS one").single().decode("one", as: Int.self)
            }
            #expect(one == 1)
        }
        // PG* variables are libpq's own: a child process with only them set reaches the server.
        setenv("PGHOST", host, 1)
        setenv("PGPORT", port, 1)
        setenv("PGUSER", "postgres", 1)
        defer {
            unsetenv("PGHOST")
            unsetenv("PGPORT")
            unsetenv("PGUSER")
        }
        let viaEnvironment = try await PostgresConnection.withConnection(PostgresConfiguration()) { connection in
            try await connection.query("SELECT current_user AS u").single().decode("u", as: String.self)
        }
        #expect(viaEnvironment == "postgres")
    }

    @Test("closing twice is harmless and a closed connection refuses statements")
    func closedConnection() async throws {
        try await withTestDatabase { database in
            let connection = try await database.connect()
            await connection.close()
            await connection.close()
            #expect(connection.isClosed)
            let error = await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
            #expect(error?.code == .connectionClosed)
        }
    }

    @Test("statements run on the connection's own thread, not the caller's")
    func runsOffTheCooperativePool() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                // Inside `run`/`withConnection` the task sits on the connection's thread.
                #expect(isOnThread(of: connection))
                _ = try await connection.query("SELECT 1")
                #expect(isOnThread(of: connection))
            }
            let connection = try await database.connect()
            // From outside, a statement still works (it hops to the thread and back).
            #expect(!isOnThread(of: connection))
            let two = try await connection.query("SELECT 2 AS n").single().decode("n", as: Int.self)
            await connection.close()
            #expect(two == 2)
        }
    }
}

/// Whether the caller runs on the connection's own thread (sync, so usable from async code).
private func isOnThread(of connection: PostgresConnection) -> Bool { connection.thread.isCurrent }
