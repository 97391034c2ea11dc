import ArgumentParser
import Foundation
import LocalPostgres
import OrbitPostgres
import OrbitScaleData

/// `orbit-bench client`: OrbitPostgres against pgbench on the same SQL, in one run.
///
/// Workloads on one connection, as in the peer benchmarks (docs/benchmarks.md):
/// - W1 point select, unnamed statement (statement cache off, as behind pgbouncer);
/// - W2 the same through the prepared-statement cache;
/// - W3 write transaction: BEGIN, 1 parent + 10 child INSERTs, COMMIT (13 round trips);
/// - W4 the same transaction pipelined (1 round trip);
/// - W5 a select of many rows (timestamptz, bigint, uuid, integer), every value decoded: the
///   client's decoding cost; W5T the same SQL through the simple-query protocol, whose
///   results always arrive as text.
/// pgbench runs `-M prepared` on the same statements; with `--libpq-bench`/`--nio-bench` the
/// peers' binaries run in the same rounds. Prints the peers' `RESULT` lines and a summary.
struct ClientBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Benchmark the libpq client against pgbench (and optionally raw libpq and postgres-nio)."
    )

    @Option(help: "Server to use. Default: a throwaway local cluster listening on 127.0.0.1.")
    var databaseURL: String?

    @Option(help: "Point selects per W1/W2 run.")
    var selects = 20_000

    @Option(help: "Transactions per W3/W4 run.")
    var txns = 2_000

    @Option(help: "Interleaved rounds; the summary reports medians.")
    var rounds = 3

    @Option(help: "Seconds per pgbench run.")
    var pgbenchSeconds = 10

    @Option(help: "Selects per W5/W5T run.")
    var rowSelects = 300

    @Option(help: "Rows per W5/W5T select (at most the 100,000 rows of the table).")
    var rowsPerSelect = 1_000

    @Option(help: "Comma-separated workloads: w1,w2,w3,w4,w5,w5t.")
    var workloads = "w1,w2,w3,w4,w5,w5t"

    @Flag(help: "Hold /dev/cpu_dma_latency at 0 (root) so idle vCPUs poll instead of halting; see docs/benchmarks.md.")
    var pollIdle = false

    @Option(help: "Path of the peers' libpq-bench binary, to run in the same rounds.")
    var libpqBench: String?

    @Option(help: "Path of the peers' nio-bench binary, to run in the same rounds (needs TCP: the default cluster).")
    var nioBench: String?

    @Flag(help: "Do not run pgbench.")
    var skipPgbench = false

    func run() async throws {
        let latencyHold = pollIdle ? try CPULatencyHold() : nil
        let server = try await BenchmarkServer.start(databaseURL: databaseURL)
        do {
            try await measure(on: server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
        withExtendedLifetime(latencyHold) {}
    }

    private func measure(on server: BenchmarkServer) async throws {
        try await PostgresConnection.withConnection(server.configuration) { connection in
            try await connection.executeScript(BenchmarkSQL.schema)
            try await connection.executeScript(BenchmarkSQL.vacuum)
            try await connection.executeScript("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            try await connection.executeScript("SELECT pg_prewarm('items'), pg_prewarm('items_pkey')")
            let settings = try await connection.query(
                "SELECT current_setting('server_version') AS v, current_setting('fsync') AS f, current_setting('synchronous_commit') AS s, current_setting('shared_buffers') AS b"
            ).single()
            print("server: PostgreSQL \(try settings.decode("v", as: String.self)) via \(server.description)")
            print(
                "fsync=\(try settings.decode("f", as: String.self)) synchronous_commit=\(try settings.decode("s", as: String.self)) shared_buffers=\(try settings.decode("b", as: String.self))"
            )
        }
        print(
            "rounds=\(rounds) selects=\(selects) txns=\(txns) row-selects=\(rowSelects)×\(rowsPerSelect) pgbench -T \(pgbenchSeconds) poll-idle=\(pollIdle) cores=\(ProcessInfo.processInfo.activeProcessorCount)"
        )
        let chosen = Set(workloads.lowercased().split(separator: ",").map(String.init))
        let pgbench = skipPgbench ? nil : try PgbenchRunner(server: server, seconds: pgbenchSeconds)
        var results = Results()

        for round in 1...rounds {
            print("round \(round)/\(rounds)")
            for workload in ["w1", "w2", "w3", "w4", "w5", "w5t"] where chosen.contains(workload) {
                try await prepareRun(server)
                let result = try await runOrbitcove(workload, server: server)
                result.printLine()
                results.add(result)
            }
            if let libpqBench {
                try await prepareRun(server)
                for result in try await runPeer(libpqBench, arguments: ["--conninfo", server.peerConninfo, "--workloads", "w1,w2,w3,w4"]) {
                    result.printLine()
                    results.add(result)
                }
            }
            if let nioBench, let tcp = server.tcp {
                try await prepareRun(server)
                let arguments = [
                    "--host", tcp.host, "--port", String(tcp.port), "--user", "postgres", "--db", server.databaseName, "--workloads", "w1,w2,w3",
                ]
                for result in try await runPeer(nioBench, arguments: arguments) {
                    result.printLine()
                    results.add(result)
                }
            }
            if let pgbench {
                for script in PgbenchRunner.Script.allCases {
                    try await prepareRun(server)
                    let result = try await pgbench.run(script)
                    result.printLine()
                    results.add(result)
                }
            }
        }
        results.printSummary(rowsPerSelect: rowsPerSelect)
    }

    /// Untimed before every run, as the peers do: empty write tables, flush dirty buffers.
    private func prepareRun(_ server: BenchmarkServer) async throws {
        try await PostgresConnection.withConnection(server.configuration) { connection in
            try await connection.executeScript("TRUNCATE txn, split; CHECKPOINT")
        }
    }

    private func runOrbitcove(_ workload: String, server: BenchmarkServer) async throws -> WorkloadResult {
        var configuration = server.configuration
        // W1 is the unnamed-statement path (no cache), W2.. use the prepared-statement cache.
        configuration.statementCacheCapacity = workload == "w1" ? 0 : 256
        return try await PostgresConnection.withConnection(configuration) { connection in
            var random = SplitMix64(seed: 42)
            // Untimed warm-up of the same statement shape.
            _ = try await pointSelects(connection, count: 1_000, random: &random)
            if workload.hasPrefix("w5") { _ = try await selectRows(connection, count: 20, text: workload == "w5t") }
            random = SplitMix64(seed: 7)
            let count =
                switch workload {
                case "w1", "w2": selects
                case "w5", "w5t": rowSelects
                default: txns
                }
            let cpuBefore = cpuSeconds()
            let start = ContinuousClock.now
            var checksum: Int64 = 0
            switch workload {
            case "w1", "w2": checksum = try await pointSelects(connection, count: count, random: &random)
            case "w3": checksum = try await writeTransactions(connection, count: count, random: &random, pipelined: false)
            case "w5", "w5t": checksum = try await selectRows(connection, count: count, text: workload == "w5t")
            default: checksum = try await writeTransactions(connection, count: count, random: &random, pipelined: true)
            }
            let elapsed = ContinuousClock.now - start
            return WorkloadResult(
                client: "orbitcove",
                workload: workload.uppercased(),
                count: count,
                seconds: elapsed.seconds,
                cpuMicrosecondsPerOp: (cpuSeconds() - cpuBefore) * 1e6 / Double(count),
                checksum: checksum
            )
        }
    }

    private func pointSelects(_ connection: PostgresConnection, count: Int, random: inout SplitMix64) async throws -> Int64 {
        var checksum: Int64 = 0
        for _ in 0..<count {
            let id = Int(random.next() % 100_000) + 1
            let rows = try await connection.query(
                "SELECT id, community_id, name, amount, created_at FROM items WHERE id = \(id)"
            )
            for row in rows {
                let id = try row.decode(0, as: Int.self)
                _ = try row.decode(1, as: UUID?.self)
                let name = try row.decode(2, as: String?.self)
                let amount = try row.decode(3, as: Int32?.self)
                _ = try row.decode(4, as: Date?.self)
                checksum &+= Int64(id) &+ Int64(amount ?? 0) &+ Int64(name?.utf8.count ?? 0)
            }
        }
        return checksum
    }

    /// Selects `rowsPerSelect` rows and decodes every value; `text` sends the SQL with the
    /// simple-query protocol (`executeScript`), whose results are text, instead of `query`.
    private func selectRows(_ connection: PostgresConnection, count: Int, text: Bool) async throws -> Int64 {
        let sql = "SELECT created_at, id, community_id, amount FROM items WHERE id <= \(rowsPerSelect) ORDER BY id"
        var checksum: Int64 = 0
        for _ in 0..<count {
            let rows = try await text ? connection.executeScript(sql) : connection.query(PostgresQuery(unsafeSQL: sql))
            for row in rows {
                let createdAt = try row.decode(0, as: Date.self)
                let id = try row.decode(1, as: Int64.self)
                let communityID = try row.decode(2, as: UUID.self)
                let amount = try row.decode(3, as: Int32.self)
                checksum &+= Int64(createdAt.timeIntervalSince1970 * 1_000_000) &+ id &+ Int64(amount)
                checksum &+= Int64(communityID.uuid.15)
            }
        }
        return checksum
    }

    private func writeTransactions(
        _ connection: PostgresConnection,
        count: Int,
        random: inout SplitMix64,
        pipelined: Bool
    ) async throws -> Int64 {
        var checksum: Int64 = 0
        for _ in 0..<count {
            // UUIDs from the seeded generator, as the peers make them: Foundation's UUID() reads
            // the kernel's random source each time, which would be measured instead of the client.
            let transactionID = random.uuid()
            let amounts = (0..<10).map { _ in Int32(random.next() % 10_000) }
            let total = amounts.reduce(0, +)
            var inserts: [PostgresQuery] = [
                "INSERT INTO txn (id, community_id, total) VALUES (\(transactionID), \(random.uuid()), \(total))"
            ]
            for amount in amounts {
                inserts.append(
                    "INSERT INTO split (id, txn_id, user_id, amount) VALUES (\(random.uuid()), \(transactionID), \(random.uuid()), \(amount))")
            }
            if pipelined {
                _ = try await connection.pipeline(["BEGIN"] + inserts + ["COMMIT"])
            } else {
                try await connection.withTransaction { connection in
                    for insert in inserts { try await connection.query(insert) }
                }
            }
            checksum &+= Int64(total)
        }
        return checksum
    }

    private func runPeer(_ path: String, arguments: [String]) async throws -> [WorkloadResult] {
        let output = try await Subprocess.run(path, arguments + ["--selects", String(selects), "--txns", String(txns)])
        guard output.succeeded else {
            throw ValidationError("\(path) failed:\n\(output.output)")
        }
        return output.output.split(separator: "\n").compactMap { WorkloadResult(resultLine: String($0)) }
    }
}

/// One workload's measurement, printed in the peers' `RESULT` format.
struct WorkloadResult {
    var client: String
    var workload: String
    var count: Int
    var seconds: Double
    var cpuMicrosecondsPerOp: Double?
    var checksum: Int64 = 0

    var opsPerSecond: Double { Double(count) / seconds }

    func printLine() {
        var line = "RESULT client=\(client) workload=\(workload) n=\(count) secs=\(format(seconds, 4)) ops_per_sec=\(format(opsPerSecond, 1))"
        if let cpuMicrosecondsPerOp { line += " cpu_us_per_op=\(format(cpuMicrosecondsPerOp, 2))" }
        if client == "orbitcove" { line += " checksum=\(checksum)" }
        print(line)
    }

    /// Parses a peer's `RESULT client=… workload=… n=… secs=… ops_per_sec=… cpu_us_per_op=…` line.
    init?(resultLine line: String) {
        guard line.hasPrefix("RESULT ") else { return nil }
        var fields: [String: String] = [:]
        for part in line.split(separator: " ").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        guard let client = fields["client"], let workload = fields["workload"],
            let count = fields["n"].flatMap({ Int($0) }), let seconds = fields["secs"].flatMap({ Double($0) })
        else { return nil }
        self.init(
            client: client,
            workload: workload,
            count: count,
            seconds: seconds,
            cpuMicrosecondsPerOp: fields["cpu_us_per_op"].flatMap { Double($0) }
        )
    }

    init(client: String, workload: String, count: Int, seconds: Double, cpuMicrosecondsPerOp: Double?, checksum: Int64 = 0) {
        self.client = client
        self.workload = workload
        self.count = count
        self.seconds = seconds
        self.cpuMicrosecondsPerOp = cpuMicrosecondsPerOp
        self.checksum = checksum
    }
}

/// Medians per (client, workload) over the rounds, and the ratios the targets are stated in.
struct Results {
    private var samples: [String: [WorkloadResult]] = [:]
    private var order: [String] = []

    mutating func add(_ result: WorkloadResult) {
        let key = "\(result.client) \(result.workload)"
        if samples[key] == nil { order.append(key) }
        samples[key, default: []].append(result)
    }

    func median(_ client: String, _ workload: String) -> Double? {
        guard let values = samples["\(client) \(workload)"]?.map(\.opsPerSecond).sorted(), !values.isEmpty else { return nil }
        return values.count % 2 == 1 ? values[values.count / 2] : (values[values.count / 2 - 1] + values[values.count / 2]) / 2
    }

    func medianCPU(_ client: String, _ workload: String) -> Double? {
        guard let values = samples["\(client) \(workload)"]?.compactMap(\.cpuMicrosecondsPerOp).sorted(), !values.isEmpty else { return nil }
        return values[values.count / 2]
    }

    func printSummary(rowsPerSelect: Int) {
        print("\nsummary (medians)")
        print(
            "  " + "client workload".padding(toLength: 28, withPad: " ", startingAt: 0) + "ops/s".leftPadded(12) + "min".leftPadded(12)
                + "max".leftPadded(12) + "cpu µs/op".leftPadded(12))
        for key in order {
            guard let values = samples[key]?.map(\.opsPerSecond), let first = samples[key]?.first else { continue }
            let cpu = medianCPU(first.client, first.workload).map { format($0, 2) } ?? "-"
            print(
                "  " + key.padding(toLength: 28, withPad: " ", startingAt: 0)
                    + format(median(first.client, first.workload) ?? 0, 0).leftPadded(12)
                    + format(values.min() ?? 0, 0).leftPadded(12) + format(values.max() ?? 0, 0).leftPadded(12) + cpu.leftPadded(12))
        }
        print("\nratios (target in brackets)")
        ratio("W2 / pgbench -M prepared (W1 script)", median("orbitcove", "W2"), median("pgbench", "W1"), target: 0.8)
        ratio("W3 / pgbench -M prepared (W3 script)", median("orbitcove", "W3"), median("pgbench", "W3"), target: 0.9)
        ratio("W4 / W3", median("orbitcove", "W4"), median("orbitcove", "W3"), target: 1.4)
        ratio("W2 / postgres-nio W2", median("orbitcove", "W2"), median("postgres-nio", "W2") ?? median("nio", "W2"), target: 2.5)
        ratio("W1 / raw libpq W1", median("orbitcove", "W1"), median("libpq", "W1"), target: nil)
        ratio("W2 / raw libpq W2", median("orbitcove", "W2"), median("libpq", "W2"), target: nil)
        ratio("W3 / raw libpq W3", median("orbitcove", "W3"), median("libpq", "W3"), target: nil)
        ratio("W4 / raw libpq W4", median("orbitcove", "W4"), median("libpq", "W4"), target: nil)
        if let cpu = medianCPU("orbitcove", "W1") {
            print("  client CPU per W1 query: \(format(cpu, 2)) µs [≤ 15]" + (cpu <= 15 ? "" : "  MISSED"))
        }
        for workload in ["W5", "W5T"] {
            if let cpu = medianCPU("orbitcove", workload) {
                print("  client CPU per \(workload) row: \(format(cpu / Double(rowsPerSelect) * 1_000, 1)) ns")
            }
        }
    }

    private func ratio(_ label: String, _ numerator: Double?, _ denominator: Double?, target: Double?) {
        guard let numerator, let denominator, denominator > 0 else { return }
        let value = numerator / denominator
        var line = "  " + label.padding(toLength: 40, withPad: " ", startingAt: 0) + format(value, 2) + "×"
        if let target { line += " [≥ \(format(target, 1))]" + (value >= target ? "" : "  MISSED") }
        print(line)
    }
}

/// User + system CPU seconds of this process (all threads).
func cpuSeconds(children: Bool = false) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t((children ? RUSAGE_CHILDREN : RUSAGE_SELF).rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

func format(_ value: Double, _ decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Keeps `/dev/cpu_dma_latency` at 0 µs while alive: idle vCPUs poll instead of halting.
final class CPULatencyHold {
    private let descriptor: Int32

    init() throws {
        descriptor = open("/dev/cpu_dma_latency", O_WRONLY)
        guard descriptor >= 0 else {
            throw ValidationError("--poll-idle needs root and /dev/cpu_dma_latency: \(String(cString: strerror(errno)))")
        }
        var zero: Int32 = 0
        guard write(descriptor, &zero, 4) == 4 else {
            close(descriptor)
            throw ValidationError("could not write /dev/cpu_dma_latency: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }
}
