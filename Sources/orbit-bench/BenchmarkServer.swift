import ArgumentParser
import Foundation
import LocalPostgres
import Logging
import OrbitMigrations
import OrbitPostgres

/// The server a benchmark runs against: a throwaway local cluster listening on 127.0.0.1 (so
/// TCP clients such as postgres-nio can join), or the server named by `--database-url`.
struct BenchmarkServer: CustomStringConvertible {
    let configuration: PostgresConfiguration
    let databaseName: String
    let cluster: LocalCluster?
    let tcp: (host: String, port: Int)?
    /// Keyword/value conninfo for the peers' libpq-bench (our own values, single-quoted).
    let peerConninfo: String
    /// pgbench's connection arguments.
    let pgbenchArguments: [String]
    let directory: String?

    var description: String {
        if let tcp { return "TCP \(tcp.host):\(tcp.port), database \(databaseName)" }
        return "\(configuration)"
    }

    static func start(databaseURL: String?) async throws -> BenchmarkServer {
        if let databaseURL {
            let configuration = try PostgresConfiguration(connectionString: databaseURL)
            return BenchmarkServer(
                configuration: configuration,
                databaseName: "",
                cluster: nil,
                tcp: nil,
                peerConninfo: databaseURL,
                pgbenchArguments: [databaseURL],
                directory: nil
            )
        }
        let directory = "/tmp/orbitcove-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        let port = try freeTCPPort()
        var settings = LocalCluster.durableSettings
        // As in the peers' runs: the read tables stay in shared_buffers (this VM's page cache is
        // reclaimed aggressively); durability stays on (fsync, synchronous_commit).
        settings["shared_buffers"] = "256MB"
        let cluster = LocalCluster(
            dataDirectory: "\(directory)/data",
            port: port,
            listenAddress: "127.0.0.1",
            settings: settings,
            installation: try PostgresInstallation.locate(),
            account: try ServerAccount.current()
        )
        try await cluster.prepare()
        try await cluster.start()
        let tcpParameters = [("host", "127.0.0.1"), ("port", String(port)), ("user", "postgres"), ("dbname", "postgres")]
        try await PostgresConnection.withConnection(PostgresConfiguration(parameters: tcpParameters.map { (keyword: $0.0, value: $0.1) })) {
            connection in
            try await connection.executeScript("DROP DATABASE IF EXISTS bench")
            try await connection.executeScript("CREATE DATABASE bench")
        }
        let parameters = [("host", "127.0.0.1"), ("port", String(port)), ("user", "postgres"), ("dbname", "bench")]
        return BenchmarkServer(
            configuration: PostgresConfiguration(parameters: parameters.map { (keyword: $0.0, value: $0.1) }),
            databaseName: "bench",
            cluster: cluster,
            tcp: ("127.0.0.1", port),
            peerConninfo: "host=127.0.0.1 port=\(port) user=postgres dbname=bench",
            pgbenchArguments: ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "bench"],
            directory: directory
        )
    }

    func stop() async throws {
        guard let cluster else { return }
        try await cluster.destroy()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A TCP port nobody listens on right now (the kernel picks it).
    static func freeTCPPort() throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw ValidationError("could not open a socket") }
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) }
        }
        guard bound == 0 else { throw ValidationError("could not find a free TCP port") }
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Runs pgbench (`-M prepared`, 1 client) on the benchmark's scripts.
struct PgbenchRunner {
    enum Script: String, CaseIterable {
        case pointSelect = "W1"
        case writeTransaction = "W3"
    }

    let executable: String
    let server: BenchmarkServer
    let seconds: Int
    let scriptDirectory: String

