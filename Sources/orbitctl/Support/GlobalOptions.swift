import ArgumentParser
import Foundation
import LocalPostgres
import Logging
import OrbitCore
import OrbitPostgres

/// Options every command that talks to PostgreSQL shares.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: ArgumentHelp(
            "PostgreSQL URL or key=value conninfo. Default: DATABASE_URL, then libpq's PG* variables.",
            valueName: "url"
        )
    )
    var databaseURL: String?

    @Option(
        help: ArgumentHelp(
            "What stands between orbitctl and PostgreSQL: none, session or transaction (a transaction-mode pooler such as pgbouncer, "
                + "which needs unnamed statements). Default: ORBIT_POOLER, then none.",
            valueName: "mode"
        )
    )
    var pooler: Pooler?

    @Option(
        name: .customLong("replica-url"),
        help: ArgumentHelp(
            "A hot standby for the reads that may be slightly stale (repeatable). Default: DATABASE_REPLICA_URL (comma-separated).",
            valueName: "url"
        )
    )
    var replicaURLs: [String] = []

    /// The replicas from `--replica-url`, or else `DATABASE_REPLICA_URL`; the pooler setting
    /// applies to them too.
    func replicaConfigurations() throws -> [PostgresConfiguration] {
        var urls = replicaURLs
        if urls.isEmpty, let text = ProcessInfo.processInfo.environment["DATABASE_REPLICA_URL"] {
            urls = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return try urls.map { url in
            do {
                return try adapted(try PostgresConfiguration(connectionString: url))
            } catch let error as PostgresError {
                throw CommandFailure("The replica URL is not valid: \(error.message).")
            }
        }
    }

    /// Pools for the replicas, or nil when there are none.
    func makeReplicas(maxConnections: Int) throws -> ReadReplicas? {
        let configurations = try replicaConfigurations()
        guard !configurations.isEmpty else { return nil }
        return ReadReplicas(
            pools: configurations.map {
                ConnectionPool(configuration: $0, options: .init(maxConnections: maxConnections, acquireTimeout: .seconds(15)))
            })
    }

    /// The pooler between us and the server, from `--pooler` or `ORBIT_POOLER`.
    func poolerMode() throws -> Pooler {
        if let pooler { return pooler }
        guard let text = ProcessInfo.processInfo.environment["ORBIT_POOLER"], !text.isEmpty else { return .none }
        guard let mode = Pooler(rawValue: text) else {
            throw CommandFailure("ORBIT_POOLER must be none, session or transaction (got \"\(text)\").")
        }
        return mode
    }

    /// The configuration with what the pooler needs: behind a transaction-mode pooler a prepared
    /// statement does not outlive its transaction, so statements go unnamed.
    private func adapted(_ configuration: PostgresConfiguration) throws -> PostgresConfiguration {
        var configuration = configuration
        if try poolerMode() == .transaction { configuration.statementCacheCapacity = 0 }
        return configuration
    }

    /// The configuration, or nil when neither the flag nor DATABASE_URL names a database.
    func explicitConfiguration() throws -> PostgresConfiguration? {
        do {
            if let databaseURL { return try adapted(try PostgresConfiguration(connectionString: databaseURL)) }
            let environment = try PostgresConfiguration.fromEnvironment()
            return environment.connectionString == nil ? nil : try adapted(environment)
        } catch let error as PostgresError {
            // libpq's parse error, with the password masked: one sentence for the terminal.
            throw CommandFailure("The database URL is not valid: \(error.message).")
        }
    }

    /// The flag, DATABASE_URL, libpq's PG* variables, or else (with none of them set) the
    /// database of the `orbitctl dev` cluster running in the current directory.
    func configuration() throws -> PostgresConfiguration {
        if let explicit = try explicitConfiguration() { return explicit }
        let environment = ProcessInfo.processInfo.environment
        let libpqConfigured = ["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE"].contains { environment[$0]?.isEmpty == false }
        if !libpqConfigured, let endpoint = DevClusterHome.runningEndpoint(projectDirectory: FileManager.default.currentDirectoryPath) {
            return try adapted(
                PostgresConfiguration(parameters: [
                    (keyword: "host", value: endpoint.socketDirectory), (keyword: "port", value: String(endpoint.port)),
                    (keyword: "user", value: "postgres"), (keyword: "dbname", value: Dev.databaseName),
                ])
            )
        }
        return try adapted(PostgresConfiguration())
    }

    /// The configuration for migrating: always a direct connection, because migrations hold a
    /// session-level advisory lock across transactions, which no transaction-mode pooler keeps.
    func directConfiguration() throws -> PostgresConfiguration {
        guard try poolerMode() != .transaction else {
            throw CommandFailure(
                "Migrations need a direct connection to PostgreSQL, not a transaction-mode pooler: give the server's own address with --database-url and --pooler none."
            )
        }
        return try configuration()
    }
}

/// What stands between orbitctl and PostgreSQL.
enum Pooler: String, ExpressibleByArgument, CaseIterable {
    /// A direct connection.
    case none
    /// A session-mode pooler: a client keeps its server connection for its session.
    case session
    /// A transaction-mode pooler (pgbouncer `pool_mode = transaction`): consecutive
    /// transactions of one client may run on different server connections.
    case transaction
}

struct OutputOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log what happens, with details of errors.")
    var verbose = false

    func bootstrapLogging() {
        let level: Logger.Level = verbose ? .debug : .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
