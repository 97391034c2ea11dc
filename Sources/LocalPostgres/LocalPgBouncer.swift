import Foundation

/// A pgbouncer in front of a local cluster, for tests: the pooler a real deployment puts between
/// its servers and PostgreSQL. It listens on 127.0.0.1 and passes any database name through to
/// the cluster (`* =`), with trust authentication.
package struct LocalPgBouncer: Sendable {
    package let directory: String
    package let port: Int
    package let poolMode: String
    let account: ServerAccount

    /// The pgbouncer program: on the `PATH` or where Debian puts it; nil when not installed.
    package static func locate() -> String? {
        Subprocess.which("pgbouncer") ?? ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts pgbouncer for `cluster` and waits until it accepts connections.
    /// - Parameters:
    ///   - poolMode: `transaction` or `session`.
    ///   - poolSize: server connections per database and user: 2 makes clients share them.
    ///   - directory: where its configuration, pid file and log go (created).
    package static func start(
        for cluster: LocalCluster, poolMode: String = "transaction", poolSize: Int = 2, directory: String
    ) async throws -> LocalPgBouncer {
        guard let program = locate() else { throw LocalPostgresError("pgbouncer is not installed (Debian: apt-get install pgbouncer).") }
        let account = cluster.account
        try account.makePrivateDirectory(directory)
        let port = try freePort()
        let configuration = """
            [databases]
            * = host=\(cluster.socketDirectory) port=\(cluster.port) user=\(cluster.superuser)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(directory)/users.txt
            pool_mode = \(poolMode)
            default_pool_size = \(poolSize)
            max_client_conn = 200
            pidfile = \(directory)/pgbouncer.pid
            logfile = \(directory)/pgbouncer.log
            """
        try write(configuration, to: "\(directory)/pgbouncer.ini", account: account)
        try write("\"\(cluster.superuser)\" \"\"\n", to: "\(directory)/users.txt", account: account)
        let started = try await account.run(program, ["-d", "\(directory)/pgbouncer.ini"])
        guard started.succeeded else { throw LocalPostgresError("pgbouncer did not start:\n\(started.output)") }
        let bouncer = LocalPgBouncer(directory: directory, port: port, poolMode: poolMode, account: account)
        let deadline = ContinuousClock.now + .seconds(20)
        while !accepts(port) {
            guard ContinuousClock.now < deadline else {
                let log = (try? String(contentsOfFile: "\(directory)/pgbouncer.log", encoding: .utf8)) ?? ""
                bouncer.stop()
                throw LocalPostgresError("pgbouncer did not accept connections on port \(port):\n\(log.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return bouncer
    }

    /// libpq parameters for `database` through pgbouncer.
    package func connectionParameters(database: String, user: String = "postgres") -> [(String, String)] {
        [("host", "127.0.0.1"), ("port", String(port)), ("user", user), ("dbname", database)]
    }

    /// A URL for `database` through pgbouncer, for other programs.
    package func url(database: String, user: String = "postgres") -> String {
        "postgresql://\(user)@127.0.0.1:\(port)/\(database)"
    }

    /// Stops pgbouncer (SIGINT: at once, closing its connections) and removes its directory.
    package func stop() {
        if let text = try? String(contentsOfFile: "\(directory)/pgbouncer.pid", encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGINT)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func write(_ text: String, to path: String, account: ServerAccount) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        if account.switchesUser { chown(path, account.uid, account.gid) }
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw LocalPostgresError("could not open a socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw LocalPostgresError("could not find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
