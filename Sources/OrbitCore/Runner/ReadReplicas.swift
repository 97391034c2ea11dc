import Foundation
package import OrbitPostgres
import Synchronization

/// Hot standbys (streaming replicas) that take the reads which may be slightly stale: feed
/// pages, calendars, member lists, reports. Everything else, and every write, goes to the
/// primary.
///
/// Read-your-writes: after a request of a user commits on the primary, the primary's WAL insert
/// position (an LSN, taken after the commit, so at or past the commit record) is remembered for
/// that user for a while, and handed to the caller (`RequestConsistency`) so that another server
/// can honour it too. A later stale-tolerant read of that user goes to a replica only if the
/// replica has replayed that position (`pg_last_wal_replay_lsn()`, checked in the read's own
/// transaction); otherwise it runs on the primary. A replica that cannot be reached is skipped.
package final class ReadReplicas: Sendable {
    let pools: [ConnectionPool]
    private let next = Atomic<Int>(0)
    private let writes = Mutex<[UserID: (lsn: String, at: ContinuousClock.Instant)]>([:])
    /// How long a user's last write position is remembered: past that, a replica that has not
    /// replayed it is lagging far more than read-your-writes can paper over.
    static let memory: Duration = .seconds(300)

    package init(pools: [ConnectionPool]) {
        self.pools = pools
    }

    /// The replicas' configurations (for metrics and logs).
    package var configurations: [PostgresConfiguration] { pools.map(\.configuration) }

    /// The next replica, round robin.
    func pool() -> ConnectionPool {
        pools[next.add(1, ordering: .relaxed).oldValue % pools.count]
    }

    func recordWrite(of user: UserID, at lsn: String) {
        let now = ContinuousClock.now
        writes.withLock { writes in
            writes[user] = (lsn, now)
            if writes.count > 100_000 { writes = writes.filter { now - $0.value.at < Self.memory } }
        }
    }

    /// The position a read of `user` must see, if they wrote recently.
    func lastWrite(of user: UserID) -> String? {
        writes.withLock { writes in
            guard let entry = writes[user], ContinuousClock.now - entry.at < Self.memory else { return nil }
            return entry.lsn
        }
    }

    package func close() async {
        for pool in pools { await pool.close() }
    }
}

/// The read-your-writes position of one request, carried across servers by the caller: the API
/// reads it from the `Orbit-Read-After` request header and sends back the position of the
/// request's own write. Bound around a request with `RequestRunner.$consistency`.
package final class RequestConsistency: Sendable {
    private let state: Mutex<(readAfter: String?, wrote: String?)>

    /// - Parameter readAfter: the caller's position (`X/Y` hex, as PostgreSQL prints an LSN).
    package init(readAfter: String?) {
        state = Mutex((readAfter.flatMap(Self.valid), nil))
    }

    /// The position the caller asked reads to see.
    package var readAfter: String? { state.withLock { $0.readAfter } }
    /// The position of this request's last write, for the caller to send next time.
    package var wrote: String? { state.withLock { $0.wrote } }

    func recordWrite(_ lsn: String) {
        state.withLock { $0.wrote = lsn }
    }

    /// An LSN as PostgreSQL prints it (two hex numbers of up to 8 digits), or nil.
    static func valid(_ text: String) -> String? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return text
    }
}

extension RequestRunner {
    /// The request's read-your-writes position, bound by the API around each request.
    @TaskLocal package static var consistency: RequestConsistency?

    /// After a request of `user` committed on the primary: remembers where the primary's WAL
    /// was, so that the user's next reads wait for it on a replica. Only with replicas.
    func rememberWrite(of user: UserID) async {
        guard let replicas else { return }
        do {
            let lsn: String = try await pool.query("SELECT pg_current_wal_insert_lsn()::text AS lsn").single().decode("lsn")
            replicas.recordWrite(of: user, at: lsn)
            Self.consistency?.recordWrite(lsn)
        } catch {
            // Without the position, the user's next read may come from a replica that lags.
            Self.logger.warning("could not read the primary's WAL position", metadata: ["error": "\(error)"])
        }
    }

    /// Runs a read that may be slightly stale as one request of `user`: on a replica when
    /// there is one that has replayed the user's last write, on the primary otherwise.
    ///
    /// READ ONLY wherever it runs (on a replica nothing could be written anyway, so a read that
    /// tried would work on one server and fail on another), and without the client address:
    /// only audit rows read that, and a read writes none. So a read is the same transaction
    /// whether it comes through the API or not.
    package func asUserReading<Result: Sendable>(_ user: UserID, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        let options = TransactionOptions(readOnly: true, localSettings: ["role": "orbit_app", "app.current_user_id": user.description])
        guard let replicas else { return try await readOnPrimary(options, body) }
        let positions = [replicas.lastWrite(of: user), Self.consistency?.readAfter].compactMap { $0 }
        let replica = replicas.pool()
        do {
            return try await mappingErrors {
                try await retryingTransientFailures {
                    try await replica.withTransaction(options) { connection in
                        for position in positions {
                            let caughtUp: Bool = try await connection.query(
                                "SELECT coalesce(pg_last_wal_replay_lsn() >= \(position)::pg_lsn, true) AS caught_up"
                            ).single().decode("caught_up")
                            guard caughtUp else { throw ReplicaBehind() }
                        }
                        return try await body(connection)
                    }
                }
            }
        } catch is ReplicaBehind {
            return try await readOnPrimary(options, body)
        } catch let error as PostgresError where error.isConnectionFailure || error.code == .poolTimeout {
            Self.logger.warning("a replica could not be used; reading from the primary", metadata: ["error": "\(error)"])
            return try await readOnPrimary(options, body)
        }
    }

    private func readOnPrimary<Result: Sendable>(
        _ options: TransactionOptions, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await mappingErrors {
            try await retryingTransientFailures { try await pool.withTransaction(options, body) }
        }
    }
}

/// The replica has not replayed the position a read must see.
private struct ReplicaBehind: Error {}
