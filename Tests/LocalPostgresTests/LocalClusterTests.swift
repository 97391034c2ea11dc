import Foundation
import LocalPostgres
import OrbitPostgres
import Testing

@Suite("A local PostgreSQL cluster starts, stops and is reused")
struct LocalClusterTests {
    private func makeCluster() throws -> (LocalCluster, String) {
        let directory = "/tmp/orbitcove-tests/\(getpid())-cluster-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod("/tmp/orbitcove-tests", 0o1777)
        chmod(directory, 0o755)
        let cluster = LocalCluster(
            dataDirectory: "\(directory)/data",
            settings: LocalCluster.throwawaySettings,
            installation: try PostgresInstallation.locate(),
            account: try ServerAccount.current()
        )
        return (cluster, directory)
    }

    private func configuration(_ cluster: LocalCluster) -> PostgresConfiguration {
        PostgresConfiguration(parameters: cluster.connectionParameters().map { (keyword: $0.0, value: $0.1) })
    }

    @Test("initdb, start, stop, start again with the data kept, destroy")
    func lifecycle() async throws {
        let (cluster, directory) = try makeCluster()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(!cluster.isInitialized)
        try await cluster.prepare()
        #expect(cluster.isInitialized)
        #expect(await cluster.isRunning() == false)
        try await cluster.start()
        #expect(await cluster.isRunning())
        try await PostgresConnection.withConnection(configuration(cluster)) { connection in
            try await connection.query("CREATE TABLE kept (n int)")
            try await connection.query("INSERT INTO kept VALUES (42)")
            // Unix socket only: no TCP listener to clash with other servers.
            let listen = try await connection.query("SHOW listen_addresses").single().decode(0, as: String.self)
            #expect(listen == "")
        }
        try await cluster.stop()
        #expect(await cluster.isRunning() == false)
        await #expect(throws: PostgresError.self) {
            try await PostgresConnection.connect(configuration(cluster))
        }

        // Reuse: the same directory starts again without initdb, and the data is still there.
        try await cluster.prepare()
        try await cluster.start()
        let kept = try await PostgresConnection.withConnection(configuration(cluster)) { connection in
            try await connection.query("SELECT n FROM kept").single().decode("n", as: Int.self)
        }
        #expect(kept == 42)
        try await cluster.destroy()
        #expect(await cluster.isRunning() == false)
        #expect(!FileManager.default.fileExists(atPath: cluster.dataDirectory))
    }

    @Test("a restart disconnects clients and the server comes back")
    func restart() async throws {
        let (cluster, directory) = try makeCluster()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await cluster.prepare()
        try await cluster.start()
        let connection = try await PostgresConnection.connect(configuration(cluster))
        try await cluster.restart()
        await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
        #expect(connection.isClosed)
        await connection.close()
        let one = try await PostgresConnection.withConnection(configuration(cluster)) { connection in
            try await connection.query("SELECT 1 AS one").single().decode("one", as: Int.self)
        }
        #expect(one == 1)
        try await cluster.destroy()
    }

    @Test("a long data directory path gets a short socket directory of its own")
    func longSocketPath() throws {
        let long = "/tmp/" + String(repeating: "d", count: 120) + "/data"
        let cluster = LocalCluster(
            dataDirectory: long,
            installation: try PostgresInstallation.locate(),
            account: try ServerAccount.current()
        )
        #expect(cluster.socketDirectory != long)
        #expect(cluster.socketDirectory.utf8.count < 60)
    }

    @Test("as root, a project under a private directory gets a cluster home postgres can reach")
    func devHomeRelocation() async throws {
        let account = try ServerAccount.current()
        let project = "/tmp/orbitcove-tests/private-\(getpid())/project"
        try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
        chmod("/tmp/orbitcove-tests/private-\(getpid())", 0o700)
        defer { try? FileManager.default.removeItem(atPath: "/tmp/orbitcove-tests/private-\(getpid())") }
        let home = try await DevClusterHome.resolve(projectDirectory: project, account: account)
        if account.switchesUser {
            #expect(home.isRelocated)
            #expect(home.dataDirectory.hasPrefix("/var/tmp/orbitcove-dev/"))
            // The choice is remembered.
            let again = try await DevClusterHome.resolve(projectDirectory: project, account: account)
            #expect(again.dataDirectory == home.dataDirectory)
            try? FileManager.default.removeItem(atPath: (home.dataDirectory as NSString).deletingLastPathComponent)
        } else {
            #expect(!home.isRelocated)
            #expect(home.dataDirectory == "\(project)/.orbit/postgres")
        }
    }
}
