import CLibPQ
import Foundation
public import Logging
import Synchronization

/// One connection to PostgreSQL through libpq.
///
/// Every libpq call runs on the connection's own thread, never on Swift's cooperative pool.
/// Inside `withConnection`/`run` a task runs on that thread and statements go straight to
/// libpq; from anywhere else each call hops there and back. A connection runs one statement
/// at a time; use a `ConnectionPool` to share connections between tasks.
///
/// Cancelling the task that waits for a statement cancels the statement on the server
/// (`PQcancel`) and leaves the connection usable.
public final class PostgresConnection: @unchecked Sendable {
    // @unchecked Sendable: `handle`, `statements`, `transactionDepth`, `pendingBegin`,
    // `pendingBeginFailed`, `missingStatements` and `pendingDeallocations` are touched only on `thread` (inside `thread.run` or by code already
    // running there); `status`, `poolerDetected` and `roundTripCount` are atomic and everything
    // else is immutable.
    public let configuration: PostgresConfiguration
    public let logger: Logger
    /// The server process serving this connection (`pg_backend_pid()`).
    public let backendPID: Int32
    /// The server version as libpq reports it, for example `150018`.
    public let serverVersion: Int

    let thread: ConnectionThread
    private var handle: OpaquePointer?
    private var statements: StatementCache
    private var transactionDepth = 0
    /// The BEGIN of the transaction just started and its settings, not sent yet: they travel
    /// with the transaction's first statement, in the same round trip (see `withTransaction`).
    private var pendingBegin: [PostgresQuery] = []
    /// A batch carrying the pending BEGIN failed before the BEGIN ran: the transaction must not commit.
    private var pendingBeginFailed = false
    /// Statements reported missing by the server (see `execute`).
    private var missingStatements = 0
    /// Evicted statements to deallocate at the next idle moment.
    private var pendingDeallocations: [String] = []
    private let poolerDetected = Atomic<Bool>(false)
    private let canceller: StatementCanceller
    private let notices: NoticeReceiver
    private let status = Atomic<UInt8>(Status.open.rawValue)
    /// The task whose cancellation scope covers this connection's statements (see
    /// `withCancellationScope`), or 0.
    private let scopeTask = Atomic<Int>(0)
    private let roundTripCount = Atomic<Int>(0)

    private enum Status: UInt8 {
        case open, broken, closed
    }

    private init(
        handle: OpaquePointer,
        thread: ConnectionThread,
        configuration: PostgresConfiguration,
        logger: Logger,
        notices: NoticeReceiver
    ) {
        self.handle = handle
        self.thread = thread
        self.configuration = configuration
        self.logger = logger
        self.notices = notices
        self.backendPID = PQbackendPID(handle)
        self.serverVersion = Int(PQserverVersion(handle))
        self.statements = StatementCache(capacity: configuration.statementCacheCapacity)
        self.canceller = StatementCanceller(handle: PQgetCancel(handle))
    }

    deinit {
        // No other reference exists, so nothing else can be using the handle right now.
        canceller.close()
        if let handle { PQfinish(handle) }
        thread.shutdown()
    }

    // MARK: - Connecting and closing

    /// Opens a connection.
    /// - Throws: `PostgresError` `.connectionFailed` with libpq's message (password masked).
    public static func connect(
        _ configuration: PostgresConfiguration = PostgresConfiguration(),
        logger: Logger = Logger(label: "orbit.postgres")
    ) async throws -> PostgresConnection {
        let thread = ConnectionThread(name: "orbit-postgres")
        let notices = NoticeReceiver(logger: logger)
        do {
            let opened = try await thread.run { try open(configuration, notices: notices) }
            return PostgresConnection(
                handle: opened.pointer,
                thread: thread,
                configuration: configuration,
                logger: logger,
                notices: notices
            )
        } catch {
            thread.shutdown()
            throw error
        }
    }

