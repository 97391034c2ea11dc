import CLibPQ

extension PostgresConnection {
    /// Sends all `queries` in one round trip (libpq pipeline mode) and returns their results in
    /// order.
    ///
    /// Outside a transaction the statements run in one implicit transaction that commits at the
    /// end of the batch, or they can carry their own `BEGIN`/`COMMIT`. If one fails, the ones
    /// after it are skipped, the batch's transaction is rolled back and the first error is
    /// thrown. Inside `withTransaction` a failure leaves the transaction to be rolled back by it.
    ///
    /// The first batch of a transaction also carries its BEGIN and settings (see
    /// `withTransaction`); only the results of `queries` are returned.
    public func pipeline(_ queries: [PostgresQuery]) async throws -> [PostgresRows] {
        if queries.isEmpty { return [] }
        return try await runStatement { [self] connection in
            try runPipelineInTransaction(queries, on: connection)
        }
    }

    /// `runPipeline`, with the transaction's BEGIN and settings in front when they are still to
    /// be sent; returns the results of `queries` only.
    func runPipelineInTransaction(_ queries: [PostgresQuery], on connection: OpaquePointer) throws -> [PostgresRows] {
        // Refused before anything is sent, so that the BEGIN stays pending for the next statement.
        try Self.checkEncoding(queries)
        guard hasPendingBeginOnThread else { return try runPipeline(queries, on: connection) }
        let begin = takePendingBegin()
        do {
            return Array(try runPipeline(begin + queries, on: connection).dropFirst(begin.count))
        } catch {
            // BEGIN itself did not run (behind a pooler, its prepared statement was missing):
            // the transaction has not started, so a next statement must still start it, and
            // the transaction cannot commit (`withTransaction`).
            if PQtransactionStatus(connection) == PQTRANS_IDLE { deferBeginOnThread(begin, afterFailure: true) }
            throw error
        }
    }

    private static func checkEncoding(_ queries: [PostgresQuery]) throws {
        for query in queries {
            if var error = query.binds.encodingError {
                error.query = query.sql
                throw error
            }
        }
    }

    private enum Expected {
        /// A statement prepared in this batch; cached once it succeeds.
        case prepare(StatementCache.Key, String)
        /// The query at this index, run as the cached statement of `cached` when it is one.
        case query(Int, cached: StatementCache.Key?)
    }

    /// Sends `queries` as one batch and reads their results: one round trip.
    func runPipeline(_ queries: [PostgresQuery], on connection: OpaquePointer) throws -> [PostgresRows] {
        try Self.checkEncoding(queries)
        // Inside `withTransaction` (its BEGIN may be in this very batch) or a transaction of the caller's.
        let inTransaction = transactionDepthOnThread > 0 || PQtransactionStatus(connection) != PQTRANS_IDLE
        guard PQenterPipelineMode(connection) == 1 else {
            throw PostgresError(code: .misuse, message: "cannot enter pipeline mode: \(errorMessage(connection))")
        }
        var expected: [Expected] = []
        expected.reserveCapacity(queries.count + 4)
        var preparedHere: [StatementCache.Key: String] = [:]
        var sendFailed = false
        for (index, query) in queries.enumerated() {
            var sent: Int32
            var cached: StatementCache.Key?
            if isStatementCacheEnabled {
                let key = StatementCache.Key(query)
                var name = preparedHere[key] ?? cachedStatementName(for: key)
                if name != nil && preparedHere[key] == nil { cached = key }
                if name == nil {
                    let newName = makeStatementName()
                    sent = query.binds.withTypes { count, types in
                        PQsendPrepare(connection, newName, query.sql, count, types)
                    }
                    guard sent == 1 else {
                        sendFailed = true
                        break
                    }
                    expected.append(.prepare(key, newName))
                    preparedHere[key] = newName
                    name = newName
                }
                let statement = name ?? ""
                sent = query.binds.withLibpqArguments { count, _, values, lengths, formats in
                    PQsendQueryPrepared(connection, statement, count, values, lengths, formats, Self.resultFormat)
                }
            } else {
                sent = query.binds.withLibpqArguments { count, types, values, lengths, formats in
                    PQsendQueryParams(connection, query.sql, count, types, values, lengths, formats, Self.resultFormat)
                }
            }
            guard sent == 1 else {
                sendFailed = true
                break
            }
            expected.append(.query(index, cached: cached))
        }
        // Even after a failed send the sync is needed to bring the pipeline to an end.
        // On a blocking connection PQpipelineSync also flushes, reading meanwhile if it must.
        noteRoundTrip()
        let synced = PQpipelineSync(connection) == 1
        if sendFailed || !synced {
            let error = connectionError(connection, sql: nil)
            drainAndExitPipeline(connection)
            throw error
        }

        var results: [PostgresRows] = []
        results.reserveCapacity(queries.count)
        var firstError: PostgresError?
        for item in expected {
            guard let result = PQgetResult(connection) else {
                firstError = firstError ?? connectionError(connection, sql: nil)
                break
            }
            let status = PQresultStatus(result)
            switch item {
            case .prepare(let key, let name):
                if status == PGRES_COMMAND_OK {
                    cacheStatement(key, name: name, on: connection)
                    PQclear(result)
                } else {
                    let hadError = firstError != nil
                    recordFailure(result, status, connection, sql: key.sql, into: &firstError)
                    if !hadError, let firstError { notePipelineFailure(firstError, statement: nil, inTransaction: inTransaction) }
                }
            case .query(let index, let cached):
                if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
                    results.append(PostgresRows(result: result, sql: queries[index].sql))
                } else {
                    let hadError = firstError != nil
                    recordFailure(result, status, connection, sql: queries[index].sql, into: &firstError)
                    if !hadError, let firstError { notePipelineFailure(firstError, statement: cached, inTransaction: inTransaction) }
                }
            }
            // Each statement's results end with a NULL.
            if let extra = PQgetResult(connection) {
                PQclear(extra)
                firstError = firstError ?? PostgresError(code: .unexpectedResponse, message: "a pipelined statement returned more than one result")
                break
            }
        }
        drainAndExitPipeline(connection)

        if let firstError {
            // A failed batch that opened its own transaction (`BEGIN` …) is left in a failed
            // transaction; end it, unless `withTransaction` owns the transaction.
            if transactionDepthOnThread == 0 && PQtransactionStatus(connection) == PQTRANS_INERROR {
                noteRoundTrip()
                PQclear(PQexec(connection, "ROLLBACK"))
            }
            throw firstError
        }
        return results
    }

    private func recordFailure(
        _ result: OpaquePointer,
        _ status: ExecStatusType,
        _ connection: OpaquePointer,
        sql: String,
        into firstError: inout PostgresError?
    ) {
        if status == PGRES_PIPELINE_ABORTED {
            PQclear(result)
            return
        }
        let error = serverError(result, connection, sql: sql)
        PQclear(result)
        if firstError == nil { firstError = error }
    }

    /// Reads whatever is left up to the sync point and leaves pipeline mode.
    private func drainAndExitPipeline(_ connection: OpaquePointer) {
        var nullsInARow = 0
        while PQstatus(connection) == CONNECTION_OK, nullsInARow < 2 {
            guard let result = PQgetResult(connection) else {
                nullsInARow += 1
                continue
            }
            nullsInARow = 0
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if PQexitPipelineMode(connection) != 1 {
            logger.debug("could not leave pipeline mode", metadata: ["error": "\(errorMessage(connection))"])
            markBroken()
        }
    }
}
