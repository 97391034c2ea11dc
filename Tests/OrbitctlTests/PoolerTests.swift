import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// orbitctl itself through pgbouncer 1.18 in transaction mode (2 server connections shared by
/// every client), the way a fleet of servers reaches the primary. The test starts pgbouncer in
/// front of its own cluster; without pgbouncer installed the suite is skipped and says why.
@Suite(
    "orbitctl through pgbouncer in transaction mode",
    .enabled(if: pgBouncerUnavailable() == nil, "needs pgbouncer (scripts/ensure-deps.sh installs it) and the tests' own cluster")
)
struct PoolerTests {
    /// A day of a club, one orbitctl process per command, each with a pool of two connections.
    func session(_ cli: Orbitctl) async throws {
        _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
        _ = try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max")
        let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", "ada@example.com")["id"] as? String)
        let code = try #require(try await cli.json("invite", "create", "--community", community, "--as", "ada@example.com")["code"] as? String)
        _ = try await cli.json("invite", "redeem", code, "--as", "max@example.com")
        _ = try await cli.json("post", "create", "--community", community, "--content", "Practice moved", "--as", "ada@example.com")
        _ = try await cli.json(
            "event", "create", "--community", community, "--title", "Practice", "--starts-at", "2030-01-07T17:00:00Z",
            "--rrule", "FREQ=WEEKLY;BYDAY=MO", "--as", "ada@example.com")
        _ = try await cli.json(
            "expense", "add", "--community", community, "--description", "Balls", "--amount", "30.00", "--paid-by", "ada@example.com",
            "--split", "equal", "--as", "max@example.com")
        let balances = try await cli.jsonArray("balances", "show", "--community", community, "--as", "max@example.com")
        #expect(balances.count == 2)
        let dues = try #require(
            try await cli.json(
                "dues", "create", "--community", community, "--name", "Season", "--amount", "50", "--due-date", "2030-01-31",
                "--as", "ada@example.com")["id"] as? String)
        _ = try await cli.json("dues", "pay", dues, "--user", "max@example.com", "--amount", "20", "--as", "ada@example.com")
        let feed = try await cli.json("post", "list", "--community", community, "--as", "max@example.com")
        #expect((feed["items"] as? [Any])?.count == 1)
        let jobs = try await cli.run("jobs", "run")
        #expect(jobs.succeeded, "\(jobs.errors)")
        #expect(jobs.output.contains("balances: refreshed"), "\(jobs.output)")
    }

    @Test("every command works with --pooler transaction, and with ORBIT_POOLER=transaction")
    func explicitPooler() async throws {
        try await withTestDatabase { database in
            try await withPgBouncer { bouncer in
                let url = bouncer.url(database: database.name)
                try await session(Orbitctl(database: database, databaseURL: url, environment: ["ORBIT_POOLER": "transaction"]))
                // The flag works without the environment too.
                let cli = Orbitctl(database: database, databaseURL: url)
                let listed = try await cli.run("community", "list", "--pooler", "transaction", "--json")
                #expect(listed.succeeded, "\(listed.errors)")
            }
        }
    }

    @Test("without --pooler, orbitctl notices the pooler and falls back to unnamed statements by itself")
    func fallsBackByItself() async throws {
        try await withTestDatabase { database in
            try await withPgBouncer { bouncer in
                try await session(Orbitctl(database: database, databaseURL: bouncer.url(database: database.name)))
            }
        }
    }

    @Test("migrate refuses a transaction-mode pooler in one sentence")
    func migrateNeedsADirectConnection() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database, environment: ["ORBIT_POOLER": "transaction"])
            let result = try await cli.run("migrate")
            #expect(!result.succeeded)
            #expect(result.errors.contains("direct connection"), "\(result.errors)")
        }
    }

    @Test(
        "serve through pgbouncer answers concurrent requests of several users correctly, told of the pooler or not",
        arguments: [["--pooler", "transaction"], []]
    )
    func serveThroughPgBouncer(pooler: [String]) async throws {
        try await withTestDatabase { database in
            try await withPgBouncer { bouncer in
                let url = bouncer.url(database: database.name)
                let cli = Orbitctl(database: database, databaseURL: url, environment: ["ORBIT_POOLER": "transaction"])
                var communities: [String: String] = [:]
                for name in ["ada", "max", "zoe"] {
                    _ = try await cli.json("user", "create", "--email", "\(name)@example.com", "--name", name)
                    communities[name] = try #require(
                        try await cli.json("community", "create", "--name", "Club of \(name)", "--as", "\(name)@example.com")["id"] as? String)
                }
                let server = try await ServedOrbitctl.start(arguments: ["--dev-auth"] + pooler, databaseURL: url)
                defer { server.stop() }
                var tokens: [String: String] = [:]
                for name in communities.keys {
                    let (body, status) = try await server.request("POST", "/auth/dev", json: #"{"email": "\#(name)@example.com"}"#)
                    #expect(status == 200)
                    tokens[name] = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["access_token"] as? String)
                }
                let allTokens = tokens
                let allCommunities = communities
                let leaks = try await withThrowingTaskGroup(of: [String].self) { group in
                    for (name, token) in allTokens {
                        for _ in 0..<4 {
                            group.addTask {
                                var leaks: [String] = []
                                for round in 0..<15 {
                                    let (created, status) = try await server.request(
                                        "POST", "/communities/\(allCommunities[name] ?? "")/posts", json: #"{"content": "\#(name) \#(round)"}"#,
                                        token: token)
                                    if status != 201 { leaks.append("\(name): POST \(status) \(String(decoding: created, as: UTF8.self))") }
                                    let (listed, listStatus) = try await server.request("GET", "/communities", token: token)
                                    let items = (try JSONSerialization.jsonObject(with: listed) as? [String: Any])?["items"] as? [[String: Any]] ?? []
                                    if listStatus != 200 || items.compactMap({ $0["id"] as? String }) != [allCommunities[name] ?? ""] {
                                        leaks.append("\(name) sees \(items.compactMap { $0["name"] as? String })")
                                    }
                                }
                                return leaks
                            }
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0 += $1 }
                }
                #expect(leaks == [])
                let posts = try await database.withConnection { connection in
                    try await connection.query("SELECT count(*) FROM posts").single().decode(0, as: Int64.self)
                }
                #expect(posts == 3 * 4 * 15)
            }
        }
    }
}

/// `orbitctl serve` as a child process on a free port.
final class ServedOrbitctl: @unchecked Sendable {
    // @unchecked Sendable: `process` is only started in `start` and terminated in `stop`.
    let process: Process
    let baseURL: String

    static func start(arguments: [String], databaseURL: String) async throws -> ServedOrbitctl {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Orbitctl.path)
        process.arguments = ["serve", "--port", "0", "--no-jobs", "--database-url", databaseURL] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // "OrbitCove API listening on http://127.0.0.1:PORT", read on a Dispatch thread.
        let banner = await OrbitctlProcess.firstLine(of: output)
        guard let url = banner.split(separator: " ").last.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }), url.hasPrefix("http") else {
            process.terminate()
            throw LocalPostgresError("orbitctl serve did not start: \(banner)")
        }
        return ServedOrbitctl(process: process, baseURL: url)
    }

    init(process: Process, baseURL: String) {
        self.process = process
        self.baseURL = baseURL
    }

    func request(_ method: String, _ path: String, json: String? = nil, token: String? = nil) async throws -> (Data, Int) {
        var request = URLRequest(url: try #require(URL(string: baseURL + path)))
        request.httpMethod = method
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }
}
