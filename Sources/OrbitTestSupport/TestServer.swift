import Foundation
package import LocalPostgres
import OrbitMigrations
package import OrbitPostgres
import Synchronization

/// The PostgreSQL server a test process uses: `ORBIT_TEST_DATABASE_URL` when it is set (for
/// example a `docker compose up -d` database), otherwise one throwaway cluster started for the
/// whole process and deleted when it exits.
///
/// Tests never use the server's databases directly: each gets its own database cloned from a
/// template (`CREATE DATABASE … TEMPLATE`), so tests run in parallel and never share rows.
package final class TestServer: Sendable {
    /// Connects as a superuser to the server's maintenance database.
    package let adminConfiguration: PostgresConfiguration
    /// The throwaway cluster, or nil when the server is external.
    package let cluster: LocalCluster?
    /// The database every test database is cloned from.
    package let templateName: String
    let admin: ConnectionPool
    private let counter = Atomic<Int>(0)

    /// Prefix of every database this process creates: `orbit_t<pid>_…`.
    static let databasePrefix = "orbit_t\(getpid())_"

    private init(adminConfiguration: PostgresConfiguration, cluster: LocalCluster?) {
        self.adminConfiguration = adminConfiguration
        self.cluster = cluster
        self.templateName = "orbit_tpl\(getpid())"
        // Every test of the process starts at once and asks for a database first: the queue for
        // CREATE DATABASE can be long on a loaded machine, and a test waiting its turn is not a
        // failure, so the wait is bounded only by the CI's own limit.
        self.admin = ConnectionPool(configuration: adminConfiguration, options: .init(maxConnections: 6, acquireTimeout: .seconds(1800)))
    }

    /// The process's server, started on first use.
    package static func shared() async throws -> TestServer {
        try await provider.server()
    }

    private static let provider = Provider()

    private actor Provider {
        private var starting: Task<TestServer, any Error>?

        func server() async throws -> TestServer {
            if let starting { return try await starting.value }
            let task = Task { try await TestServer.start() }
            starting = task
            return try await task.value
        }
    }

    // MARK: - Databases

    /// Creates a database cloned from the migrated template (or, `empty`, from `template0`)
    /// and returns its name.
    package func createDatabase(empty: Bool = false) async throws -> String {
        let name = Self.databasePrefix + String(counter.add(1, ordering: .relaxed).newValue)
        try await admin.withConnection { connection in
            let quotedName = try await connection.escapeIdentifier(name)
            let quotedTemplate = try await connection.escapeIdentifier(empty ? "template0" : templateName)
            // CREATE DATABASE takes no parameters; both names are quoted by PQescapeIdentifier.
            try await retryingObjectInUse {
                try await connection.executeScript("CREATE DATABASE \(quotedName) TEMPLATE \(quotedTemplate) STRATEGY FILE_COPY")
            }
        }
        return name
    }

    /// Drops a database, disconnecting anyone still connected to it.
    ///
    /// On the process's own throwaway cluster the database is only disconnected: the cluster
    /// goes away with the process, and each DROP DATABASE forces a checkpoint, which under a
    /// parallel test run queues every test behind the others' drops.
    package func dropDatabase(_ name: String) async throws {
        try await admin.withConnection { connection in
            guard cluster == nil else {
                try await connection.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(name) AND pid <> pg_backend_pid()")
                return
            }
            let quoted = try await connection.escapeIdentifier(name)
            try await connection.executeScript("DROP DATABASE IF EXISTS \(quoted) WITH (FORCE)")
        }
    }

    /// Runs `setup` against the template database once, before the first clone.
    /// Later issues migrate the template here; it starts empty.
    private func createTemplate() async throws {
        try await admin.withConnection { connection in
            let quoted = try await connection.escapeIdentifier(templateName)
            try await connection.executeScript("DROP DATABASE IF EXISTS \(quoted) WITH (FORCE)")
            try await connection.executeScript("CREATE DATABASE \(quoted)")
        }
        try await TemplateSetup.run(on: adminConfiguration.database(templateName))
    }

    /// CREATE DATABASE fails with 55006 while another session is still inside the template
    /// (a just-finished setup connection may linger for a moment).
    private func retryingObjectInUse(_ body: () async throws -> Void) async throws {
        var attempt = 0
        while true {
            do {
                return try await body()
            } catch let error as PostgresError where error.sqlState == "55006" && attempt < 50 {
                attempt += 1
                try await Task.sleep(for: .milliseconds(20 * attempt))
            }
        }
    }

    // MARK: - Starting and cleaning up

    private static func start() async throws -> TestServer {
        let environment = ProcessInfo.processInfo.environment
        let server: TestServer
        if let url = environment["ORBIT_TEST_DATABASE_URL"], !url.isEmpty {
            server = TestServer(adminConfiguration: try PostgresConfiguration(connectionString: url), cluster: nil)
            try await server.dropStaleDatabases()
        } else {
            let cluster = try await ThrowawayClusters.start()
            let configuration = PostgresConfiguration(parameters: cluster.connectionParameters().map { (keyword: $0.0, value: $0.1) })
            server = TestServer(adminConfiguration: configuration, cluster: cluster)
        }
        try await server.createTemplate()
        CleanupAtExit.register(server)
        return server
    }

    /// Drops databases left by test processes of this machine that no longer run.
    private func dropStaleDatabases() async throws {
        let rows = try await admin.query("SELECT datname FROM pg_database WHERE datname ~ '^orbit_t(pl)?[0-9]+'")
        for row in rows {
            let name = try row.decode("datname", as: String.self)
            let digits = name.dropFirst(name.hasPrefix("orbit_tpl") ? 9 : 7).prefix { $0.isNumber }
            guard let pid = Int32(digits), !ThrowawayClusters.isAlive(pid) else { continue }
            try await dropDatabase(name)
        }
    }

    /// Best-effort cleanup when the test process exits normally.
    fileprivate func cleanUpBlocking() {
        if let cluster {
            cluster.destroyBlocking()
            ThrowawayClusters.removeOwnDirectory()
            return
        }
        let done = DispatchSemaphore(value: 0)
        let template = templateName
        Task {
            try? await self.dropDatabase(template)
            await self.admin.close()
            done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
    }
}

/// Migrates the template once per test process: with the files built into OrbitMigrations, or
/// with those of `ORBIT_MIGRATIONS_DIR` (a folder holding migrations/ and sql/), which runs the
/// whole suite against another schema, such as the spec's draft DDL.
enum TemplateSetup {
    static func run(on configuration: PostgresConfiguration) async throws {
        let directory = ProcessInfo.processInfo.environment["ORBIT_MIGRATIONS_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        let catalog = try directory.map { try MigrationCatalog.load(directory: $0) } ?? MigrationCatalog.embedded()
        try await Migrator(configuration: configuration, catalog: catalog).migrate()
    }
}

/// Cleans up the process's server at exit (`atexit`); a crashed process is cleaned up by the
/// next one (see `ThrowawayClusters.removeStale`).
private enum CleanupAtExit {
    private static let server = Mutex<TestServer?>(nil)

    static func register(_ testServer: TestServer) {
        let first = server.withLock { current -> Bool in
            defer { current = testServer }
            return current == nil
        }
        if first {
            atexit {
                CleanupAtExit.server.withLock { $0 }?.cleanUpBlocking()
            }
        }
    }
}
