import ArgumentParser
import Foundation
import HummingbirdWSClient
import Logging
import OrbitAPI
import OrbitCore
import OrbitPostgres
import ServiceLifecycle
import Synchronization

/// `orbit-bench live`: live fan-out (issue 20). One community with `sockets` members, each with a
/// real WebSocket client on `GET /live` of a real server; then `commits` posts, one at a time:
/// the time from the post's commit (its service call returning) to the `changes` message on each
/// socket. The clients run in this process, on the same two cores as the server and PostgreSQL,
/// so the numbers include reading 1,000 sockets too.
struct LiveBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live", abstract: "Live fan-out: commit → message on many WebSockets (p50/p99).")

    @Option(help: "Server to use (a superuser). Default: a throwaway local cluster.") var databaseURL: String?
    @Option(help: "WebSocket clients, each a member of the community.") var sockets = 1000
    @Option(help: "Posts committed, one at a time, each awaited on every socket.") var commits = 30
    @Flag(
        help:
            "Serve from an orbitctl serve process of its own (built next to this binary), not this one: each process then holds one end of each socket (10,000 sockets need it where a process may open 20,000 files)."
    )
    var separateServer = false

    func run() async throws {
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL) { server in
            let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: 4))
            do {
                let conninfo =
                    server.configuration.connectionString
                    ?? server.configuration.parameters.map { "\($0.keyword)=\($0.value)" }.joined(separator: " ")
                try await measure(OrbitServices(pool: pool), database: separateServer ? conninfo : nil)
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
        }
    }

    /// When each socket received each message.
    final class Arrivals: Sendable {
        private let times: Mutex<[[ContinuousClock.Instant]]>
        private let opened = Atomic<Int>(0)

        init(sockets: Int) { times = Mutex(Array(repeating: [], count: sockets)) }

        func received(on socket: Int) { times.withLock { $0[socket].append(.now) } }
        func open() { opened.add(1, ordering: .relaxed) }
        var openCount: Int { opened.load(ordering: .relaxed) }
        /// How many sockets have had at least `count` messages.
        func sockets(withAtLeast count: Int) -> Int { times.withLock { $0.filter { $0.count >= count }.count } }
        var all: [[ContinuousClock.Instant]] { times.withLock { $0 } }
    }

    /// With `database`, the server is an `orbitctl serve` process over it.
    private func measure(_ services: OrbitServices, database: String?) async throws {
        let admin = try await services.users.create(email: "live-admin@example.com", displayName: "Live admin").id
        let community = try await services.communities.create(name: "Live", as: admin).id
        var members: [UserID] = []
        for index in 0..<sockets {
            let user = try await services.users.create(email: "live\(index)@example.com", displayName: "Live \(index)").id
            _ = try await services.members.add(user, to: community, as: admin)
            members.append(user)
        }
        let arrivals = Arrivals(sockets: sockets)
        let clock = ContinuousClock()
        var committed: [ContinuousClock.Instant] = []

        // The server: in this process, or a process of its own.
        func serve(_ body: (AccessTokens, Int) async throws -> Void) async throws {
            if let database {
                FileLimit.raise(needing: sockets + 1024)
                try await BenchmarkLiveServer.runProcess(database: database, body)
            } else {
                try await BenchmarkLiveServer.run(services, clients: sockets) { api, port in try await body(api.tokens, port) }
            }
        }
        try await serve { issuer, port in
            var tokens: [String] = []
            for member in members { tokens.append(try await issuer.issue(for: member)) }
            let opening = clock.now
            try await withThrowingTaskGroup(of: Void.self) { clients in
                for (index, token) in tokens.enumerated() {
                    clients.addTask {
                        try await BenchmarkLiveServer.listen(port: port, token: token, opened: arrivals.open) { text in
                            if text.contains(#""type":"changes""#) { arrivals.received(on: index) }
                        }
                    }
                }
                try await Self.wait("\(sockets) sockets to open", timeout: .seconds(120)) { arrivals.openCount == sockets }
                // The hub knows a socket once its handler has registered it: a first post, awaited
                // on every socket, makes sure all are in before the measured ones.
                _ = try await services.feed.createPost(in: community, PostDraft(content: "warm-up"), as: admin)
                try await Self.wait("the warm-up message on every socket", timeout: .seconds(60)) { arrivals.sockets(withAtLeast: 1) == sockets }
                print("\(sockets) sockets open and warmed up in \(String(format: "%.1f", (clock.now - opening).seconds)) s")
                for index in 0..<commits {
                    _ = try await services.feed.createPost(in: community, PostDraft(content: "Post \(index)"), as: admin)
                    committed.append(clock.now)
                    try await Self.wait("message \(index + 1) on every socket", timeout: .seconds(60)) {
                        arrivals.sockets(withAtLeast: index + 2) == sockets
                    }
                    try await Task.sleep(for: .milliseconds(20))  // commits apart, so that no two fold into one message
                }
                clients.cancelAll()
            }
        }

        // Latency of every (socket, commit), and of the last socket per commit.
        let times = arrivals.all
        var each: [Double] = []
        var last: [Double] = []
        for (index, commit) in committed.enumerated() {
            let latencies = times.map { ($0[index + 1] - commit).seconds * 1000 }
            each.append(contentsOf: latencies)
            last.append(latencies.max() ?? 0)
        }
        func percentile(_ values: [Double], _ p: Double) -> String {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return "—" }
            return String(format: "%.1f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
        }
        print("| Live fan-out, \(sockets) sockets, \(commits) commits | p50 | p99 | max |")
        print("|---|---|---|---|")
        print("| commit → message, every socket (ms) | \(percentile(each, 0.5)) | \(percentile(each, 0.99)) | \(percentile(each, 1)) |")
        print("| commit → message on the last socket (ms) | \(percentile(last, 0.5)) | \(percentile(last, 0.99)) | \(percentile(last, 1)) |")
    }

    /// Polls `condition` until it holds (or throws after `timeout`).
    static func wait(_ what: String, timeout: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ValidationError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