    /// Opens a connection, runs `body` on its thread and closes it on every path.
    @discardableResult
    public static func withConnection<Result>(
        _ configuration: PostgresConfiguration = PostgresConfiguration(),
        logger: Logger = Logger(label: "orbit.postgres"),
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await connect(configuration, logger: logger)
        do {
            let result = try await connection.run(body)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Runs `body` with this connection's thread as the task's preferred executor, so the
    /// statements it runs need no thread hop. The caller must have the connection to itself.
    @discardableResult
    public func run<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await withTaskExecutorPreference(thread) {
            // The preference applies from the task's next suspension on; move now.
            await thread.hop()
            return try await withCancellationScope { try await body(self) }
        }
    }

    // MARK: - LISTEN/NOTIFY

    /// The notifications (`NOTIFY`) that arrived for the channels this connection `LISTEN`s to,
    /// waiting up to `timeout` for the first when none is queued. Use a connection of its own
    /// (not a pooled one): it must stay in the session that ran `LISTEN`.
    public func notifications(waitingUpTo timeout: Duration) async throws -> [PostgresNotification] {
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return try await thread.run { [self] in
            guard let handle else { throw PostgresError(code: .connectionClosed, message: "the connection is closed") }
            var received = Self.drainNotifications(handle)
            guard received.isEmpty else { return received }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno != EINTR {
                throw PostgresError(code: .connectionFailed, message: "waiting for notifications failed: \(String(cString: strerror(errno)))")
            }
            if ready > 0 {
                guard PQconsumeInput(handle) == 1 else {
                    throw PostgresError(code: .connectionClosed, message: String(cString: PQerrorMessage(handle)))
                }
                received = Self.drainNotifications(handle)
            }
            return received
        }
    }

    private static func drainNotifications(_ handle: OpaquePointer) -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notice = PQnotifies(handle) {
            received.append(
                PostgresNotification(
                    channel: String(cString: notice.pointee.relname), payload: String(cString: notice.pointee.extra),
                    backendPID: notice.pointee.be_pid))
            PQfreemem(notice)
        }
        return received
    }

    /// Closes the connection. Idempotent.
    public func close() async {
        guard status.exchange(Status.closed.rawValue, ordering: .acquiringAndReleasing) != Status.closed.rawValue else {
            return
        }
        do {
            try await thread.run { [self] in
                canceller.close()
                if let handle { PQfinish(handle) }
                handle = nil
            }
        } catch {
            logger.debug("closing the connection failed", metadata: ["error": "\(error)"])
        }
        thread.shutdown()
    }

    /// True once the connection is closed or found broken; such a connection never recovers.
    public var isClosed: Bool { status.load(ordering: .acquiring) != Status.open.rawValue }

    /// Round trips to the server so far: each statement sent on its own (a prepare and its
    /// first execution are two), each pipelined batch (one, however many statements it holds),
    /// each BEGIN, COMMIT or ROLLBACK not carried by a batch. Readable from any thread.
    public var roundTrips: Int { roundTripCount.load(ordering: .relaxed) }

    /// Counts one round trip; called just before the libpq call that makes it.
    @inline(__always)
    func noteRoundTrip() {
        roundTripCount.add(1, ordering: .relaxed)
    }

    private struct UncheckedHandle: @unchecked Sendable {
        // Moves a freshly opened PGconn, used by nobody yet, from its thread to its owner.
        let pointer: OpaquePointer
    }

