import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("A request that finds every pooled connection busy")
struct PoolExhaustionTests {
    @Test("waits out the pool's timeout, then fails as unavailable (503 with Retry-After: nothing was done), not as an internal error")
    func poolTimeoutIsUnavailable() async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1, acquireTimeout: .milliseconds(200))
            let services = OrbitServices(pool: pool)
            let cast = try await Cast.make(services)
            let held = await HeldConnection.hold(pool)
            let error = await #expect(throws: ServiceError.self) { try await services.communities.get(cast.community, as: cast.admin) }
            #expect(error?.code == .unavailable, "\(String(describing: error))")
            try await held.release()
            // The connection back, the same call is answered.
            #expect(try await services.communities.get(cast.community, as: cast.admin).id == cast.community)
            await pool.close()
        }
    }
}
