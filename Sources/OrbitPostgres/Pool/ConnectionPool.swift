import CLibPQ
public import Logging
import Synchronization

/// A bounded pool of connections shared by many tasks.
///
/// `withConnection` lends a connection to one task at a time and runs the task's code on that
/// connection's thread, so statements need no thread hop. Before lending a connection the pool
/// checks that it is still usable; one broken by `pg_terminate_backend`, a server restart or a
/// network failure is discarded and replaced. A connection returned inside a transaction or in
/// an unknown state is closed, never reused: a half-done transaction cannot leak into the next
/// task.
public final class ConnectionPool: Sendable {
    public struct Options: Sendable {
        /// The most connections open at once, lent or idle.
        public var maxConnections: Int = 10
        /// How long `withConnection` waits for a free connection before failing with `.poolTimeout`.
        public var acquireTimeout: Duration = .seconds(10)
        /// A connection idle this long is checked with a round trip (`SELECT 1`) before being lent.
        public var validationInterval: Duration = .seconds(30)

        public init(maxConnections: Int = 10, acquireTimeout: Duration = .seconds(10)) {
            self.maxConnections = max(1, maxConnections)
            self.acquireTimeout = acquireTimeout
        }
    }

    public let configuration: PostgresConfiguration
    public let options: Options
    let logger: Logger
    private let state: Mutex<PoolState>
    /// A connection of this pool found a transaction-mode pooler (see `PostgresConnection.execute`).
    private let poolerDetected = Atomic<Bool>(false)
    private let roundTripTotal = Atomic<Int>(0)
    /// How long each `withConnection` waited for its connection (`acquireWaits`).
    private let waits = Mutex(WaitHistogram())

    public init(
        configuration: PostgresConfiguration,
        options: Options = Options(),
        logger: Logger = Logger(label: "orbit.postgres.pool")
    ) {
        self.configuration = configuration
        self.options = options
        self.logger = logger
        self.state = Mutex(PoolState(maxConnections: options.maxConnections))
    }