    private static func open(_ configuration: PostgresConfiguration, notices: NoticeReceiver) throws -> UncheckedHandle {
        let (parameters, expand) = configuration.connectParameters
        let connection = withCStringArrays(parameters.map(\.0), parameters.map(\.1)) { keywords, values in
            PQconnectdbParams(keywords, values, expand ? 1 : 0)
        }
        guard let connection else {
            throw PostgresError(code: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(connection)
            throw PostgresError(
                code: .connectionFailed,
                message: "could not connect to PostgreSQL: " + configuration.redact(message)
            )
        }
        _ = PQsetNoticeReceiver(connection, noticeCallback, Unmanaged.passUnretained(notices).toOpaque())
        return UncheckedHandle(pointer: connection)
    }

    // MARK: - Statements

    /// Runs one statement; interpolated values travel as parameters.
    ///
    /// Statements are prepared once per connection and reused (see
    /// `PostgresConfiguration.statementCacheCapacity`).
    /// - Throws: `PostgresError` (`.server` with the server's fields, `.connectionClosed`, …),
    ///   or `CancellationError` when the task was cancelled and the statement with it.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        // The common case inside `run`/`withConnection`: no hop, no handler, no closure to allocate.
        if thread.isCurrent && isInCancellationScope {
            try Task.checkCancellation()
            return try performStatement { try executeInTransaction(query, on: $0) }
        }
        return try await runStatement { [self] connection in
            try executeInTransaction(query, on: connection)
        }
    }

    /// `execute`, with the transaction's BEGIN and settings in front when they are still to be
    /// sent: one round trip for all of them.
    private func executeInTransaction(_ query: PostgresQuery, on connection: OpaquePointer) throws -> PostgresRows {
        guard !pendingBegin.isEmpty else { return try execute(query, on: connection) }
        guard let last = try runPipelineInTransaction([query], on: connection).last else {
            throw PostgresError(code: .unexpectedResponse, message: "a pipelined statement returned no result")
        }
        return last
    }

    /// Runs SQL text with the simple-query protocol: several statements separated by `;`, no
    /// parameters (migrations, setup scripts). Returns the last statement's result, in text
    /// format (the simple-query protocol has no binary results), which the decoders read too.
    @discardableResult
    public func executeScript(_ sql: String) async throws -> PostgresRows {
        try await runStatement { [self] connection in
            try sendPendingBegin(on: connection)
            noteRoundTrip()
            return try check(PQexec(connection, sql), connection, sql: sql)
        }
    }

    /// Quotes `identifier` for use as a SQL identifier (`PQescapeIdentifier`), for the rare
    /// names that must be dynamic, such as a test database's name.
    public func escapeIdentifier(_ identifier: String) async throws -> String {
        try await thread.run { [self] in
            let connection = try openHandle()
            let utf8 = Array(identifier.utf8)
            guard !utf8.contains(0), let escaped = PQescapeIdentifier(connection, identifier, utf8.count) else {
                throw PostgresError(code: .encoding, message: "the identifier cannot be quoted: \(errorMessage(connection))")
            }
            defer { PQfreemem(escaped) }
            return String(cString: escaped)
        }
    }

