import Foundation

/// Where `orbitctl dev` keeps its cluster: `./.orbit/postgres`, or, when the server's account
/// cannot reach that folder (running as root inside `/root`, mode 700), a folder under
/// `/var/tmp/orbitcove-dev/` named after the project path. `./.orbit/postgres-location` then
/// records where it went, so every run finds the same cluster.
package struct DevClusterHome: Sendable {
    /// The data directory to use.
    package let dataDirectory: String
    /// True when the cluster lives outside `./.orbit` because the server could not reach it.
    package let isRelocated: Bool

    /// The data directory of the project's dev cluster if `orbitctl dev` ever created one;
    /// creates nothing.
    package static func existing(projectDirectory: String) -> String? {
        let orbitDirectory = (projectDirectory as NSString).appendingPathComponent(".orbit")
        let preferred = (orbitDirectory as NSString).appendingPathComponent("postgres")
        if FileManager.default.fileExists(atPath: "\(preferred)/PG_VERSION") { return preferred }
        let locationFile = (orbitDirectory as NSString).appendingPathComponent("postgres-location")
        guard let recorded = try? String(contentsOfFile: locationFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            !recorded.isEmpty, FileManager.default.fileExists(atPath: "\(recorded)/PG_VERSION")
        else { return nil }
        return recorded
    }

    /// How to reach the project's dev cluster while it runs: its socket directory and port, as
    /// its `postmaster.pid` records them; nil when it is not running.
    package static func runningEndpoint(projectDirectory: String) -> (socketDirectory: String, port: Int)? {
        guard let dataDirectory = existing(projectDirectory: projectDirectory),
            let pidFile = try? String(contentsOfFile: "\(dataDirectory)/postmaster.pid", encoding: .utf8)
        else { return nil }
        let lines = pidFile.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 5, let pid = Int32(lines[0]), kill(pid, 0) == 0 || errno == EPERM, let port = Int(lines[3]), !lines[4].isEmpty
        else { return nil }
        return (lines[4], port)
    }

    package static func resolve(projectDirectory: String, account: ServerAccount) async throws -> DevClusterHome {
        let orbitDirectory = (projectDirectory as NSString).appendingPathComponent(".orbit")
        try FileManager.default.createDirectory(atPath: orbitDirectory, withIntermediateDirectories: true)
        let preferred = (orbitDirectory as NSString).appendingPathComponent("postgres")
        let locationFile = (orbitDirectory as NSString).appendingPathComponent("postgres-location")

        if FileManager.default.fileExists(atPath: "\(preferred)/PG_VERSION") {
            return DevClusterHome(dataDirectory: preferred, isRelocated: false)
        }
        if let recorded = try? String(contentsOfFile: locationFile, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), !recorded.isEmpty
        {
            return DevClusterHome(dataDirectory: recorded, isRelocated: true)
        }
        let reachable = await account.canReach(orbitDirectory)
        if reachable {
            return DevClusterHome(dataDirectory: preferred, isRelocated: false)
        }
        var hasher = FNV1a()
        hasher.combine((projectDirectory as NSString).standardizingPath)
        let home = "/var/tmp/orbitcove-dev/\(String(hasher.value, radix: 16))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        chmod("/var/tmp/orbitcove-dev", 0o755)
        chmod(home, 0o755)
        let dataDirectory = "\(home)/postgres"
        try (dataDirectory + "\n").write(toFile: locationFile, atomically: true, encoding: .utf8)
        return DevClusterHome(dataDirectory: dataDirectory, isRelocated: true)
    }
}