    /// Lends a connection to `body` and takes it back on every path.
    ///
    /// - Throws: what `body` throws; `.poolTimeout` if no connection became free in time;
    ///   `.connectionFailed` if a new connection could not be opened; `.poolClosed`.
    @discardableResult
    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        // A connection found broken is replaced; after that many failures in a row the server
        // is likely down and the error from opening a new connection is what the caller sees.
        for _ in 0...options.maxConnections {
            let asked = ContinuousClock.now
            let lease = try await acquire()
            let waited = ContinuousClock.now - asked
            waits.withLock { $0.record(waited) }
            let connection = lease.connection
            let mustValidate = lease.idleSince.map { ContinuousClock.now - $0 >= options.validationInterval } ?? false
            let outcome: LeaseOutcome<Result> = try await withTaskExecutorPreference(connection.thread) {
                guard await isUsable(connection, validate: mustValidate) else {
                    release(connection, reusable: false)
                    return .unusable
                }
                // One connection found its prepared statements vanishing between transactions (a
                // transaction-mode pooler): the others send unnamed statements too.
                if poolerDetected.load(ordering: .relaxed) && !connection.detectedPooler {
                    do {
                        try await connection.onThread { connection.disableStatementCacheOnThread() }
                    } catch {
                        // Only a closed connection refuses; the body's first statement says so.
                        logger.debug("could not switch a connection to unnamed statements", metadata: ["error": "\(error)"])
                    }
                }
                // Counted before the connection goes back: then it may serve someone else at once.
                let roundTripsBefore = connection.roundTrips
                do {
                    let result = try await connection.withCancellationScope { try await body(connection) }
                    roundTripTotal.add(connection.roundTrips - roundTripsBefore, ordering: .relaxed)
                    if connection.detectedPooler { poolerDetected.store(true, ordering: .relaxed) }
                    release(connection, reusable: await isReusable(connection))
                    return .finished(result)
                } catch {
                    roundTripTotal.add(connection.roundTrips - roundTripsBefore, ordering: .relaxed)
                    if connection.detectedPooler { poolerDetected.store(true, ordering: .relaxed) }
                    release(connection, reusable: await isReusable(connection))
                    throw error
                }
            }
            if case .finished(let result) = outcome { return result }
            logger.debug("discarded a broken pooled connection", metadata: ["backend.pid": "\(connection.backendPID)"])
        }
        throw PostgresError(code: .connectionClosed, message: "every pooled connection was broken; the server may be restarting")
    }

    /// Runs `body` in a transaction on a pooled connection (see `PostgresConnection.withTransaction`).
    @discardableResult
    public func withTransaction<Result>(
        _ options: TransactionOptions = TransactionOptions(),
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection { connection in
            try await connection.withTransaction(options, body)
        }
    }

    /// Runs one statement on a pooled connection.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await withConnection { try await $0.query(query) }
    }

    /// Closes idle connections and refuses new work; lent connections close when returned.
    public func close() async {
        let (idle, waiters) = state.withLock { $0.close() }
        for waiter in waiters {
            waiter.timeout?.cancel()
            waiter.continuation.resume(throwing: PostgresError(code: .poolClosed, message: "the connection pool is closed"))
        }
        for entry in idle { await entry.connection.close() }
    }

    /// Round trips to the server made by the connections of this pool for their borrowers
    /// (`PostgresConnection.roundTrips`, summed over every `withConnection`): the difference
    /// across a call is what the call cost, when nothing else uses the pool meanwhile.
    public var roundTrips: Int { roundTripTotal.load(ordering: .relaxed) }

    /// How long borrowers waited for a connection since the pool opened or since
    /// `resetAcquireWaits()`: where a request waits when every connection is busy (orbit-bench
    /// http prints it beside each operation's latency). Opening a new connection counts as waiting.
    public var acquireWaits: WaitHistogram { waits.withLock { $0 } }

    public func resetAcquireWaits() { waits.withLock { $0 = WaitHistogram() } }

    /// Counts for monitoring and tests.
    public var statistics: Statistics {
        state.withLock { Statistics(open: $0.open, idle: $0.idle.count, waiting: $0.waiters.count) }
    }

    public struct Statistics: Sendable, Equatable {
        /// Connections open or being opened.
        public var open: Int
        public var idle: Int
        /// Tasks waiting for a connection.
        public var waiting: Int
    }

    // MARK: - Lending

    private enum LeaseOutcome<Result> {
        case finished(Result)
        case unusable
    }

    struct Lease {
        var connection: PostgresConnection
        /// When the connection was returned to the pool; nil for a new connection.
        var idleSince: ContinuousClock.Instant?
    }

    private func acquire() async throws -> Lease {
        switch state.withLock({ $0.acquire() }) {
        case .use(let entry):
            return Lease(connection: entry.connection, idleSince: entry.since)
        case .create:
            return Lease(connection: try await openConnection(), idleSince: nil)
        case .wait:
            return try await waitForConnection()
        case .closed:
            throw PostgresError(code: .poolClosed, message: "the connection pool is closed")
        }
    }

    private func openConnection() async throws -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(configuration, logger: logger)
        } catch {
            // The slot is free again. A waiter gets it and tries for itself, so no waiter is
            // left behind when no connection can be opened.
            if let waiter = state.withLock({ $0.slotFreed() }) {
                waiter.timeout?.cancel()
                waiter.continuation.resume(returning: .create)
            }
            throw error
        }
    }

    private func waitForConnection() async throws -> Lease {
        let id = state.withLock { $0.makeWaiterID() }
        let handoff: Handoff = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Handoff, any Error>) in
                let timeout = Task { [options] in
                    try await Task.sleep(for: options.acquireTimeout)
                    self.expireWaiter(id)
                }
                let registered = state.withLock {
                    $0.addWaiter(PoolState.Waiter(id: id, continuation: continuation, timeout: timeout))
                }
                if !registered {
                    timeout.cancel()
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            if let waiter = state.withLock({ $0.cancelWaiter(id) }) {
                waiter.timeout?.cancel()
                waiter.continuation.resume(throwing: CancellationError())
            }
        }
        switch handoff {
        case .connection(let entry):
            return Lease(connection: entry.connection, idleSince: entry.since)
        case .create:
            return Lease(connection: try await openConnection(), idleSince: nil)
        }
    }

    private func expireWaiter(_ id: Int) {
        guard let waiter = state.withLock({ $0.removeWaiter(id) }) else { return }
        let seconds = options.acquireTimeout.components.seconds
        waiter.continuation.resume(
            throwing: PostgresError(
                code: .poolTimeout,
                message: "no database connection became free within \(seconds) s (all \(options.maxConnections) are in use)"
            )
        )
    }

    /// Takes a connection back: to the next waiter, to the idle list, or closed.
    private func release(_ connection: PostgresConnection, reusable: Bool) {
        switch state.withLock({ $0.release(connection, reusable: reusable) }) {
        case .none:
            break
        case .handOver(let waiter, let handoff):
            waiter.timeout?.cancel()
            waiter.continuation.resume(returning: handoff)
        case .close(let waiter):
            if let waiter {
                waiter.timeout?.cancel()
                waiter.continuation.resume(returning: .create)
            }
            Task { await connection.close() }
        }
    }

    /// On the connection's thread: is the connection fit to be lent?
    private func isUsable(_ connection: PostgresConnection, validate: Bool) async -> Bool {
        let healthy = (try? await connection.onThread { connection.checkHealthOnThread() }) ?? false
        guard healthy, validate else { return healthy }
        do {
            _ = try await connection.runStatement(cancellable: false) { handle in
                try connection.check(PQexec(handle, "SELECT 1"), handle, sql: "SELECT 1")
            }
            return true
        } catch {
            return false
        }
    }

    /// After use: only an open connection outside any transaction goes back to the pool.
    private func isReusable(_ connection: PostgresConnection) async -> Bool {
        guard !connection.isClosed else { return false }
        let status = try? await connection.onThread { connection.transactionStatusOnThread() == PQTRANS_IDLE }
        return status ?? false
    }
}

