import Foundation
package import LocalPostgres
package import OrbitPostgres

/// A primary with the OrbitCove schema (database `orbitcove`) and a hot standby streaming from
/// it: real streaming replication, for the read-replica tests and benchmarks.
package struct ReplicatedClusters: Sendable {
    package let primary: LocalCluster
    package let standby: LocalCluster
    package static let database = "orbitcove"

    package var primaryConfiguration: PostgresConfiguration {
        PostgresConfiguration(parameters: primary.connectionParameters(database: Self.database).map { (keyword: $0.0, value: $0.1) })
    }

    package var standbyConfiguration: PostgresConfiguration {
        PostgresConfiguration(parameters: standby.connectionParameters(database: Self.database).map { (keyword: $0.0, value: $0.1) })
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    ///
    /// The primary's insert position can sit just past a page header, where no record ends
    /// until the next one is written; an idle primary writes one only every 15 s or so. So while
    /// waiting, the primary is nudged with an empty logical message, a WAL record of its own.
    package func waitForStandby(timeout: Duration = .seconds(30)) async throws {
        let primary = try await PostgresConnection.connect(primaryConfiguration)
        let standby = try await PostgresConnection.connect(standbyConfiguration)
        do {
            let target: String = try await primary.query("SELECT pg_current_wal_insert_lsn()::text AS lsn").single().decode("lsn")
            let deadline = ContinuousClock.now + timeout
            while try await !standby.query("SELECT pg_last_wal_replay_lsn() >= \(target)::pg_lsn AS done").single().decode("done", as: Bool.self) {
                guard ContinuousClock.now < deadline else { throw LocalPostgresError("the standby did not catch up with the primary in \(timeout)") }
                try await primary.query("SELECT pg_logical_emit_message(false, 'orbit.sync', '')")
                try await Task.sleep(for: .milliseconds(10))
            }
            await primary.close()
            await standby.close()
        } catch {
            await primary.close()
            await standby.close()
            throw error
        }
    }
}

/// Starts a primary (migrated) and a standby copied from it with `pg_basebackup -R`, gives them
/// to `body`, and stops and deletes both on every path.
@discardableResult
package func withReplicatedClusters<Result>(
    settings: [String: String] = LocalCluster.throwawaySettings, _ body: (ReplicatedClusters) async throws -> Result
) async throws -> Result {
    let installation = try PostgresInstallation.locate()
    let account = try ServerAccount.current()
    let root = "\(ThrowawayClusters.ownDirectory)/replication-\(UUID().uuidString.prefix(6).lowercased())"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    chmod(ThrowawayClusters.ownDirectory, 0o755)
    chmod(root, 0o755)
    let primary = LocalCluster(dataDirectory: "\(root)/primary", settings: settings, installation: installation, account: account)
    let standby = LocalCluster(dataDirectory: "\(root)/standby", settings: settings, installation: installation, account: account)
    defer {
        standby.destroyBlocking()
        primary.destroyBlocking()
        try? FileManager.default.removeItem(atPath: root)
    }
    try await primary.prepare()
    try await primary.start()
    try await PostgresConnection.withConnection(
        PostgresConfiguration(parameters: primary.connectionParameters().map { (keyword: $0.0, value: $0.1) })
    ) { connection in
        try await connection.executeScript("CREATE DATABASE \(ReplicatedClusters.database)")
    }
    let clusters = ReplicatedClusters(primary: primary, standby: standby)
    try await TemplateSetup.run(on: clusters.primaryConfiguration)
    try await standby.makeStandby(of: primary)
    try await standby.start()
    try await clusters.waitForStandby()
    return try await body(clusters)
}
