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
        // With the server's process id (a server of its own), its CPU is measured too.
        func serve(_ body: (AccessTokens, Int, Int32?) async throws -> Void) async throws {
            if let database {
                FileLimit.raise(needing: sockets + 1024)
                try await BenchmarkLiveServer.runProcess(database: database) { try await body($0, $1, $2) }
            } else {
                try await BenchmarkLiveServer.run(services, clients: sockets) { api, port in try await body(api.tokens, port, nil) }
            }
        }
        /// The server's CPU seconds (user space, kernel) per second at rest, and over the commits.
        var serverWork: (idlePerSecond: (Double, Double), busy: (Double, Double), seconds: Double)?
        try await serve { issuer, port, serverProcess in
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
                // The server's own CPU (a process of its own): at rest for 2 s (it reads the change
                // log every 10 ms), then over the commits.
                let idleStart = (clock.now, serverProcess.flatMap(ServerCPU.processSeconds))
                try await Task.sleep(for: .seconds(2))
                let busyStart = (clock.now, serverProcess.flatMap(ServerCPU.processSeconds))
                for index in 0..<commits {
                    _ = try await services.feed.createPost(in: community, PostDraft(content: "Post \(index)"), as: admin)
                    committed.append(clock.now)
                    try await Self.wait("message \(index + 1) on every socket", timeout: .seconds(60)) {
                        arrivals.sockets(withAtLeast: index + 2) == sockets
                    }
                    try await Task.sleep(for: .milliseconds(20))  // commits apart, so that no two fold into one message
                }
                if let process = serverProcess, let idle = idleStart.1, let busy = busyStart.1, let end = ServerCPU.processSeconds(process) {
                    let rest = (busyStart.0 - idleStart.0).seconds
                    serverWork = (
                        ((busy.user - idle.user) / rest, (busy.system - idle.system) / rest), (end.user - busy.user, end.system - busy.system),
                        (clock.now - busyStart.0).seconds
                    )
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
        if let serverWork {
            // What the commits cost the server beyond reading the log at rest: in user space (the
            // server's code) and in the kernel (a send per socket; on loopback the kernel also
            // delivers to the client within that send).
            let user = max(0, serverWork.busy.0 - serverWork.idlePerSecond.0 * serverWork.seconds)
            let system = max(0, serverWork.busy.1 - serverWork.idlePerSecond.1 * serverWork.seconds)
            let perSocket = (user + system) * 1e6 / Double(sockets * commits)
            let userPerSocket = user * 1e6 / Double(sockets * commits)
            print(
                "Server's own CPU (orbitctl serve, from /proc): \(format((user + system) * 1e3 / Double(commits), 2)) ms per commit, "
                    + "\(format(perSocket, 2)) µs per socket per commit, of which \(format(userPerSocket, 2)) µs in user space "
                    + "(at rest \(format((serverWork.idlePerSecond.0 + serverWork.idlePerSecond.1) * 1e3, 1)) ms/s, subtracted)")
            print(
                "RESULT workload=live_fanout sockets=\(sockets) server_cpu_us_per_socket_per_commit=\(format(perSocket, 2)) user_space_us=\(format(userPerSocket, 2))"
            )
        } else {
            print("(the server's own CPU is measured with --separate-server only: in this process it is shared with the clients)")
        }
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
