package import Foundation
package import Logging
package import OrbitPostgres

/// Applies a `MigrationCatalog` to a database (docs/schema.md).
///
/// Versioned migrations apply once, in order, each in its own transaction, and are recorded in
/// `schema_migrations`. Repeatable files are then re-applied, in name order and each in its own
/// transaction, when their checksum changed, and all of them after any versioned migration ran
/// (so that grants and policies cover what the migration created); they are recorded in
/// `schema_repeatables`. Concurrent migrators serialize on an advisory lock, polled with
/// `pg_try_advisory_lock` until `lockTimeout`.
///
/// Connect directly to PostgreSQL, not through a transaction-mode pooler: the advisory lock
/// belongs to the session.
package struct Migrator: Sendable {
    package var configuration: PostgresConfiguration
    package var catalog: MigrationCatalog
    /// How long to wait for another migrator to finish.
    package var lockTimeout: Duration
    /// How often to try the lock while waiting.
    package var lockPollInterval: Duration = .milliseconds(100)
    package var logger: Logger

    /// `pg_try_advisory_lock` key of OrbitCove's migrations ("orbitmig" as bytes).
    static let lockKey: Int64 = 0x6F72_6269_746D_6967

    package init(
        configuration: PostgresConfiguration,
        catalog: MigrationCatalog,
        lockTimeout: Duration = .seconds(60),
        logger: Logger = Logger(label: "orbit.migrate")
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.lockTimeout = lockTimeout
        self.logger = logger
    }

    // MARK: - Status

    /// Every migration and repeatable file with its state in the database. Reads only.
    package func status() async throws -> MigrationStatus {
        try await withConnection { connection in
            try await status(on: connection)
        }
    }

    private func status(on connection: PostgresConnection) async throws -> MigrationStatus {
        let applied = try await appliedMigrations(on: connection)
        let repeatables = try await appliedRepeatables(on: connection)
        var entries: [MigrationStatus.Entry] = []
        for file in catalog.migrations {
            guard let version = file.version, let record = applied[version] else {
                entries.append(.init(path: file.path, version: file.version, state: .pending, file: file))
                continue
            }
            let state: MigrationStatus.State = record.checksum == file.checksum ? .applied : .changed
            entries.append(.init(path: file.path, version: version, state: state, appliedAt: record.appliedAt, file: file))
        }
        let known = Set(catalog.migrations.compactMap(\.version))
        for (version, record) in applied where !known.contains(version) {
            entries.append(
                .init(
                    path: "migrations/\(String(format: "%04d", version))_\(record.name).sql", version: version,
                    state: .unknown, appliedAt: record.appliedAt)
            )
        }
        entries.sort { ($0.version ?? .max, $0.path) < ($1.version ?? .max, $1.path) }
        for file in catalog.repeatables {
            let state: MigrationStatus.State
            switch repeatables[file.path] {
            case nil: state = .pending
            case let record? where record.checksum == file.checksum: state = .applied
            case _?: state = .changed
            }
            entries.append(.init(path: file.path, version: nil, state: state, appliedAt: repeatables[file.path]?.appliedAt, file: file))
        }
        return MigrationStatus(entries: entries)
    }

    // MARK: - Migrate

    /// Applies what is pending. With `dryRun`, only reports what it would apply.
    ///
    /// - Throws: `MigrationError`: `.checksumMismatch` or `.unknownMigration` before anything is
    ///   applied; `.statementFailed` naming the file, line and server message after rolling
    ///   that file back (files applied before it stay applied); `.lockTimeout`;
    ///   `.connectionFailed`.
    @discardableResult
    package func migrate(dryRun: Bool = false) async throws -> MigrationReport {
        try await withConnection { connection in
            if dryRun {
                let plan = try plan(from: try await status(on: connection))
                return MigrationReport(applied: plan.map { .init(path: $0.path, duration: .zero) }, dryRun: true)
            }
            try await acquireLock(on: connection)
            do {
                let report = try await migrateLocked(on: connection)
                try await releaseLock(on: connection)
                return report
            } catch {
                // The session ends with the connection, which releases the lock in any case.
                try? await releaseLock(on: connection)
                throw error
            }
        }
    }

    private func migrateLocked(on connection: PostgresConnection) async throws -> MigrationReport {
        try await connection.executeScript(Self.bookkeepingDDL)
        let plan = try plan(from: try await status(on: connection))
        var applied: [MigrationReport.AppliedFile] = []
        for file in plan {
            let duration = try await apply(file, on: connection)
            applied.append(.init(path: file.path, duration: duration))
            logger.debug("applied \(file.path)", metadata: ["ms": "\(duration.wholeMilliseconds)"])
        }
        return MigrationReport(applied: applied, dryRun: false)
    }

    /// What to apply, in order; throws if an applied migration changed or is unknown.
    private func plan(from status: MigrationStatus) throws -> [SQLFile] {
        if let changed = status.entries.first(where: { $0.state == .changed && $0.version != nil }) {
            throw MigrationError(
                .checksumMismatch, file: changed.path,
                message: "\(changed.path) was changed after it was applied (its checksum differs); nothing was applied. "
                    + "Restore the file and put the change in a new migration."
            )
        }
        if let unknown = status.entries.first(where: { $0.state == .unknown }) {
            throw MigrationError(
                .unknownMigration, file: unknown.path,
                message: "the database has migration \(unknown.version.map { String($0) } ?? "?") applied, which these files "
                    + "do not contain; nothing was applied. Use the orbitctl (or --dir) that applied it."
            )
        }
        let versioned = status.entries.filter { $0.version != nil && $0.state == .pending }.compactMap(\.file)
        let repeatables = status.entries.filter { $0.version == nil }
        let repeatable =
            versioned.isEmpty
            ? repeatables.filter { $0.state != .applied }.compactMap(\.file)
            : repeatables.compactMap(\.file)
        return versioned + repeatable
    }

    /// Runs one file's statements and records it, in one transaction.
    private func apply(_ file: SQLFile, on connection: PostgresConnection) async throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        // A file that must read one consistent snapshot throughout says so in a comment line.
        let isolation: TransactionOptions.IsolationLevel? =
            file.contents.contains("-- orbit:isolation repeatable-read") ? .repeatableRead : nil
        try await connection.withTransaction(TransactionOptions(isolation: isolation)) { connection in
            try await run(file, on: connection)
            let milliseconds = Int32(clamping: (clock.now - start).wholeMilliseconds)
            switch file.kind {
            case .versioned(let version):
                try await connection.query(
                    """
                    INSERT INTO public.schema_migrations (version, name, checksum, execution_ms)
                    VALUES (\(Int32(clamping: version)), \(file.name), \(file.checksum), \(milliseconds))
                    """
                )
            case .repeatable:
                try await connection.query(
                    """
                    INSERT INTO public.schema_repeatables (path, checksum, execution_ms)
                    VALUES (\(file.path), \(file.checksum), \(milliseconds))
                    ON CONFLICT (path) DO UPDATE
                    SET checksum = excluded.checksum, applied_at = now(), execution_ms = excluded.execution_ms
                    """
                )
            }
        }
        return clock.now - start
    }

    // MARK: - Demo data

    /// Loads the catalog's seed files (`sql/seed/`, demo data for `orbitctl dev`) into a migrated
    /// database that has no users yet, each file in one transaction. Returns the files loaded
    /// (none when the database already has data).
    /// - Throws: `MigrationError.statementFailed` naming the file and line.
    @discardableResult
    package func loadSeeds() async throws -> [String] {
        try await withConnection { connection in
            let empty = try await connection.query("SELECT NOT EXISTS (SELECT FROM public.users) AS empty").single().decode("empty", as: Bool.self)
            guard empty else { return [] }
            for file in catalog.seeds {
                try await connection.withTransaction { connection in
                    try await run(file, on: connection)
                }
            }
            return catalog.seeds.map(\.path)
        }
    }

    /// Runs a file's statements on `connection`; a failure names the file, the line and the
    /// server's message.
    private func run(_ file: SQLFile, on connection: PostgresConnection) async throws {
        for statement in SQLScript(file.contents).statements {
            do {
                try await connection.executeScript(statement.text)
            } catch let error as PostgresError where error.code == .server {
                let line = error.position.map { SQLScript.line(ofPosition: $0, in: statement) } ?? statement.line
                throw MigrationError(
                    .statementFailed, file: file.path, line: line,
                    message: "\(file.path), line \(line): \(error.message)" + (error.sqlState.map { " (SQLSTATE \($0))" } ?? "")
                        + (error.detail.map { ". \($0)" } ?? "") + "; the file was rolled back.",
                    underlying: error
                )
            }
        }
    }

    // MARK: - Bookkeeping

    static let bookkeepingDDL = """
        CREATE TABLE IF NOT EXISTS public.schema_migrations (
            version integer PRIMARY KEY,
            name text NOT NULL,
            checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now(),
            execution_ms integer NOT NULL
        );
        CREATE TABLE IF NOT EXISTS public.schema_repeatables (
            path text PRIMARY KEY,
            checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now(),
            execution_ms integer NOT NULL
        );
        """

    private struct Record {
        var name: String
        var checksum: String
        var appliedAt: Date
    }

    private func appliedMigrations(on connection: PostgresConnection) async throws -> [Int: Record] {
        guard try await tableExists("public.schema_migrations", on: connection) else { return [:] }
        var records: [Int: Record] = [:]
        for row in try await connection.query("SELECT version, name, checksum, applied_at FROM public.schema_migrations") {
            let (version, name, checksum, appliedAt) = try row.decode((Int32, String, String, Date).self)
            records[Int(version)] = Record(name: name, checksum: checksum, appliedAt: appliedAt)
        }
        return records
    }

    private func appliedRepeatables(on connection: PostgresConnection) async throws -> [String: Record] {
        guard try await tableExists("public.schema_repeatables", on: connection) else { return [:] }
        var records: [String: Record] = [:]
        for row in try await connection.query("SELECT path, checksum, applied_at FROM public.schema_repeatables") {
            let (path, checksum, appliedAt) = try row.decode((String, String, Date).self)
            records[path] = Record(name: path, checksum: checksum, appliedAt: appliedAt)
        }
        return records
    }

    private func tableExists(_ name: String, on connection: PostgresConnection) async throws -> Bool {
        let row = try await connection.query("SELECT to_regclass(\(name)) IS NOT NULL AS present").single()
        return try row.decode("present", as: Bool.self)
    }

    // MARK: - Lock and connection

    private func acquireLock(on connection: PostgresConnection) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + lockTimeout
        var waiting = false
        while true {
            let row = try await connection.query("SELECT pg_try_advisory_lock(\(Self.lockKey)) AS locked").single()
            if try row.decode("locked", as: Bool.self) { return }
            if !waiting {
                logger.notice("another migrator holds the migration lock; waiting up to \(lockTimeout)")
                waiting = true
            }
            guard clock.now < deadline else {
                throw MigrationError(
                    .lockTimeout,
                    message: "another migration has held the migration lock for more than \(lockTimeout.seconds) s; nothing was applied"
                )
            }
            try await Task.sleep(for: lockPollInterval)
        }
    }

    private func releaseLock(on connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
    }

    private func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        do {
            return try await PostgresConnection.withConnection(configuration, logger: logger, body)
        } catch let error as PostgresError where error.code == .connectionFailed {
            // libpq's first line already says "could not connect to PostgreSQL: …".
            throw MigrationError(.connectionFailed, message: error.firstLine, underlying: error)
        }
    }
}

/// Every file and where the database stands with it.
package struct MigrationStatus: Sendable {
    package enum State: String, Sendable {
        /// Applied with the file's current checksum.
        case applied
        /// Not applied yet.
        case pending
        /// Applied, but the file changed since (a repeatable file will be re-applied; a
        /// migration stops `migrate`).
        case changed
        /// Applied to the database, but no file has its version.
        case unknown
    }

    package struct Entry: Sendable {
        package var path: String
        package var version: Int?
        package var state: State
        package var appliedAt: Date?
        package var file: SQLFile?
    }

    package var entries: [Entry]

    package var isUpToDate: Bool { entries.allSatisfy { $0.state == .applied } }
}

/// What `migrate` applied (or, in a dry run, would apply).
package struct MigrationReport: Sendable {
    package struct AppliedFile: Sendable {
        package var path: String
        package var duration: Duration
    }

    package var applied: [AppliedFile]
    package var dryRun: Bool
}

extension Duration {
    /// Whole milliseconds (rounded down), for reports.
    package var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
    var seconds: Int64 { components.seconds }
}
