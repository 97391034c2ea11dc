import Foundation
import LocalPostgres

/// Throwaway clusters for test processes, under `$TMPDIR/orbitcove-tests/<pid>-<random>/`.
///
/// The owning process deletes its cluster when it exits; a process that crashed cannot, so each
/// new process first stops and deletes the clusters of processes that no longer run.
enum ThrowawayClusters {
    static var root: String {
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return (temporary as NSString).appendingPathComponent("orbitcove-tests")
    }

    static let ownDirectory = "\(root)/\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"

    static func start() async throws -> LocalCluster {
        let installation = try PostgresInstallation.locate()
        let account = try ServerAccount.current()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        // The server's account (postgres, when we are root) must be able to traverse it.
        chmod(root, 0o1777)
        await removeStale(installation: installation, account: account)
        try FileManager.default.createDirectory(atPath: ownDirectory, withIntermediateDirectories: true)
        chmod(ownDirectory, 0o755)
        let cluster = LocalCluster(
            dataDirectory: "\(ownDirectory)/data",
            settings: LocalCluster.throwawaySettings,
            installation: installation,
            account: account
        )
        try await cluster.prepare()
        try await cluster.start()
        return cluster
    }

    static func removeOwnDirectory() {
        try? FileManager.default.removeItem(atPath: ownDirectory)
    }

    /// Stops and deletes clusters whose owning process is gone.
    static func removeStale(installation: PostgresInstallation, account: ServerAccount) async {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for entry in entries {
            guard let pid = Int32(entry.prefix { $0.isNumber }), !isAlive(pid) else { continue }
            let directory = "\(root)/\(entry)"
            let cluster = LocalCluster(dataDirectory: "\(directory)/data", installation: installation, account: account)
            cluster.destroyBlocking()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