/// What a waiting task is handed.
enum Handoff: Sendable {
    case connection(PoolState.IdleEntry)
    /// A free slot: open a new connection.
    case create
}

/// The pool's bookkeeping, always used under the pool's lock. Pure: it decides, the pool acts.
struct PoolState: ~Copyable {
    struct IdleEntry: Sendable {
        var connection: PostgresConnection
        var since: ContinuousClock.Instant
    }

    struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Handoff, any Error>
        var timeout: Task<Void, any Error>?
    }

    enum AcquireDecision {
        case use(IdleEntry)
        case create
        case wait
        case closed
    }

    enum ReleaseAction {
        case none
        case handOver(Waiter, Handoff)
        /// Close the returned connection; a waiter, if any, gets its slot.
        case close(Waiter?)
    }

    let maxConnections: Int
    /// Connections open or being opened, lent or idle.
    private(set) var open = 0
    private(set) var idle: [IdleEntry] = []
    private(set) var waiters: [Waiter] = []
    private var isClosed = false
    private var nextWaiterID = 0
    /// Waiters cancelled before they were registered.
    private var cancelledWaiters: Set<Int> = []

    init(maxConnections: Int) {
        self.maxConnections = maxConnections
    }

    mutating func acquire() -> AcquireDecision {
        if isClosed { return .closed }
        // Most recently returned first: it is the warmest and the least likely to be stale.
        if let entry = idle.popLast() { return .use(entry) }
        if open < maxConnections {
            open += 1
            return .create
        }
        return .wait
    }

    mutating func makeWaiterID() -> Int {
        nextWaiterID += 1
        return nextWaiterID
    }

    /// False if the waiter was cancelled already or the pool closed.
    mutating func addWaiter(_ waiter: Waiter) -> Bool {
        if isClosed || cancelledWaiters.remove(waiter.id) != nil { return false }
        // A connection may have come back between `acquire` and now.
        waiters.append(waiter)
        return true
    }

    mutating func removeWaiter(_ id: Int) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index)
    }

    mutating func cancelWaiter(_ id: Int) -> Waiter? {
        if let waiter = removeWaiter(id) { return waiter }
        cancelledWaiters.insert(id)
        return nil
    }

    /// A slot whose connection could not be opened or was closed. Returns a waiter to give it to.
    mutating func slotFreed() -> Waiter? {
        open -= 1
        guard !isClosed, !waiters.isEmpty else { return nil }
        open += 1
        return waiters.removeFirst()
    }

    mutating func release(_ connection: PostgresConnection, reusable: Bool) -> ReleaseAction {
        guard reusable, !isClosed else {
            return .close(slotFreed())
        }
        let entry = IdleEntry(connection: connection, since: .now)
        if !waiters.isEmpty {
            return .handOver(waiters.removeFirst(), .connection(entry))
        }
        idle.append(entry)
        return .none
    }

    mutating func close() -> ([IdleEntry], [Waiter]) {
        isClosed = true
        let result = (idle, waiters)
        open -= idle.count
        idle = []
        waiters = []
        return result
    }
}
