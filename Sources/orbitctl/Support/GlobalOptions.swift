import ArgumentParser
import Foundation
import LocalPostgres
import Logging
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

    /// The configuration, or nil when neither the flag nor DATABASE_URL names a database.
    func explicitConfiguration() throws -> PostgresConfiguration? {
        do {
            if let databaseURL { return try PostgresConfiguration(connectionString: databaseURL) }
            let environment = try PostgresConfiguration.fromEnvironment()
            return environment.connectionString == nil ? nil : environment
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
            return PostgresConfiguration(parameters: [
                (keyword: "host", value: endpoint.socketDirectory), (keyword: "port", value: String(endpoint.port)),
                (keyword: "user", value: "postgres"), (keyword: "dbname", value: Dev.databaseName),
            ])
        }
        return PostgresConfiguration()
    }
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