    init(server: BenchmarkServer, seconds: Int) throws {
        let installation = try? PostgresInstallation.locate()
        let candidates = [installation?.program("pgbench"), Subprocess.which("pgbench")].compactMap { $0 }
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ValidationError("pgbench was not found (Debian: apt-get install postgresql-contrib); use --skip-pgbench to run without it.")
        }
        self.executable = executable
        self.server = server
        self.seconds = seconds
        scriptDirectory = NSTemporaryDirectory() + "orbit-pgbench-\(getpid())"
        try FileManager.default.createDirectory(atPath: scriptDirectory, withIntermediateDirectories: true)
        try BenchmarkSQL.pgbenchPointSelect.write(toFile: "\(scriptDirectory)/w1.sql", atomically: true, encoding: .utf8)
        try BenchmarkSQL.pgbenchWriteTransaction.write(toFile: "\(scriptDirectory)/w3.sql", atomically: true, encoding: .utf8)
    }

    func run(_ script: Script) async throws -> WorkloadResult {
        try await run(file: "\(scriptDirectory)/\(script == .pointSelect ? "w1" : "w3").sql", workload: script.rawValue)
    }

    /// Runs pgbench on a script of one's own (`-M prepared`, 1 client). `variables` are passed
    /// with `-D name=value`; the script refers to them as `:name`, which `-M prepared` sends as
    /// statement parameters, so no value is written into the SQL text.
    func run(sql: String, workload: String, variables: [String: String] = [:]) async throws -> WorkloadResult {
        let file = "\(scriptDirectory)/\(workload).sql"
        try sql.write(toFile: file, atomically: true, encoding: .utf8)
        return try await run(file: file, workload: workload, variables: variables)
    }

    private func run(file: String, workload: String, variables: [String: String] = [:]) async throws -> WorkloadResult {
        let cpuBefore = cpuSeconds(children: true)
        let defines = variables.sorted { $0.key < $1.key }.flatMap { ["-D", "\($0.key)=\($0.value)"] }
        let output = try await Subprocess.run(
            executable,
            ["-n", "-c", "1", "-j", "1", "-T", String(seconds), "-M", "prepared"] + defines + ["-f", file] + server.pgbenchArguments
        )
        guard output.succeeded else { throw ValidationError("pgbench failed:\n\(output.output)") }
        let cpu = cpuSeconds(children: true) - cpuBefore
        guard let tps = Self.number(after: "tps = ", in: output.output),
            let count = Self.number(after: "number of transactions actually processed: ", in: output.output)
        else { throw ValidationError("could not read pgbench's output:\n\(output.output)") }
        return WorkloadResult(
            client: "pgbench",
            workload: workload,
            count: Int(count),
            seconds: count / tps,
            cpuMicrosecondsPerOp: cpu * 1e6 / count
        )
    }

    private static func number(after prefix: String, in text: String) -> Double? {
        guard let range = text.range(of: prefix) else { return nil }
        return Double(text[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }
}

extension BenchmarkServer {
    /// Starts the server, migrates its database with the built-in schema (quietly), runs `body`,
    /// and stops the server on every path.
    static func withMigrated(databaseURL: String?, _ body: (BenchmarkServer) async throws -> Void) async throws {
        let server = try await start(databaseURL: databaseURL)
        do {
            var quiet = Logger(label: "orbit.migrate")
            quiet.logLevel = .warning
            try await Migrator(configuration: server.configuration, catalog: try MigrationCatalog.embedded(), logger: quiet).migrate()
            try await body(server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }
}

/// CPU seconds a local server has used: its postmaster, the processes it runs now (backends,
/// the WAL writer, the checkpointer), and those that have ended (their time is the postmaster's
/// children's once reaped). Read from /proc, for a server on this machine whose
/// `postmaster.pid` this process can read.
struct ServerCPU {
    let postmaster: Int32

    init?(dataDirectory: String) {
        guard let text = try? String(contentsOfFile: "\(dataDirectory)/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = Int32(first.trimmingCharacters(in: .whitespaces))
        else { return nil }
        postmaster = pid
    }

    /// The server's CPU seconds so far, or nil when /proc does not show the postmaster.
    func seconds() -> Double? {
        guard let own = Self.stat(postmaster) else { return nil }
        var ticks = own.ticks + own.childTicks
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), pid != postmaster, let process = Self.stat(pid), process.parent == postmaster else { continue }
            ticks += process.ticks
        }
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The CPU seconds process `pid` has used (all its threads), in user space and in the kernel,
    /// or nil when /proc does not show it.
    static func processSeconds(_ pid: Int32) -> (user: Double, system: Double)? {
        guard let times = stat(pid) else { return nil }
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (Double(times.user) / tick, Double(times.ticks - times.user) / tick)
    }

    /// A process's parent, its own user + system ticks, and its reaped children's.
    private static func stat(_ pid: Int32) -> (parent: Int32, ticks: Int, childTicks: Int, user: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        // After the command's ")": state, ppid, …; utime is the 14th field of the line, so the
        // 12th after it, then stime, cutime, cstime.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 14, let parent = Int32(fields[1]), let utime = Int(fields[11]), let stime = Int(fields[12]),
            let cutime = Int(fields[13]), let cstime = Int(fields[14])
        else { return nil }
        return (parent, utime + stime, cutime + cstime, utime)
    }
}

extension BenchmarkServer {
    /// The server's CPU meter, when the server runs on this machine (its data directory is
    /// readable here); nil otherwise, and the benchmark prints no server CPU.
    func cpuMeter() async -> ServerCPU? {
        if let directory, let meter = ServerCPU(dataDirectory: "\(directory)/data") { return meter }
        do {
            let rows = try await PostgresConnection.withConnection(configuration) { try await $0.query("SHOW data_directory") }
            guard let path = try rows.first?.decode(0, as: String.self) else { return nil }
            return ServerCPU(dataDirectory: path)
        } catch {
            print("(server CPU not measured: \(error))")
            return nil
        }
    }
}
