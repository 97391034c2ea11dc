import ArgumentParser
import Foundation
import LocalPostgres
import Logging
import OrbitAPI
import OrbitCore
import OrbitPostgres
import ServiceLifecycle

/// `orbit-bench http`: the HTTP API under wrk on loopback. A feed page and an
/// expense with 10 splits, at 16 and 64 connections, each beside the same operation called
/// straight through the service layer with as many concurrent tasks (the API's overhead), and
/// beside `GET /healthz` (the framework's ceiling on this machine) and the same feed page
/// answered from memory (what HTTP itself costs the page). One run, same pool size.
struct HTTPBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "Requests per second and p99 of the HTTP API under wrk, beside the service layer called directly and GET /healthz."
    )

    @Option(help: "Server to use (a superuser). Default: a throwaway local cluster.") var databaseURL: String?
    @Option(help: "Seconds per measurement.") var seconds = 10
    @Option(help: "Concurrent connections (and direct tasks), comma-separated.") var connections = "16,64"
    @Option(help: "Database connections of the API's pool (orbitctl serve's default).") var poolSize = 10
    @Option(help: "Posts in the community (the feed page reads the newest 20).") var posts = 1000
    @Option(help: "wrk threads.") var threads = 2
    @Option(help: "Rounds of the feed page, HTTP then direct in turn (the ratio is the median round's).") var rounds = 3
    @Flag(help: "Hold /dev/cpu_dma_latency at 0 (root) so idle vCPUs poll instead of halting; see docs/benchmarks.md.")
    var pollIdle = false

    func validate() throws {
        guard Subprocess.which("wrk") != nil else { throw ValidationError("wrk is not installed (Debian: apt-get install wrk).") }
        guard !levels.isEmpty, levels.allSatisfy({ $0 > 0 }) else { throw ValidationError("--connections takes positive numbers, such as 16,64.") }
        guard rounds > 0 else { throw ValidationError("--rounds must be at least 1.") }
    }

    var levels: [Int] { connections.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func run() async throws {
        let latencyHold = pollIdle ? try CPULatencyHold() : nil
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL, measure)
        withExtendedLifetime(latencyHold) {}
    }

    struct Measurement {
        var perSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        /// How long calls waited for a pooled connection (ConnectionPool.acquireWaits), p50 and p99 ms.
        var poolWait: (p50: Double, p99: Double)? = nil
    }

    /// `body`'s measurement with the pool's waits during it.
    private func withPoolWaits(_ pool: ConnectionPool, _ body: () async throws -> Measurement) async throws -> Measurement {
        pool.resetAcquireWaits()
        var measurement = try await body()
        let waits = pool.acquireWaits
        if let p50 = waits.milliseconds(atQuantile: 0.5), let p99 = waits.milliseconds(atQuantile: 0.99) { measurement.poolWait = (p50, p99) }
        return measurement
    }

    private func measure(_ server: BenchmarkServer) async throws {
        // The log handler `orbitctl serve` installs (at error level: no request lines).
        var logger = Logger(label: "orbit.api") { JSONLogHandler(label: $0) }
        logger.logLevel = .error
        let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: poolSize))
        let services = OrbitServices(pool: pool)
        let admin = try await services.users.create(email: "bench@example.com", displayName: "Bench").id
        let community = try await services.communities.create(name: "Bench club", as: admin).id
        var people = [admin]
        for index in 1..<10 {
            let user = try await services.users.create(email: "member\(index)@example.com", displayName: "Member \(index)").id
            _ = try await services.members.add(user, to: community, as: admin)
            people.append(user)
        }
        for index in 0..<posts {
            _ = try await services.feed.createPost(in: community, PostDraft(content: "Post \(index)"), as: people[index % people.count])
        }
        let members = people
        // Fresh statistics, as autovacuum would have them on a server that has been running.
        _ = try await pool.query("ANALYZE")
        print("Data: 1 community, 10 members, \(posts) posts. Pool: \(poolSize) connections. \(seconds) s per measurement.")
        // What one page costs to encode, for reading the feed row below.
        let page = try await services.feed.page(of: community, limit: 20, as: admin)
        let encodeClock = ContinuousClock()
        let encodeStart = encodeClock.now
        var bytes = 0
        for _ in 0..<1000 { bytes = try APIJSON.encode(page).count }
        print("Encoding one feed page (20 posts, \(bytes) bytes of JSON): \(format((encodeClock.now - encodeStart).seconds * 1000, 0)) µs")

        var configuration = APIConfiguration()
        configuration.port = 0
        configuration.writeRateLimit = .unlimited
        configuration.authRateLimit = .unlimited
        let api = try OrbitAPI(
            services: services, configuration: configuration, tokens: try await AccessTokens(secret: AccessTokens.randomSecret()),
            appleVerifier: AppleJWKSVerifier(source: .json(#"{"keys": []}"#), bundleID: "bench")
        )
        let token = try await api.tokens.issue(for: admin, now: Date().addingTimeInterval(3600 - Double(api.tokens.lifetime.components.seconds)))
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        // The same page answered from memory, behind the same middleware: what HTTP itself costs.
        let fromMemoryPath = "bench/feed-page-from-memory"
        let app = api.makeApplication(
            logger: logger, benchmarkPage: BenchmarkPageRoute(path: fromMemoryPath, page: page), onRunning: { portContinuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))

        let directory = FileManager.default.temporaryDirectory.appending(path: "orbit-bench-http-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let expenseBody = try String(
            decoding: JSONSerialization.data(withJSONObject: [
                "description": "Pizza", "amount": 10_000, "currency": "USD",
                "split": ["method": "equal", "user_ids": people.map(\.description)],
            ]),
            as: UTF8.self
        )
        let escapedBody = expenseBody.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        let feedScript = directory.appending(path: "feed.lua")
        let expenseScript = directory.appending(path: "expense.lua")
        try #"wrk.headers["Authorization"] = "Bearer \#(token)""#.write(to: feedScript, atomically: true, encoding: .utf8)
        try """
        wrk.method = "POST"
        wrk.body = "\(escapedBody)"
        wrk.headers["Content-Type"] = "application/json"
        wrk.headers["Authorization"] = "Bearer \(token)"
        """.write(to: expenseScript, atomically: true, encoding: .utf8)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw ValidationError("the API did not start") }
            let base = "http://127.0.0.1:\(port)"
            var rows: [String] = []
            for level in levels {
                let ceiling = try await wrk("\(base)/healthz", connections: level)
                let fromMemory = try await wrk("\(base)/\(fromMemoryPath)", connections: level, script: feedScript)
                // In turns, so that both sides see the same machine (a checkpoint, a noisy
                // neighbour); the round with the median ratio is reported, every ratio printed.
                var feedRounds: [(http: Measurement, direct: Measurement)] = []
                // Not counted: a second of each first. Until then the pool opens connections,
                // and each new backend prepares the statements and compiles the policies'
                // functions on its first call (2 to 4 ms each), all inside the first HTTP round.
                _ = try await wrk("\(base)/communities/\(community)/posts?limit=20", connections: level, script: feedScript, seconds: 1)
                _ = try await direct(concurrency: level, seconds: 1) { _ = try await services.feed.page(of: community, limit: 20, as: admin) }
                for _ in 0..<rounds {
                    let http = try await withPoolWaits(pool) {
                        try await wrk("\(base)/communities/\(community)/posts?limit=20", connections: level, script: feedScript)
                    }
                    let called = try await withPoolWaits(pool) {
                        try await direct(concurrency: level) { _ = try await services.feed.page(of: community, limit: 20, as: admin) }
                    }
                    feedRounds.append((http, called))
                }
                feedRounds.sort { $0.http.perSecond / $0.direct.perSecond < $1.http.perSecond / $1.direct.perSecond }
                let (feedHTTP, feedDirect) = feedRounds[feedRounds.count / 2]
                print(
                    "Feed page, HTTP / direct, \(level) connections, by round (sorted): "
                        + feedRounds.map { format($0.http.perSecond / $0.direct.perSecond, 2) + "×" }.joined(separator: " "))
                // CPU per request on the whole machine (wrk, the server, PostgreSQL share it).
                let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
                let httpCost = cores * 1_000_000 / fromMemory.perSecond
                let directCost = cores * 1_000_000 / feedDirect.perSecond
                print(
                    "HTTP's own work per feed page (the page from memory, \(format(fromMemory.perSecond, 0))/s): \(format(httpCost, 0)) µs of CPU; "
                        + "the direct call (median round): \(format(directCost, 0)) µs. Simply added: \(format(directCost / (directCost + httpCost), 2))× "
                        + "of the direct call; measured: \(format(feedHTTP.perSecond / feedDirect.perSecond, 2))×.")
                let expenseHTTP = try await withPoolWaits(pool) {
                    try await wrk("\(base)/communities/\(community)/expenses", connections: level, script: expenseScript)
                }
                let expenseDirect = try await withPoolWaits(pool) {
                    try await direct(concurrency: level) {
                        _ = try await services.expenses.addExpense(
                            in: community, description: "Pizza", total: Money(minorUnits: 10000, currency: .usd), paidBy: admin,
                            split: .equal(members), as: admin)
                    }
                }
                func row(_ name: String, _ http: Measurement, _ direct: Measurement?) -> String {
                    let ratio = direct.map { format(http.perSecond / $0.perSecond, 2) + "×" } ?? "—"
                    let directCells =
                        direct.map { "\(format($0.perSecond, 0)) | \(format($0.p50Milliseconds, 1)) | \(format($0.p99Milliseconds, 1))" }
                        ?? "— | — | —"
                    let tail = direct.map { format(http.p99Milliseconds / $0.p99Milliseconds, 1) + "×" } ?? "—"
                    func waits(_ measurement: Measurement?) -> String {
                        measurement?.poolWait.map { "\(format($0.p50, 2)) / \(format($0.p99, 1))" } ?? "—"
                    }
                    return
                        "| \(name) | \(level) | \(format(http.perSecond, 0)) | \(format(http.p50Milliseconds, 1)) | \(format(http.p99Milliseconds, 1)) | \(directCells) | \(ratio) | \(tail) | \(waits(http)) | \(waits(direct)) | \(format(http.perSecond / ceiling.perSecond, 2))× |"
                }
                rows.append(row("GET /healthz", ceiling, nil))
                rows.append(row("GET feed page from memory (no database)", fromMemory, nil))
                rows.append(row("GET feed page (20 posts)", feedHTTP, feedDirect))
                rows.append(row("POST expense (10 splits)", expenseHTTP, expenseDirect))
                print(
                    "RESULT connections=\(level) healthz_rps=\(format(ceiling.perSecond, 0)) feed_from_memory_rps=\(format(fromMemory.perSecond, 0)) feed_rps=\(format(feedHTTP.perSecond, 0)) feed_direct=\(format(feedDirect.perSecond, 0)) expense_rps=\(format(expenseHTTP.perSecond, 0)) expense_direct=\(format(expenseDirect.perSecond, 0))"
                )
            }
            print("")
            print(
                "| operation | connections | HTTP req/s | HTTP p50 ms | HTTP p99 ms | direct ops/s | direct p50 ms | direct p99 ms | HTTP / direct | p99 HTTP / direct | pool wait p50 / p99 ms, HTTP | the same, direct | HTTP / healthz |"
            )
            print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            print("(pool wait: how long calls waited for one of the pool's \(poolSize) connections, ConnectionPool.acquireWaits; to within 19 %)")
            rows.forEach { print($0) }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// Runs wrk against `url` and reads its requests/s and 99th percentile latency.
    private func wrk(_ url: String, connections: Int, script: URL? = nil, seconds: Int? = nil) async throws -> Measurement {
        var arguments = ["-t", String(min(threads, connections)), "-c", String(connections), "-d", "\(seconds ?? self.seconds)s", "--latency"]
        if let script { arguments += ["-s", script.path] }
        let result = try await Subprocess.run(Subprocess.which("wrk") ?? "wrk", arguments + [url])
        guard result.succeeded else { throw ValidationError("wrk failed: \(result.output)") }
        let lines = result.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        if let errors = lines.first(where: { $0.hasPrefix("Non-2xx or 3xx responses:") }) {
            throw ValidationError("wrk got errors from \(url): \(errors)")
        }
        guard let rateLine = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
            let rate = Double(rateLine.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces)),
            let p50Line = lines.first(where: { $0.hasPrefix("50%") }),
            let p50 = Self.milliseconds(String(p50Line.dropFirst(3).trimmingCharacters(in: .whitespaces))),
            let p99Line = lines.first(where: { $0.hasPrefix("99%") }),
            let p99 = Self.milliseconds(String(p99Line.dropFirst(3).trimmingCharacters(in: .whitespaces)))
        else { throw ValidationError("unexpected wrk output: \(result.output)") }
        return Measurement(perSecond: rate, p50Milliseconds: p50, p99Milliseconds: p99)
    }

    /// wrk's latency ("812.00us", "3.41ms", "1.02s") in milliseconds.
    static func milliseconds(_ text: String) -> Double? {
        for (suffix, factor) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * factor }
        }
        return nil
    }

    /// `concurrency` tasks calling `operation` in a loop for the measurement's duration (or `seconds`).
    private func direct(concurrency: Int, seconds: Int? = nil, _ operation: @escaping @Sendable () async throws -> Void) async throws -> Measurement {
        let seconds = seconds ?? self.seconds
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds)
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var samples: [Double] = []
                    while clock.now < deadline {
                        let start = clock.now
                        try await operation()
                        samples.append((clock.now - start).seconds * 1000)
                    }
                    return samples
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }.sorted()
        }
        guard !latencies.isEmpty else { throw ValidationError("no calls completed") }
        return Measurement(
            perSecond: Double(latencies.count) / Double(seconds), p50Milliseconds: latencies[latencies.count / 2],
            p99Milliseconds: latencies[min(latencies.count - 1, latencies.count * 99 / 100)])
    }
}
