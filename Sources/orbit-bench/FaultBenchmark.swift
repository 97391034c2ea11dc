import ArgumentParser
import Foundation
import LocalPostgres
import Logging
import OrbitAPI
import OrbitCore
import OrbitPostgres
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `orbit-bench faults`: writes under faults, then an audit of what survived.
///
/// While writers add expenses and record dues payments through the service layer, every
/// backend is terminated, then PostgreSQL is restarted. Then writers post expenses over HTTP to
/// an `orbitctl serve` child that is killed with SIGKILL and started again; they retry with
/// the same Idempotency-Key until acknowledged. Afterwards every acknowledged write must be
/// present exactly once, nothing may be half-written (splits sum to totals, counters equal
/// recounts, balances sum to zero), and the report prints the counts and the recovery times.
struct FaultBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults",
        abstract: "Writes while backends are terminated, PostgreSQL restarts and the API server is killed; then check what survived."
    )

    @Option(help: "Concurrent writers.") var writers = 8
    @Option(help: "Seconds of load around each fault.") var seconds = 4
    @Option(help: "The orbitctl binary for the SIGKILL phase (default: beside orbit-bench).") var orbitctl: String?

    /// What the writers saw: acknowledged markers, failures, and the first success after each fault.
    final class Ledger: Sendable {
        private let state = Mutex<(acknowledged: [String], failed: Int, attempted: Int, lastSuccess: ContinuousClock.Instant?)>(([], 0, 0, nil))

        func attempt() { state.withLock { $0.attempted += 1 } }
        func fail() { state.withLock { $0.failed += 1 } }
        func acknowledge(_ marker: String) {
            state.withLock {
                $0.acknowledged.append(marker)
                $0.lastSuccess = .now
            }
        }
        var snapshot: (acknowledged: [String], failed: Int, attempted: Int) { state.withLock { ($0.acknowledged, $0.failed, $0.attempted) } }
        var lastSuccess: ContinuousClock.Instant? { state.withLock { $0.lastSuccess } }
    }

    /// Tells the writers to finish.
    final class StopFlag: Sendable {
        private let state = Mutex(false)
        var isSet: Bool { state.withLock { $0 } }
        func set() { state.withLock { $0 = true } }
    }

    func run() async throws {
        try await BenchmarkServer.withMigrated(databaseURL: nil, measure)
    }

    /// Waits for a child on a Dispatch thread, not the cooperative pool.
    private func waitForExit(_ process: Process) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }

    private func measure(_ server: BenchmarkServer) async throws {
        guard let cluster = server.cluster, let tcp = server.tcp else { throw ValidationError("needs its own throwaway cluster") }
        let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: writers, acquireTimeout: .seconds(30)))
        let services = OrbitServices(pool: pool)
        let admin = try await services.users.create(email: "admin@example.com", displayName: "Admin").id
        let community = try await services.communities.create(name: "Fault club", as: admin).id
        var people = [admin]
        for index in 1..<5 {
            let user = try await services.users.create(email: "m\(index)@example.com", displayName: "M\(index)").id
            _ = try await services.members.add(user, to: community, as: admin)
            people.append(user)
        }
        let members = people
        let dues = try await services.dues.create(
            in: community, name: "Season", amount: Money(minorUnits: 10_000_000, currency: .usd),
            dueDate: CivilDate(year: 2030, month: 1, day: 1), as: admin
        ).id
        let ledger = Ledger()
        let clock = ContinuousClock()

        // Phase 1 and 2: the service layer, faults in PostgreSQL.
        let stop = StopFlag()
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var sequence = 0
                        while !stop.isSet {
                            sequence += 1
                            let marker = "op-\(writer)-\(sequence)"
                            ledger.attempt()
                            do {
                                if sequence % 3 == 0 {
                                    _ = try await services.dues.recordPayment(
                                        to: dues, by: members[writer % members.count], amount: Money(minorUnits: 1, currency: .usd), note: marker,
                                        as: admin)
                                } else {
                                    _ = try await services.expenses.addExpense(
                                        in: community, description: marker, total: Money(minorUnits: 1000, currency: .usd), paidBy: admin,
                                        split: .equal(members), as: admin)
                                }
                                ledger.acknowledge(marker)
                            } catch {
                                ledger.fail()
                                try? await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                }
            }
        }
        func recovery(after fault: ContinuousClock.Instant) async throws -> Duration {
            while true {
                if let last = ledger.lastSuccess, last > fault { return last - fault }
                guard clock.now - fault < .seconds(60) else { throw ValidationError("no write succeeded within 60 s of the fault") }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        try await Task.sleep(for: .seconds(seconds))
        let terminated = clock.now
        let killed = try await PostgresConnection.withConnection(server.configuration) { connection in
            try await connection.query(
                "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
            ).single().decode("n", as: Int64.self)
        }
        let terminateRecovery = try await recovery(after: terminated)
        try await Task.sleep(for: .seconds(seconds))
        let restarted = clock.now
        try await cluster.restart(.fast)
        let restartDone = clock.now - restarted
        // From the moment the server accepts connections again.
        let restartRecovery = try await recovery(after: clock.now)
        try await Task.sleep(for: .seconds(seconds))
        stop.set()
        await load.value
        let serviceLayer = ledger.snapshot

        // Phase 3: HTTP to an orbitctl serve child, killed with SIGKILL mid-load.
        let http = try await sigkillPhase(server: server, tcp: tcp, community: community, admin: admin, members: members)

        // The audit.
        let audit = try await PostgresConnection.withConnection(server.configuration) { connection in
            func number(_ query: PostgresQuery) async throws -> Int {
                Int(try await connection.query(query).single().decode(0, as: Int64.self))
            }
            var duplicated = 0
            var lost = 0
            let markers = serviceLayer.acknowledged + http.acknowledged
            let expenseCounts = Dictionary(
                uniqueKeysWithValues: try await connection.query(
                    "SELECT description, count(*) AS n FROM transactions WHERE community_id = \(community) GROUP BY description"
                ).map { (try $0.decode("description", as: String.self), Int(try $0.decode("n", as: Int64.self))) })
            let paymentCounts = Dictionary(
                uniqueKeysWithValues: try await connection.query(
                    "SELECT notes, count(*) AS n FROM dues_payments WHERE dues_id = \(dues) GROUP BY notes"
                ).map { (try $0.decode("notes", as: String.self), Int(try $0.decode("n", as: Int64.self))) })
            for marker in markers {
                let found = (expenseCounts[marker] ?? 0) + (paymentCounts[marker] ?? 0)
                if found == 0 { lost += 1 }
                if found > 1 { duplicated += 1 }
            }
            let allRows = expenseCounts.values.reduce(0, +) + paymentCounts.values.reduce(0, +)
            let unbalanced = try await number(
                """
                SELECT count(*) FROM transactions t
                WHERE t.total_amount <> (SELECT coalesce(sum(amount), 0) FROM splits s WHERE s.transaction_id = t.id)
                """
            )
            let counterDrift = try await number(
                """
                SELECT count(*) FROM communities c
                WHERE c.member_count <> (SELECT count(*) FROM members m WHERE m.community_id = c.id AND m.left_at IS NULL)
                """
            )
            let balanceSum = try await number(
                "SELECT coalesce(sum(balance), 0)::bigint FROM balances WHERE community_id = \(community)"
            )
            return (markers.count, lost, duplicated, allRows, unbalanced, counterDrift, balanceSum)
        }
        await pool.close()

        let (acknowledged, lost, duplicated, rows, unbalanced, counterDrift, balanceSum) = audit
        print(
            "Faults: terminated \(killed) backends; restarted PostgreSQL (down \(format(restartDone.seconds * 1000, 0)) ms); SIGKILLed orbitctl serve."
        )
        print("")
        print("| phase | attempted | acknowledged | failed (seen by the client) | recovery after the fault |")
        print("|---|---|---|---|---|")
        print(
            "| service layer: pg_terminate_backend, then pg_ctl restart -m fast (recovery after the restart is back) | \(serviceLayer.attempted) | \(serviceLayer.acknowledged.count) | \(serviceLayer.failed) | \(format(terminateRecovery.seconds * 1000, 0)) ms, \(format(restartRecovery.seconds * 1000, 0)) ms |"
        )
        print(
            "| HTTP with Idempotency-Key retries: SIGKILL orbitctl serve, start it again | \(http.attempted) | \(http.acknowledged.count) | \(http.failed) | \(format(http.recovery.seconds * 1000, 0)) ms |"
        )
        print("")
        print("Audit: \(acknowledged) acknowledged writes; lost \(lost); duplicated \(duplicated); \(rows) rows with markers in the database")
        print("(rows beyond the acknowledged ones are writes whose acknowledgement the fault swallowed: whole, never half).")
        print("Transactions whose splits do not sum to the total: \(unbalanced). Member counters off their recount: \(counterDrift).")
        print("Sum of the community's balances: \(balanceSum).")
        let healthy = lost == 0 && duplicated == 0 && unbalanced == 0 && counterDrift == 0 && balanceSum == 0
        print(healthy ? "RESULT faults=ok" : "RESULT faults=FAILED")
        if !healthy { throw ExitCode.failure }
    }

    struct HTTPPhase {
        var acknowledged: [String]
        var attempted: Int
        var failed: Int
        var recovery: Duration
    }

    /// Expenses over HTTP; each writer retries a request with the same Idempotency-Key until
    /// it is acknowledged, across the server's death.
    private func sigkillPhase(
        server: BenchmarkServer, tcp: (host: String, port: Int), community: CommunityID, admin: UserID, members: [UserID]
    ) async throws -> HTTPPhase {
        let binary =
            orbitctl
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appending(path: "orbitctl").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("orbitctl not found at \(binary): build it (swift build -c release --product orbitctl) or pass --orbitctl")
        }
        let port = 20_000 + Int(getpid() % 10_000)
        let secret = String(repeating: "fault-benchmark-secret-", count: 2)
        let databaseURL = "postgresql://postgres@\(tcp.host):\(tcp.port)/\(server.databaseName)"
        func startServer() throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = [
                "serve", "--port", String(port), "--database-url", databaseURL, "--no-jobs", "--write-rate-limit", "0", "--log-level", "error",
            ]
            process.environment = ProcessInfo.processInfo.environment.merging(["ORBIT_JWT_SECRET": secret]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        // An access token the server accepts: minted the way it mints them, with its secret.
        let token = try await mintToken(secret: secret, user: admin)
        let ledger = Ledger()
        let clock = ContinuousClock()
        guard let url = URL(string: "http://127.0.0.1:\(port)/communities/\(community)/expenses") else { throw ValidationError("bad URL") }
        let body: @Sendable (String) -> Data = { marker in
            let json: [String: Any] = [
                "description": marker, "amount": 1000, "split": ["method": "equal", "user_ids": members.map(\.description)],
            ]
            return (try? JSONSerialization.data(withJSONObject: json)) ?? Data()
        }
        var first = try startServer()
        try await waitUntilServing(port: port)
        let stop = StopFlag()
        let session = URLSession(configuration: .ephemeral)
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        var sequence = 0
                        while !stop.isSet {
                            sequence += 1
                            let marker = "http-\(writer)-\(sequence)"
                            var request = URLRequest(url: url)
                            request.httpMethod = "POST"
                            request.httpBody = body(marker)
                            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                            request.setValue(marker, forHTTPHeaderField: "Idempotency-Key")
                            ledger.attempt()
                            // The same request until it is acknowledged (or the run stops).
                            while true {
                                if let (_, response) = try? await session.data(for: request), (response as? HTTPURLResponse)?.statusCode == 201 {
                                    ledger.acknowledge(marker)
                                    break
                                }
                                ledger.fail()
                                if stop.isSet { break }
                                try? await Task.sleep(for: .milliseconds(50))
                            }
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .seconds(seconds))
        let killedAt = clock.now
        kill(first.processIdentifier, SIGKILL)
        await waitForExit(first)
        first = try startServer()
        try await waitUntilServing(port: port)
        let recovery: Duration
        while true {
            if let last = ledger.lastSuccess, last > killedAt {
                recovery = last - killedAt
                break
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .seconds(seconds))
        stop.set()
        await load.value
        first.terminate()
        await waitForExit(first)
        let snapshot = ledger.snapshot
        return HTTPPhase(acknowledged: snapshot.acknowledged, attempted: snapshot.attempted, failed: snapshot.failed, recovery: recovery)
    }

    private func waitUntilServing(port: Int) async throws {
        guard let url = URL(string: "http://127.0.0.1:\(port)/healthz") else { throw ValidationError("bad URL") }
        for _ in 0..<400 {
            if let (_, response) = try? await URLSession.shared.data(from: url), (response as? HTTPURLResponse)?.statusCode == 200 { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw ValidationError("orbitctl serve did not answer on port \(port)")
    }

    private func mintToken(secret: String, user: UserID) async throws -> String {
        try await AccessTokens(secret: Array(secret.utf8), lifetime: .seconds(3600)).issue(for: user)
    }
}
