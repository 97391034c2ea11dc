import Foundation

/// Where `orbitctl dev` keeps its cluster: `./.orbit/postgres`, or, when the server's account
/// cannot reach that folder (running as root inside `/root`, mode 700), a folder under
/// `/var/tmp/orbitcove-dev/` named after the project path. `./.orbit/postgres-location` then
/// records where it went, so every run finds the same cluster.
public struct DevClusterHome: Sendable {
    /// The data directory to use.
    public let dataDirectory: String
    /// True when the cluster lives outside `./.orbit` because the server could not reach it.
    public let isRelocated: Bool

    public static func resolve(projectDirectory: String, account: ServerAccount) async throws -> DevClusterHome {
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
