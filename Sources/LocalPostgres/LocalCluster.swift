import Foundation

/// A PostgreSQL cluster in a directory of our own: created with `initdb`, started and stopped
/// with `pg_ctl`, reached through a Unix socket inside its directory (no TCP port to clash with
/// anything) unless a TCP port is asked for.
///
/// As root the server runs as the `postgres` system user, which must be able to reach the
/// directory: a directory under `/root` (mode 700) is not reachable; `prepare()` says so.
package struct LocalCluster: Sendable {
    /// The cluster's data directory (`PGDATA`).
    package let dataDirectory: String
    /// Where the server puts its socket; the data directory unless that path is too long.
    package let socketDirectory: String
    /// The port: part of the socket's file name, and the TCP port when `listenAddress` is set.
    package let port: Int
    /// A TCP address to listen on as well (`127.0.0.1`), or nil for the Unix socket only.
    package let listenAddress: String?
    /// Server settings written to the cluster's `orbit.conf` on every start.
    package let settings: [String: String]
    package let installation: PostgresInstallation
    package let account: ServerAccount
    /// The database superuser created by `initdb`.
    package let superuser = "postgres"

    /// Settings for a durable server (`orbitctl dev`): PostgreSQL's defaults.
    package static let durableSettings: [String: String] = [:]

    /// Settings for a throwaway server (tests): no fsync, more connections. Data is lost if the
    /// machine crashes, which is fine for a cluster deleted after the run.
    package static let throwawaySettings: [String: String] = [
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "max_connections": "300",
        "shared_buffers": "128MB",
        // Every test clones a database (CREATE DATABASE writes it to the WAL): no checkpoint
        // should interrupt a run because of that.
        "max_wal_size": "16GB",
        "checkpoint_timeout": "1h",
    ]

    package init(
        dataDirectory: String,
        port: Int = 5432,
        listenAddress: String? = nil,
        settings: [String: String] = LocalCluster.durableSettings,
        installation: PostgresInstallation,
        account: ServerAccount
    ) {
        let standardized = (dataDirectory as NSString).standardizingPath
        self.dataDirectory = standardized
        self.port = port
        self.listenAddress = listenAddress
        self.settings = settings
        self.installation = installation
        self.account = account
        // A Unix socket path holds at most 107 bytes; fall back to a short directory of its own.
        let socketFile = "\(standardized)/.s.PGSQL.\(port)"
        if socketFile.utf8.count <= 100 {
            self.socketDirectory = standardized
        } else {
            var hasher = FNV1a()
            hasher.combine(standardized)
            self.socketDirectory = "/tmp/orbitcove-socket-\(String(hasher.value, radix: 16))"
        }
    }

    /// libpq keyword/value pairs that reach this cluster as the superuser, for
    /// `PQconnectdbParams` (no conninfo string is assembled from them).
    package func connectionParameters(database: String = "postgres") -> [(String, String)] {
        [("host", socketDirectory), ("port", String(port)), ("user", superuser), ("dbname", database)]
    }

    /// The same as a URL, for people: `postgresql://postgres@/postgres?host=/path&port=5432`.
    package func url(database: String = "postgres") -> String {
        let host =
            socketDirectory.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["&", "=", "+", "#"])) ?? socketDirectory
        return "postgresql://\(superuser)@/\(database)?host=\(host)&port=\(port)"
    }

    /// Whether `initdb` has run here.
    package var isInitialized: Bool {
        // As root the directory is postgres's (mode 700), but root may look inside anyway.
        FileManager.default.fileExists(atPath: "\(dataDirectory)/PG_VERSION")
    }

    /// Whether a server is running on this data directory.
    package func isRunning() async -> Bool {
        guard isInitialized else { return false }
        let result = try? await account.run(installation.program("pg_ctl"), ["status", "-D", dataDirectory])
        return result?.status == 0
    }

    /// Creates the directories (owned by the server's account) and runs `initdb` if needed.
    /// - Throws: `LocalPostgresError` naming what failed, including when the server's account
    ///   cannot reach the directory.
    package func prepare() async throws {
        let parent = (dataDirectory as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: dataDirectory) {
            try account.makePrivateDirectory(dataDirectory)
        }
        guard await account.canUse(dataDirectory) else {
            throw LocalPostgresError(
                "the PostgreSQL server runs as the '\(account.name)' user, which cannot reach \(dataDirectory) "
                    + "(a parent directory is private, as /root is). Use a directory it can reach."
            )
        }
        if socketDirectory != dataDirectory {
            try account.makePrivateDirectory(socketDirectory)
        }
        guard !isInitialized else { return }
        let result = try await account.run(
            installation.program("initdb"),
            ["-D", dataDirectory, "-U", superuser, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]
        )
        guard result.succeeded else {
            throw LocalPostgresError("initdb failed for \(dataDirectory):\n\(result.output)")
        }
    }

    /// Makes this cluster, not yet initialized, a hot standby of `primary` (running): copies it
    /// with `pg_basebackup -R`, which also writes `standby.signal` and the connection to the
    /// primary, and streams its WAL from then on. Start it afterwards.
    package func makeStandby(of primary: LocalCluster) async throws {
        let parent = (dataDirectory as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try account.makePrivateDirectory(dataDirectory)
        if socketDirectory != dataDirectory { try account.makePrivateDirectory(socketDirectory) }
        let result = try await account.run(
            installation.program("pg_basebackup"),
            [
                "-D", dataDirectory, "-h", primary.socketDirectory, "-p", String(primary.port), "-U", primary.superuser,
                "-X", "stream", "-R", "-c", "fast", "--no-sync",
            ]
        )
        guard result.succeeded else {
            throw LocalPostgresError("pg_basebackup of \(primary.dataDirectory) into \(dataDirectory) failed:\n\(result.output)")
        }
        // The copy holds the primary's socket lock file and log (its socket lives in its data
        // directory): neither belongs to the standby.
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
        where entry.hasPrefix(".s.PGSQL.") || entry == "server.log" {
            try FileManager.default.removeItem(atPath: "\(dataDirectory)/\(entry)")
        }
    }

    /// Starts the server and waits until it accepts connections.
    package func start() async throws {
        try writeSettings()
        let result = try await account.run(
            installation.program("pg_ctl"),
            ["start", "-D", dataDirectory, "-l", logFile, "-w", "-t", "60", "-s"]
        )
        guard result.succeeded else {
            let log = (try? String(contentsOfFile: logFile, encoding: .utf8)).map { tail($0, lines: 15) } ?? ""
            throw LocalPostgresError("PostgreSQL did not start in \(dataDirectory):\n\(result.output)\(log)")
        }
    }

    /// How `stop` shuts the server down (`pg_ctl stop -m`).
    package enum StopMode: String, Sendable {
        /// Waits for clients to disconnect.
        case smart
        /// Disconnects clients and rolls back their transactions; the clean default.
        case fast
        /// Aborts at once; the next start runs crash recovery.
        case immediate
    }

    /// Stops the server, if it is running.
    package func stop(_ mode: StopMode = .fast) async throws {
        guard await isRunning() else { return }
        let result = try await account.run(
            installation.program("pg_ctl"),
            ["stop", "-D", dataDirectory, "-m", mode.rawValue, "-w", "-t", "60", "-s"]
        )
        guard result.succeeded else {
            throw LocalPostgresError("PostgreSQL did not stop in \(dataDirectory):\n\(result.output)")
        }
    }

    /// Restarts the server (`pg_ctl restart`), disconnecting every client.
    package func restart(_ mode: StopMode = .fast) async throws {
        try writeSettings()
        let result = try await account.run(
            installation.program("pg_ctl"),
            ["restart", "-D", dataDirectory, "-l", logFile, "-m", mode.rawValue, "-w", "-t", "60", "-s"]
        )
        guard result.succeeded else {
            throw LocalPostgresError("PostgreSQL did not restart in \(dataDirectory):\n\(result.output)")
        }
    }

    /// Stops the server and deletes the data directory.
    package func destroy() async throws {
        try await stop(.immediate)
        try? FileManager.default.removeItem(atPath: dataDirectory)
        if socketDirectory != dataDirectory { try? FileManager.default.removeItem(atPath: socketDirectory) }
    }

    /// Stops the server at once and deletes the data directory, without `async`: for `atexit`.
    package func destroyBlocking() {
        if FileManager.default.fileExists(atPath: "\(dataDirectory)/postmaster.pid") {
            let arguments = ["stop", "-D", dataDirectory, "-m", "immediate", "-w", "-t", "30", "-s"]
            if let runuser = account.runuser {
                _ = try? Subprocess.runBlocking(runuser, ["-u", account.name, "--", installation.program("pg_ctl")] + arguments)
            } else {
                _ = try? Subprocess.runBlocking(installation.program("pg_ctl"), arguments)
            }
        }
        try? FileManager.default.removeItem(atPath: dataDirectory)
        if socketDirectory != dataDirectory { try? FileManager.default.removeItem(atPath: socketDirectory) }
    }

    /// The server's log file.
    package var logFile: String { "\(dataDirectory)/server.log" }

    /// Writes `orbit.conf` and makes `postgresql.conf` include it (once).
    private func writeSettings() throws {
        var all = settings
        all["listen_addresses"] = listenAddress ?? ""
        all["port"] = String(port)
        all["unix_socket_directories"] = socketDirectory
        let text = all.keys.sorted().map { "\($0) = \(quote(all[$0] ?? ""))" }
            .joined(separator: "\n")
        let confPath = "\(dataDirectory)/orbit.conf"
        try ("# Written by OrbitCove on every start; edit the code, not this file.\n" + text + "\n")
            .write(toFile: confPath, atomically: true, encoding: .utf8)
        chmod(confPath, 0o644)
        let mainConf = "\(dataDirectory)/postgresql.conf"
        let current = try String(contentsOfFile: mainConf, encoding: .utf8)
        let include = "include_if_exists = 'orbit.conf'"
        if !current.contains(include) {
            try (current + "\n" + include + "\n").write(toFile: mainConf, atomically: false, encoding: .utf8)
        }
    }

    /// Quotes a value for postgresql.conf: `'…'` with `\` and `'` escaped.
    private func quote(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private func tail(_ text: String, lines: Int) -> String {
        "\n--- server log (last lines) ---\n" + text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}

/// A small stable hash for naming directories (Swift's Hasher is seeded per process).
struct FNV1a {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func combine(_ string: String) {
        for byte in string.utf8 {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
    }
}
