package import OrbitPostgres

/// One of a pool's connections, lent to a task that holds it until `release()`: for tests of
/// what other callers meet while every connection is busy.
package struct HeldConnection: Sendable {
    private let releasing: AsyncStream<Void>.Continuation
    private let holder: Task<Void, any Error>

    /// Returns once the connection is lent to the holder.
    package static func hold(_ pool: ConnectionPool) async -> HeldConnection {
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
        return HeldConnection(releasing: release.continuation, holder: holder)
    }

    /// Gives the connection back, and rethrows what holding it threw.
    package func release() async throws {
        releasing.yield()
        try await holder.value
    }
}
