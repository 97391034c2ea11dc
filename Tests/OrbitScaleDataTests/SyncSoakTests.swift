import OrbitCore
import OrbitPostgres
import OrbitScaleData
import OrbitTestSupport
import Testing

/// Issues 20 and 38's randomized proof: 50 rounds here, in five groups of ten that run side by
/// side (`orbit-bench sync` runs 500).
@Suite("Sync under concurrent writers")
struct SyncSoakTests {
    static let roundsPerGroup = 10

    @Test(
        "writers with overlapping transactions, others held open, retention mid-window, renames, a member leaving and rejoining: every follower's copy equals a fresh sync",
        arguments: [1, 2, 3, 4, 5] as [UInt64])
    func followersConverge(group: UInt64) async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 4)
            do {
                var total = SyncSoak.Report()
                for round in 0..<UInt64(Self.roundsPerGroup) {
                    let report = try await SyncSoak.round(
                        services: OrbitServices(pool: pool), configuration: database.configuration, writers: 3, transactions: 8, held: 4,
                        seed: group * 1000 + round)
                    #expect(report.mismatches.isEmpty, "round \(round): \(report): \(report.mismatches.prefix(5))")
                    total.add(report)
                }
                #expect(total.committed > 40 && total.changesPulled > 0 && total.entitiesCompared > 100, "\(total)")
                #expect(total.compactions > 0 && total.resyncs > 0 && total.dropped > 0 && total.held > 0, "every scenario ran: \(total)")
                print("Sync soak group \(group): \(Self.roundsPerGroup) rounds: \(total)")
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
        }
    }
}