    /// Checks, without a round trip, that the connection is still usable: not closed, no pending
    /// end-of-stream or error from the server (a terminated backend, a restarted server), and
    /// not inside a transaction. Must run on the connection's thread.
    func checkHealthOnThread() -> Bool {
        guard !isClosed, let handle else { return false }
        // An idle connection normally has nothing to read. Something to read means the server
        // said goodbye (FATAL 57P01 after pg_terminate_backend or a shutdown, then end of
        // stream) or sent a notice. The socket is non-blocking inside libpq, so PQconsumeInput
        // reads only what has arrived; the end of stream shows on the read after the message.
        var pending = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        if poll(&pending, 1, 0) != 0 {
            for _ in 0..<4 {
                guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
                    markBroken()
                    return false
                }
            }
        }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE && PQisBusy(handle) == 0
    }

    /// The server's transaction state for this connection: idle, in a transaction, failed, ….
    func transactionStatusOnThread() -> PGTransactionStatusType {
        guard let handle else { return PQTRANS_UNKNOWN }
        return PQtransactionStatus(handle)
    }

    // MARK: - Internals shared by the statement kinds

    /// Runs `body` on the connection's thread with the libpq handle, wired to task cancellation.
    func runStatement<Result: Sendable>(
        cancellable: Bool = true,
        _ body: @escaping @Sendable (OpaquePointer) throws -> Result
    ) async throws -> Result {
        if cancellable { try Task.checkCancellation() }
        if thread.isCurrent && (!cancellable || isInCancellationScope) {
            return try performStatement(body)
        }
        let operation: @Sendable () throws -> Result = { [self] in try performStatement(body) }
        guard cancellable else { return try await thread.run(operation) }
        return try await withTaskCancellationHandler {
            try await thread.run(operation)
        } onCancel: {
            canceller.cancel()
        }
    }

    /// The statement itself, on the connection's thread: marks it in flight for the canceller
    /// and turns a cancelled statement into `CancellationError`.
    @inline(__always)
    func performStatement<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        let connection = try openHandle()
        canceller.begin()
        do {
            let result = try body(connection)
            canceller.end()
            return result
        } catch let error as PostgresError {
            let cancelled = canceller.end()
            if PQstatus(connection) != CONNECTION_OK { markBroken() }
            if cancelled && error.isQueryCanceled { throw CancellationError() }
            throw error
        } catch {
            canceller.end()
            throw error
        }
    }

    // MARK: - Cancellation scopes

    /// Runs `body` with one cancellation handler for all its statements, instead of one per
    /// statement: cancelling the task cancels whichever statement is running. Statements of
    /// this task on this thread then skip the per-statement handler (`isInCancellationScope`).
    func withCancellationScope<Result>(_ body: () async throws -> Result) async throws -> Result {
        let task = Self.currentTaskKey()
        let previous = scopeTask.exchange(task, ordering: .relaxed)
        defer { scopeTask.store(previous, ordering: .relaxed) }
        return try await withTaskCancellationHandler {
            try await body()
        } onCancel: {
            canceller.cancel()
        }
    }

    /// True when the current task runs inside this connection's cancellation scope.
    private var isInCancellationScope: Bool {
        let scope = scopeTask.load(ordering: .relaxed)
        return scope != 0 && scope == Self.currentTaskKey()
    }

    /// Identifies the current task while it lives (0 outside any task).
    private static func currentTaskKey() -> Int {
        withUnsafeCurrentTask { task in task.map { $0.hashValue | 1 } ?? 0 }
    }

    /// Runs `body` on the connection's thread (inline when already there).
    func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await thread.run(body)
    }

    func openHandle() throws -> OpaquePointer {
        guard let handle, status.load(ordering: .relaxed) != Status.closed.rawValue else {
            throw PostgresError(code: .connectionClosed, message: "the connection is closed")
        }
        return handle
    }

    func markBroken() {
        _ = status.compareExchange(expected: Status.open.rawValue, desired: Status.broken.rawValue, ordering: .acquiringAndReleasing)
    }

    var transactionDepthOnThread: Int {
        get { transactionDepth }
        set { transactionDepth = newValue }
    }

    /// True when a transaction was started and nothing of it has reached the server yet.
    var hasPendingBeginOnThread: Bool { !pendingBegin.isEmpty }

    /// Holds `statements` (BEGIN and the settings) back until the transaction's first statement;
    /// `afterFailure`: they were sent once and did not run.
    func deferBeginOnThread(_ statements: [PostgresQuery], afterFailure: Bool = false) {
        pendingBegin = statements
        pendingBeginFailed = afterFailure
    }

    /// Whether a batch carrying the pending BEGIN failed before the BEGIN ran (see
    /// `runPipelineInTransaction`): what the body meant to run in the transaction did not run.
    var pendingBeginFailedOnThread: Bool { pendingBeginFailed }

    /// The statements held back, now to be sent (in front of others); afterwards none are.
    func takePendingBegin() -> [PostgresQuery] {
        defer { pendingBegin = [] }
        return pendingBegin
    }

    /// Drops the statements held back: the transaction ended before it sent anything.
    func discardPendingBegin() {
        pendingBegin = []
        pendingBeginFailed = false
    }

    /// Sends the statements held back, on their own (before a statement that cannot join a
    /// pipeline, such as a script).
    func sendPendingBegin(on connection: OpaquePointer) throws {
        guard !pendingBegin.isEmpty else { return }
        _ = try runPipelineInTransaction([], on: connection)
    }

    /// Executes a parameterized statement, through the statement cache when it is enabled.
    ///
    /// Behind a transaction-mode pooler a prepared statement lives on one server connection
    /// while the next transaction may run on another: the server then reports the statement
    /// missing (26000) or, for a name it already has, duplicate (42P05). The first such report
    /// inside a transaction, a second one outside, or any duplicate, turns the cache off for
    /// good: statements go unnamed from then on (`detectedPooler`). A failure inside a
    /// transaction is still thrown (the transaction is aborted); the caller retries it.
    func execute(_ query: PostgresQuery, on connection: OpaquePointer) throws -> PostgresRows {
        if var error = query.binds.encodingError {
            error.query = query.sql
            throw error
        }
        guard statements.isEnabled else { return try executeUnnamed(query, on: connection) }
        let idle = PQtransactionStatus(connection) == PQTRANS_IDLE
        if idle { deallocatePending(on: connection) }
        let key = StatementCache.Key(query)
        if let name = statements.name(for: key) {
            do {
                return try executePrepared(name, query, on: connection)
            } catch let error as PostgresError where error.sqlState == "26000" {
                missingStatements += 1
                guard idle, missingStatements == 1 else {
                    disableStatementCache(because: error)
                    if idle { return try executeUnnamed(query, on: connection) }
                    throw error
                }
                // Deallocated behind our back once (DISCARD ALL): prepare it again. Only
                // outside a transaction, which the failure would otherwise have aborted.
                statements.remove(key)
            } catch let error as PostgresError where idle && Self.isStalePreparedStatement(error) {
                // Its result type changed with the schema: prepare it again.
                statements.remove(key)
            }
        }
        let name = statements.makeName()
        do {
            try prepare(name, query, on: connection)
        } catch let error as PostgresError where error.sqlState == "42P05" {
            disableStatementCache(because: error)
            if idle { return try executeUnnamed(query, on: connection) }
            throw error
        }
        if let evicted = statements.insert(key, name: name) {
            deallocate(evicted, on: connection)
        }
        // A cancel that arrived between the round trips found the server idle and was dropped.
        // (cancel() sets the flag before PQcancel even connects, so a request made after this
        // check reaches the server after the Execute message does.)
        if canceller.isCancelRequested { throw CancellationError() }
        return try executePrepared(name, query, on: connection)
    }

    private func executeUnnamed(_ query: PostgresQuery, on connection: OpaquePointer) throws -> PostgresRows {
        noteRoundTrip()
        let result = query.binds.withLibpqArguments { count, types, values, lengths, formats in
            PQexecParams(connection, query.sql, count, types, values, lengths, formats, Self.resultFormat)
        }
        return try check(result, connection, sql: query.sql)
    }

    /// Turns the statement cache off after evidence of a transaction-mode pooler.
    private func disableStatementCache(because error: PostgresError) {
        guard statements.isEnabled else { return }
        statements.disable()
        pendingDeallocations.removeAll()
        poolerDetected.store(true, ordering: .relaxed)
        logger.warning(
            """
            prepared statements do not survive between transactions on this connection (a transaction-mode pooler?): \
            sending unnamed statements from now on; set statementCacheCapacity = 0 (orbitctl: --pooler transaction) to start so
            """,
            metadata: ["postgres.sqlstate": "\(error.sqlState ?? "")"]
        )
    }

    /// A pipelined statement failed. As for a statement sent on its own (`execute`): a prepared
    /// statement the server does not have (26000) is forgotten, and reported missing inside a
    /// transaction or a second time, or a name the server already has (42P05), turns the cache
    /// off. The error is still thrown; the caller retries the transaction.
    func notePipelineFailure(_ error: PostgresError, statement key: StatementCache.Key?, inTransaction: Bool) {
        switch error.sqlState {
        case "26000":
            missingStatements += 1
            if let key { statements.remove(key) }
            if inTransaction || missingStatements > 1 { disableStatementCache(because: error) }
        case "42P05":
            disableStatementCache(because: error)
        default:
            break
        }
    }

    /// Whether this connection switched to unnamed statements because prepared ones did not
    /// survive between its transactions; a pool passes the news on to its other connections.
    public var detectedPooler: Bool { poolerDetected.load(ordering: .relaxed) }

    /// Sends unnamed statements from now on (a pool that learned of a transaction-mode pooler).
    func disableStatementCacheOnThread() {
        guard statements.isEnabled else { return }
        statements.disable()
        pendingDeallocations.removeAll()
        poolerDetected.store(true, ordering: .relaxed)
    }

    /// Statements with the extended protocol ask for every column in binary: no text to parse,
    /// and nothing depends on the session's `DateStyle`, `IntervalStyle` or `extra_float_digits`.
    /// (libpq takes one format for the whole result; `executeScript`'s results stay text.)
    static let resultFormat = PostgresFormat.binary.rawValue

    static func isStalePreparedStatement(_ error: PostgresError) -> Bool {
        error.sqlState == "26000" || (error.sqlState == "0A000" && error.message.contains("cached plan"))
    }

    /// A statement name as the cache knows it, or `nil` after preparing it in a pipeline.
    func cachedStatementName(for key: StatementCache.Key) -> String? {
        statements.isEnabled ? statements.name(for: key) : nil
    }

    var isStatementCacheEnabled: Bool { statements.isEnabled }

    func makeStatementName() -> String { statements.makeName() }

    func cacheStatement(_ key: StatementCache.Key, name: String, on connection: OpaquePointer) {
        if let evicted = statements.insert(key, name: name) {
            deallocate(evicted, on: connection)
        }
    }

    private func prepare(_ name: String, _ query: PostgresQuery, on connection: OpaquePointer) throws {
        noteRoundTrip()
        let result = query.binds.withTypes { count, types in
            PQprepare(connection, name, query.sql, count, types)
        }
        _ = try check(result, connection, sql: query.sql)
    }

    private func executePrepared(_ name: String, _ query: PostgresQuery, on connection: OpaquePointer) throws -> PostgresRows {
        noteRoundTrip()
        let result = query.binds.withLibpqArguments { count, _, values, lengths, formats in
            PQexecPrepared(connection, name, count, values, lengths, formats, Self.resultFormat)
        }
        return try check(result, connection, sql: query.sql)
    }

    /// Deallocates an evicted statement now when idle, or at the next idle moment: inside a
    /// transaction a DEALLOCATE that fails (the statement lives on another server connection,
    /// behind a pooler) would abort the caller's transaction.
    private func deallocate(_ name: String, on connection: OpaquePointer) {
        guard PQtransactionStatus(connection) == PQTRANS_IDLE else {
            pendingDeallocations.append(name)
            return
        }
        deallocateNow(name, on: connection)
    }

    private func deallocatePending(on connection: OpaquePointer) {
        guard !pendingDeallocations.isEmpty else { return }
        let names = pendingDeallocations
        pendingDeallocations.removeAll()
        for name in names { deallocateNow(name, on: connection) }
    }

    private func deallocateNow(_ name: String, on connection: OpaquePointer) {
        // Names are `orbit_<hex>_s<n>`, so splicing one into the statement is safe.
        noteRoundTrip()
        let result = PQexec(connection, "DEALLOCATE \(name)")
        if result.map({ PQresultStatus($0) }) != PGRES_COMMAND_OK {
            logger.debug("could not deallocate a cached statement", metadata: ["error": "\(errorMessage(connection))"])
        }
        PQclear(result)
    }

    /// Turns a libpq result into rows, or clears it and throws what went wrong.
    func check(_ result: OpaquePointer?, _ connection: OpaquePointer, sql: String) throws -> PostgresRows {
        guard let result else {
            throw connectionError(connection, sql: sql)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresRows(result: result, sql: sql)
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
            let error = serverError(result, connection, sql: sql)
            PQclear(result)
            throw error
        default:
            // COPY and friends: this client does not speak them, and the connection is now
            // in a state it cannot leave cleanly.
            let status = String(cString: PQresStatus(PQresultStatus(result)))
            PQclear(result)
            markBroken()
            throw PostgresError(code: .unexpectedResponse, message: "unexpected result status \(status) (COPY is not supported)")
        }
    }

    func serverError(_ result: OpaquePointer, _ connection: OpaquePointer, sql: String) -> PostgresError {
        func field(_ code: UInt8) -> String? {
            PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
        }
        let broken = PQstatus(connection) != CONNECTION_OK
        if broken { markBroken() }
        let primary =
            field(UInt8(ascii: "M"))
            ?? String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
        var error = PostgresError(code: broken ? .connectionClosed : .server, message: primary)
        error.sqlState = field(UInt8(ascii: "C"))
        error.severity = field(UInt8(ascii: "V")) ?? field(UInt8(ascii: "S"))
        error.detail = field(UInt8(ascii: "D"))
        error.hint = field(UInt8(ascii: "H"))
        error.position = field(UInt8(ascii: "P")).flatMap { Int($0) }
        error.context = field(UInt8(ascii: "W"))
        error.schema = field(UInt8(ascii: "s"))
        error.table = field(UInt8(ascii: "t"))
        error.column = field(UInt8(ascii: "c"))
        error.dataType = field(UInt8(ascii: "d"))
        error.constraint = field(UInt8(ascii: "n"))
        error.query = sql
        return error
    }

    func connectionError(_ connection: OpaquePointer, sql: String?) -> PostgresError {
        let broken = PQstatus(connection) != CONNECTION_OK
        if broken { markBroken() }
        var error = PostgresError(code: broken ? .connectionClosed : .unexpectedResponse, message: errorMessage(connection))
        error.query = sql
        return error
    }

    func errorMessage(_ connection: OpaquePointer) -> String {
        String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Routes the server's notices and warnings to the connection's logger instead of stderr.
final class NoticeReceiver: Sendable {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }

    func receive(_ result: OpaquePointer) {
        let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))).map { String(cString: $0) } ?? "NOTICE"
        let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
        let level: Logger.Level = severity == "WARNING" ? .warning : .debug
        logger.log(level: level, "\(message)", metadata: ["postgres.severity": "\(severity)"])
    }
}

private let noticeCallback: PQnoticeReceiver = { argument, result in
    guard let argument, let result else { return }
    Unmanaged<NoticeReceiver>.fromOpaque(argument).takeUnretainedValue().receive(result)
}

/// Calls `body` with NULL-terminated arrays of C strings, as `PQconnectdbParams` takes them.
func withCStringArrays<Result>(
    _ first: [String],
    _ second: [String],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> Result
) -> Result {
    let firstCopies = first.map { strdup($0) }
    let secondCopies = second.map { strdup($0) }
    defer {
        firstCopies.forEach { free($0) }
        secondCopies.forEach { free($0) }
    }
    let firstPointers = firstCopies.map { UnsafePointer($0) } + [nil]
    let secondPointers = secondCopies.map { UnsafePointer($0) } + [nil]
    return firstPointers.withUnsafeBufferPointer { firstBuffer in
        secondPointers.withUnsafeBufferPointer { secondBuffer in
            body(firstBuffer.baseAddress!, secondBuffer.baseAddress!)
        }
    }
}

/// One `NOTIFY` a listening connection received.
public struct PostgresNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
    /// The server process of the session that sent it.
    public var backendPID: Int32
}
