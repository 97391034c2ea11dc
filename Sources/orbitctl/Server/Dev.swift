import ArgumentParser
import Foundation
import LocalPostgres
import Logging
import OrbitMigrations
import OrbitPostgres

/// `orbitctl dev`: the backend on a laptop, with its own PostgreSQL.
struct Dev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start (or reuse) a local PostgreSQL cluster under ./.orbit/, migrate it, and keep it running until Ctrl-C.",
        discussion: """
            The cluster's database 'orbitcove' is created if missing and migrated with the files built into
            orbitctl. With --database-url or DATABASE_URL set, uses that database instead of starting one
            (and leaves migrating it to `orbitctl migrate`).
            As root, the server runs as the 'postgres' system user; if that user cannot reach ./.orbit
            (a checkout under /root), the cluster lives under /var/tmp/orbitcove-dev/ and orbitctl says so.
            `orbitctl dev seed` loads the large deterministic data set into it.
            """,
        subcommands: [DevSeed.self]
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup(title: "HTTP API") var api: APIOptions

    @Option(help: "Serve the HTTP API (with --dev-auth) on this port of 127.0.0.1; 0 picks a free port, -1 serves no API.")
    var apiPort = 8080

    @Option(help: "Also listen on this TCP port on 127.0.0.1 (default: Unix socket only).")
    var tcpPort: Int?

    @Option(help: "Project directory holding .orbit/ (default: the current directory).")
    var projectDirectory: String?

    func validate() throws {
        if let tcpPort, !(1...65535).contains(tcpPort) {
            throw ValidationError("--tcp-port must be between 1 and 65535.")
        }
        guard (-1...65535).contains(apiPort) else { throw ValidationError("--api-port must be -1 (no API), 0 (any free port) or a port number.") }
    }

    func run() async throws {
        output.bootstrapLogging()
        let stop = SignalWaiter(signals: [SIGINT, SIGTERM])
        if let configuration = try database.explicitConfiguration() {
            try await report(configuration, url: nil, cluster: nil)
            try await serveAPI(configuration, until: stop)
            print("\nStopped.")
            return
        }

        let installation = try PostgresInstallation.locate()
        let account = try ServerAccount.current()
        let project = projectDirectory ?? FileManager.default.currentDirectoryPath
        let home = try await DevClusterHome.resolve(projectDirectory: project, account: account)
        let cluster = LocalCluster(
            dataDirectory: home.dataDirectory,
            port: tcpPort ?? 5432,
            listenAddress: tcpPort == nil ? nil : "127.0.0.1",
            installation: installation,
            account: account
        )
        if home.isRelocated {
            print("Note: the '\(account.name)' user cannot reach \(project)/.orbit, so the cluster lives in \(home.dataDirectory).")
        }
        let lock = DevLock(directory: (project as NSString).appendingPathComponent(".orbit"))
        let owner = lock.acquire()
        var startedHere = false
        if await cluster.isRunning() {
            print("Reusing the PostgreSQL cluster already running in \(cluster.dataDirectory).")
        } else {
            let fresh = !cluster.isInitialized
            print(fresh ? "Creating a PostgreSQL cluster in \(cluster.dataDirectory) …" : "Starting PostgreSQL in \(cluster.dataDirectory) …")
            try await cluster.prepare()
            try await cluster.start()
            startedHere = true
        }
        let configuration = PostgresConfiguration(
            parameters: cluster.connectionParameters(database: Self.databaseName).map { (keyword: $0.0, value: $0.1) }
        )
        do {
            try await createDatabaseIfMissing(cluster)
            let migrator = Migrator(configuration: configuration, catalog: try MigrationCatalog.embedded())
            let report = try await migrator.migrate()
            print(
                report.applied.isEmpty
                    ? "Database \(Self.databaseName) is up to date."
                    : "Migrated database \(Self.databaseName): applied \(report.applied.count) file(s)."
            )
            if !(try await migrator.loadSeeds()).isEmpty {
                print("Loaded demo data: ada@example.com (admin), max@example.com and zoe@example.com in community Tigers U10.")
            }
            try await self.report(configuration, url: cluster.url(database: Self.databaseName), cluster: cluster)
        } catch {
            if startedHere { try? await cluster.stop() }
            throw error
        }
        do {
            try await serveAPI(configuration, until: stop)
        } catch {
            if owner { try? await cluster.stop(.fast) }
            throw error
        }
        // Stop the cluster if no other `orbitctl dev` is using it.
        if owner {
            print("\nStopping PostgreSQL …")
            try await cluster.stop(.fast)
            lock.release()
            print("Stopped.")
        } else {
            print("\nLeaving PostgreSQL running: another orbitctl dev (pid \(lock.holder.map(String.init) ?? "?")) uses it.")
        }
    }

    static let databaseName = "orbitcove"

    /// Serves the API with dev auth on 127.0.0.1 until Ctrl-C (or only waits, with --api-port -1).
    private func serveAPI(_ configuration: PostgresConfiguration, until stop: SignalWaiter) async throws {
        guard apiPort >= 0 else {
            await stop.wait()
            return
        }
        let pool = ConnectionPool(configuration: configuration, options: .init(maxConnections: api.poolSize))
        try await api.serve(
            pool: pool, host: "127.0.0.1", port: apiPort, devAuth: true, logger: Logger(label: "orbit.api"), warnAboutRandomSecret: false,
            onRunning: { [pushes = api.jobs ? api.apns.summary : "off (--no-jobs)"] port in
                let base = "http://127.0.0.1:\(port)"
                print(
                    """
                      API         \(base)  (OpenAPI document: \(base)/openapi.yaml; dev auth on)
                      Pushes      \(pushes)
                      Try it      TOKEN=$(curl -s -X POST \(base)/auth/dev -H 'content-type: application/json' \\
                                    -d '{"email":"ada@example.com"}' | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')
                                  curl -s \(base)/communities -H "authorization: Bearer $TOKEN"
                    Press Ctrl-C to stop.
                    """
                )
                fflush(nil)
            },
            shutdown: { await stop.wait() }
        )
    }

    private func createDatabaseIfMissing(_ cluster: LocalCluster) async throws {
        let maintenance = PostgresConfiguration(parameters: cluster.connectionParameters().map { (keyword: $0.0, value: $0.1) })
        try await PostgresConnection.withConnection(maintenance) { connection in
            let exists = try await connection.query(
                "SELECT EXISTS (SELECT FROM pg_database WHERE datname = \(Self.databaseName)) AS present"
            ).single().decode("present", as: Bool.self)
            if !exists {
                let quoted = try await connection.escapeIdentifier(Self.databaseName)
                try await connection.executeScript("CREATE DATABASE \(quoted)")
            }
        }
    }

    private func report(_ configuration: PostgresConfiguration, url: String?, cluster: LocalCluster?) async throws {
        let (version, database, user) = try await PostgresConnection.withConnection(configuration) { connection in
            let row = try await connection.query(
                "SELECT current_setting('server_version') AS version, current_database() AS db, current_user AS usr"
            ).single()
            return try (row.decode("version", as: String.self), row.decode("db", as: String.self), row.decode("usr", as: String.self))
        }
        print("")
        print("OrbitCove dev is ready.")
        print("  PostgreSQL  \(version), database \(database) as \(user)")
        if let url {
            print("  URL         \(url)")
            print("  psql        psql '\(url)'")
        } else {
            print("  Database    \(configuration)")
        }
        if let cluster {
            print("  Data        \(cluster.dataDirectory)")
            print("  Log         \(cluster.logFile)")
            if let address = cluster.listenAddress { print("  TCP         \(address):\(cluster.port)") }
        }
        if apiPort < 0 { print("Press Ctrl-C to stop.") }
        // Scripts wait for this banner; with stdout redirected it would sit in the buffer.
        fflush(nil)
    }
}
