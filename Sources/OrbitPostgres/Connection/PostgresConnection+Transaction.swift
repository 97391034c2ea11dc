import CLibPQ

/// How a transaction starts.
public struct TransactionOptions: Sendable, Hashable {
    public enum IsolationLevel: String, Sendable, Hashable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// `nil` keeps the server's default (`default_transaction_isolation`, normally READ COMMITTED).
    public var isolation: IsolationLevel?
    public var readOnly: Bool
    /// Settings made for this transaction only, right after BEGIN, with
    /// `set_config(name, value, true)`: `role` switches the role as `SET LOCAL ROLE` does, a
    /// custom name such as `app.current_user_id` passes context to row-level security policies.
    /// Names and values travel as parameters; both end with the transaction, which keeps them
    /// safe behind a transaction-mode pooler. (Ignored for nested transactions.)
    public var localSettings: [String: String]

    public init(isolation: IsolationLevel? = nil, readOnly: Bool = false, localSettings: [String: String] = [:]) {
        self.isolation = isolation
        self.readOnly = readOnly
        self.localSettings = localSettings
    }

    /// `SELECT set_config($1, $2, true), …` for `localSettings`, in name order, or nil.
    var settingsQuery: PostgresQuery? {
        guard !localSettings.isEmpty else { return nil }
        var interpolation = PostgresQuery.StringInterpolation(literalCapacity: 32 * localSettings.count, interpolationCount: 2 * localSettings.count)
        interpolation.appendLiteral("SELECT ")
        for (index, (name, value)) in localSettings.sorted(by: { $0.key < $1.key }).enumerated() {
            interpolation.appendLiteral(index == 0 ? "set_config(" : ", set_config(")
            interpolation.appendInterpolation(name)
            interpolation.appendLiteral(", ")
            interpolation.appendInterpolation(value)
            interpolation.appendLiteral(", true)")
        }
        return PostgresQuery(stringInterpolation: interpolation)
    }

    /// The BEGIN statement. Built only from the fixed texts above.
    var beginStatement: String {
        var sql = "BEGIN"
        if let isolation { sql += " ISOLATION LEVEL \(isolation.rawValue)" }
        if readOnly { sql += " READ ONLY" }
        return sql
    }
}

extension PostgresConnection {
    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws or the
    /// task is cancelled. Nested calls use savepoints, so an inner failure can be caught
    /// without losing the outer transaction.
    ///
    /// - Throws: what `body` threw; a COMMIT failure (deferred constraint, serialization
    ///   failure, …); `.transactionRolledBack` if a statement failed and `body` swallowed the
    ///   error, so the server rolled the transaction back; `.connectionClosed` if the connection
    ///   broke (then nothing was committed, unless the break came during COMMIT itself, which
    ///   the error says).
    @discardableResult
    public func withTransaction<Result>(
        _ options: TransactionOptions = TransactionOptions(),
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let level = try await begin(options)
        let result: Result
        do {
            result = try await body(self)
            try Task.checkCancellation()
        } catch {
            await rollback(level: level)
            throw error
        }
        try await commit(level: level)
        return result
    }

    /// BEGIN, or SAVEPOINT when already in a transaction. Returns the new nesting level (1 = outermost).
    ///
    /// The outermost BEGIN and its settings are not sent here: they go with the transaction's
    /// first statement, as one pipelined batch, so a transaction of one statement costs two
    /// round trips (the statement, COMMIT). The server sees nothing of the transaction before
    /// that statement; its `now()` and, for REPEATABLE READ, its snapshot start there.
    private func begin(_ options: TransactionOptions) async throws -> Int {
        try await runStatement { [self] connection in
            let level = transactionDepthOnThread + 1
            if level == 1 {
                var statements = [PostgresQuery(unsafeSQL: options.beginStatement)]
                if let settings = options.settingsQuery { statements.append(settings) }
                deferBeginOnThread(statements)
                transactionDepthOnThread = level
                return level
            }
            let sql = "SAVEPOINT orbit_savepoint_\(level)"
            if hasPendingBeginOnThread {
                _ = try runPipelineInTransaction([PostgresQuery(unsafeSQL: sql)], on: connection)
            } else {
                noteRoundTrip()
                _ = try check(PQexec(connection, sql), connection, sql: sql)
            }
            transactionDepthOnThread = level
            return level
        }
    }

    private func commit(level: Int) async throws {
        try await runStatement(cancellable: false) { [self] connection in
            defer { transactionDepthOnThread = level - 1 }
            if level == 1 && pendingBeginFailedOnThread {
                // A statement failed before the transaction even began, and `body` caught the error.
                discardPendingBegin()
                throw PostgresError(
                    code: .transactionRolledBack,
                    message: "a statement in the transaction failed, so it was rolled back"
                )
            }
            // The body ran no statement: BEGIN and the settings still go, so that a setting the
            // server refuses fails the transaction as it would have at its start.
            do {
                try sendPendingBegin(on: connection)
            } catch {
                discardPendingBegin()
                if PQtransactionStatus(connection) != PQTRANS_IDLE { rollbackOnThread(level: level, connection) }
                throw error
            }
            if PQtransactionStatus(connection) == PQTRANS_INERROR {
                // A statement failed and `body` caught the error: nothing can be committed.
                rollbackOnThread(level: level, connection)
                throw PostgresError(
                    code: .transactionRolledBack,
                    message: "a statement in the transaction failed, so it was rolled back"
                )
            }
            let sql = level == 1 ? "COMMIT" : "RELEASE SAVEPOINT orbit_savepoint_\(level)"
            let rows: PostgresRows
            do {
                noteRoundTrip()
                rows = try check(PQexec(connection, sql), connection, sql: sql)
            } catch var error as PostgresError where level == 1 && error.isConnectionFailure {
                error.message += " (the connection broke during COMMIT: the transaction may or may not have committed)"
                throw error
            }
            if level == 1 && rows.commandTag == "ROLLBACK" {
                throw PostgresError(code: .transactionRolledBack, message: "COMMIT rolled the transaction back")
            }
        }
    }

    /// ROLLBACK (or ROLLBACK TO SAVEPOINT); runs even when the task is cancelled.
    private func rollback(level: Int) async {
        do {
            try await runStatement(cancellable: false) { [self] connection in
                defer { transactionDepthOnThread = level - 1 }
                // Nothing of the transaction reached the server: there is nothing to roll back.
                if level == 1 && hasPendingBeginOnThread {
                    discardPendingBegin()
                    return
                }
                rollbackOnThread(level: level, connection)
            }
        } catch {
            // The connection is closed: the server rolls back on its own when a session ends.
            logger.debug("rollback skipped", metadata: ["error": "\(error)"])
        }
    }

    private func rollbackOnThread(level: Int, _ connection: OpaquePointer) {
        let sql =
            level == 1
            ? "ROLLBACK"
            : "ROLLBACK TO SAVEPOINT orbit_savepoint_\(level); RELEASE SAVEPOINT orbit_savepoint_\(level)"
        do {
            noteRoundTrip()
            _ = try check(PQexec(connection, sql), connection, sql: sql)
        } catch {
            // A broken connection cannot roll back, and needs not: the server discards the
            // transaction when the session ends. The pool drops the connection.
            logger.debug("rollback failed", metadata: ["error": "\(error)"])
        }
    }
}
