import ArgumentParser
import Foundation
import OrbitCore
import OrbitMigrations

/// `orbitctl migrate`: the schema, from migrations/ and sql/ built into orbitctl (or --dir).
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending schema migrations, then changed repeatable SQL files.",
        discussion: """
            Versioned files (migrations/NNNN_name.sql) apply once, in order, each in its own transaction,
            and are recorded in schema_migrations. Repeatable files (sql/*.sql) are re-applied when they
            change, and all of them after any migration ran. The files built into orbitctl are used unless
            --dir names a folder holding migrations/ (and optionally sql/).

            Connect directly to PostgreSQL, not through a transaction-mode pooler.
            """,
        subcommands: [Apply.self, Status.self, New.self],
        defaultSubcommand: Apply.self
    )
}

/// Where the SQL files come from.
struct MigrationSourceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A folder holding migrations/ and optionally sql/ (default: the files built into orbitctl).", valueName: "path"))
    var dir: String?

    func catalog() throws -> MigrationCatalog {
        if let dir { return try MigrationCatalog.load(directory: dir) }
        return try MigrationCatalog.embedded()
    }
}

extension Migrate {
    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apply",
            abstract: "Apply what is pending (the default: `orbitctl migrate` runs this)."
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var source: MigrationSourceOptions
        @OptionGroup var output: OutputOptions

        @Flag(help: "Show what would be applied, and apply nothing.")
        var dryRun = false

        @Option(help: ArgumentHelp("Seconds to wait for another migrator to finish.", valueName: "seconds"))
        var lockTimeout: Int = 60

        @Flag(help: "Print the result as JSON.")
        var json = false

        func validate() throws {
            guard (0...3600).contains(lockTimeout) else { throw ValidationError("--lock-timeout must be between 0 and 3600 seconds.") }
        }

        func run() async throws {
            output.bootstrapLogging()
            let migrator = Migrator(
                configuration: try database.directConfiguration(),
                catalog: try source.catalog(),
                lockTimeout: .seconds(lockTimeout)
            )
            let report = try await migrator.migrate(dryRun: dryRun)
            if json {
                try printJSON(
                    MigrateOutput(
                        dryRun: dryRun,
                        applied: report.applied.map { .init(path: $0.path, executionMs: $0.duration.wholeMilliseconds) }
                    )
                )
                return
            }
            if report.applied.isEmpty {
                print("The database is up to date; nothing to apply.")
                return
            }
            for file in report.applied {
                print(dryRun ? "Would apply \(file.path)" : "Applied \(file.path) (\(file.duration.wholeMilliseconds) ms)")
            }
            if !dryRun { print("The database is up to date.") }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every migration and repeatable file as applied, pending or changed."
        )

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var source: MigrationSourceOptions
        @OptionGroup var output: OutputOptions

        @Flag(help: "Print the result as JSON.")
        var json = false

        func run() async throws {
            output.bootstrapLogging()
            let migrator = Migrator(configuration: try database.directConfiguration(), catalog: try source.catalog())
            let status = try await migrator.status()
            if json {
                try printJSON(
                    status.entries.map {
                        StatusOutput(path: $0.path, version: $0.version, state: $0.state.rawValue, appliedAt: $0.appliedAt)
                    }
                )
                return
            }
            let width = max(status.entries.map(\.path.count).max() ?? 0, 4)
            print("STATE    " + "FILE".padding(toLength: width, withPad: " ", startingAt: 0) + "  APPLIED AT")
            for entry in status.entries {
                let applied = entry.appliedAt.map { $0.formatted(.iso8601) } ?? ""
                print(
                    entry.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
                        + entry.path.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + applied
                )
            }
            let pending = status.entries.filter { $0.state != .applied }.count
            print(pending == 0 ? "\nThe database is up to date." : "\n\(pending) file(s) to apply or check.")
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the next numbered migration file, migrations/NNNN_<name>.sql."
        )

        @Argument(help: "What the migration does, in a few words (becomes lower_snake_case).")
        var name: String

        @Option(help: ArgumentHelp("The folder holding migrations/ (default: the current directory).", valueName: "path"))
        var dir: String = "."

        func run() throws {
            let slug = name.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }
                .reduce(into: "") { text, character in
                    if character == "_", text.last == "_" { return }
                    text.append(character)
                }
                .trimmingCharacters(in: CharacterSet(charactersIn: "_"))
            guard !slug.isEmpty else {
                throw ValidationError("The name needs at least one letter or digit.")
            }
            let catalog = try MigrationCatalog.load(directory: dir)
            let fileName = String(format: "%04d", catalog.nextVersion) + "_\(slug).sql"
            let path = URL(fileURLWithPath: dir).appending(path: "migrations").appending(path: fileName).path
            let template = """
                -- \(name)
                --
                -- Applied once, in its own transaction, after \(catalog.migrations.last?.fileName ?? "nothing").
                -- Say why each change is needed (which spec rule, which defect).
                -- A live database must not wait on it for long (docs/operations.md, "Migrations on a
                -- large, live database"; scripts/migration-lint.sh checks it).
                SET LOCAL lock_timeout = '5s';
                SET LOCAL statement_timeout = '5min';

                """
            guard FileManager.default.createFile(atPath: path, contents: Data(template.utf8), attributes: nil) else {
                throw CommandFailure("Could not create \(path).")
            }
            print("Created \(path)")
        }
    }
}

private struct MigrateOutput: Encodable {
    struct File: Encodable {
        var path: String
        var executionMs: Int64

        enum CodingKeys: String, CodingKey { case path, executionMs = "execution_ms" }
    }
    var dryRun: Bool
    var applied: [File]

    enum CodingKeys: String, CodingKey { case dryRun = "dry_run", applied }
}

private struct StatusOutput: OmitsNilMembers {
    var path: String
    var version: Int?
    var state: String
    var appliedAt: Date?

    enum CodingKeys: String, CodingKey { case path, version, state, appliedAt = "applied_at" }
}
