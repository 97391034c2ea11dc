import Foundation
package import LocalPostgres
import Testing

/// Why pgbouncer tests cannot run here, or nil when they can: pgbouncer must be installed
/// (`scripts/ensure-deps.sh` installs it) and the tests must run on their own throwaway cluster.
package func pgBouncerUnavailable() -> String? {
    if LocalPgBouncer.locate() == nil { return "pgbouncer is not installed (apt-get install pgbouncer)" }
    if let url = ProcessInfo.processInfo.environment["ORBIT_TEST_DATABASE_URL"], !url.isEmpty {
        return "the tests use ORBIT_TEST_DATABASE_URL, not a cluster of their own to put pgbouncer in front of"
    }
    return nil
}

/// Gives `body` a pgbouncer (transaction mode, 2 server connections unless told otherwise) in
/// front of this test process's cluster, and stops it on every path.
@discardableResult
package func withPgBouncer<Result>(
    poolMode: String = "transaction", poolSize: Int = 2, _ body: (LocalPgBouncer) async throws -> Result
) async throws -> Result {
    let server = try await TestServer.shared()
    guard let cluster = server.cluster else { throw LocalPostgresError("pgbouncer needs the tests' own cluster") }
    let directory = "\(ThrowawayClusters.ownDirectory)/pgbouncer-\(UUID().uuidString.prefix(8).lowercased())"
    let bouncer = try await LocalPgBouncer.start(for: cluster, poolMode: poolMode, poolSize: poolSize, directory: directory)
    do {
        let result = try await body(bouncer)
        bouncer.stop()
        return result
    } catch {
        bouncer.stop()
        throw error
    }
}
