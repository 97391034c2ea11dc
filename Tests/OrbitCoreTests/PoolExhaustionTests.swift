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
            let held = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await pool.withConnection { _ in
                    held.continuation.yield()
                    var iterator = release.stream.makeAsyncIterator()
                    await iterator.next()
                }
            }
            var heldIterator = held.stream.makeAsyncIterator()
            await heldIterator.next()
            let error = await #expect(throws: ServiceError.self) { try await services.communities.get(cast.community, as: cast.admin) }
            #expect(error?.code == .unavailable, "\(String(describing: error))")
            release.continuation.yield()
            try await holder.value
            // The connection back, the same call is answered.
            #expect(try await services.communities.get(cast.community, as: cast.admin).id == cast.community)
            await pool.close()
        }
    }
}
