import OrbitCore
import OrbitPostgres
import OrbitScaleData
import OrbitTestSupport
import Testing

/// Issue 20's randomized proof, a few rounds of it (`orbit-bench sync` runs many).
@Suite("Sync under concurrent writers")
struct SyncSoakTests {
    @Test(
        "writers with overlapping transactions of random length, a follower pulling all along: its copy equals a fresh sync",
        arguments: [1, 2, 3] as [UInt64])
    func followerConverges(seed: UInt64) async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 4)
            do {
                let report = try await SyncSoak.round(
                    services: OrbitServices(pool: pool), configuration: database.configuration, writers: 3, transactions: 20, seed: seed)
                #expect(report.mismatches.isEmpty, "\(report): \(report.mismatches.prefix(5))")
                #expect(report.committed > 20 && report.changesPulled > 0 && report.entitiesCompared > 10, "\(report)")
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
        }
    }
}
